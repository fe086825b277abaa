"""Every answer a server gave is paid for: an unusable answer (malformed, cut at max_tokens, off
the schema, empty) asked again counts its tokens too, and calls.jsonl adds up to the server's
own count of the requests it answered and the tokens its usage reported."""

from __future__ import annotations

import json

from sandbox.app.cli import main
from sandbox.llm.loopback import Loopback

ANSWERED_BADLY = ("malformed", "truncated", "off_schema", "empty")  # each a 200 with usage


def test_calls_jsonl_holds_every_answer_the_server_gave_and_its_tokens(tmp_path, capsys):
    out = tmp_path / "run"
    with Loopback("town", fault_rate=0.3, faults=ANSWERED_BADLY, seed=3) as server:
        assert main(["run", "public_spring_tasting", "--background", "2", "--same-day",
                     "--start", "15:00", "--until", "17:10", "--seed", "1", "--embedder",
                     "hashing", "--quiet", "--model", "openai/town", "--base-url", server.url,
                     "--out", str(out)]) == 0
        stats = server.stats()
    calls = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    asked_again = [c for c in calls if c.get("attempts", 1) > 1]
    assert asked_again, "the faults drawn must make some call ask again"
    assert sum(c.get("attempts", 1) for c in calls) == stats["requests"]
    assert sum(c["prompt_tokens"] for c in calls) == stats["prompt_tokens"]
    assert sum(c["completion_tokens"] for c in calls) == stats["completion_tokens"]
    # `sandbox log` counts them the same way: every answer, every token.
    capsys.readouterr()
    assert main(["log", str(out), "--json"]) == 0
    by_model = json.loads(capsys.readouterr().out)["llm_calls_by_model"]
    assert sum(row["answers"] for row in by_model.values()) == stats["requests"]
    assert sum(row["completion_tokens"] for row in by_model.values()) == \
        stats["completion_tokens"]
