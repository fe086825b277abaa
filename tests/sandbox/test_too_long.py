"""A request longer than the model takes (HTTP 400 context_length_exceeded, as llama-cpp-
python's server, vLLM and OpenAI answer it): the call's own failure, not the endpoint's. It is
not retried or re-asked, falls back to its default counted as `too_long` with the server's
reason in calls.jsonl, the run goes on (not `unavailable`) and warns once per model, and the
cache keeps the refusal, so running the command again asks nothing again."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.llm.dialects import server_reason, too_long
from sandbox.llm.loopback import Loopback

# The single room's chat turns grow from about 100 prompt words to 135: the later ones are
# over this window (with their 80 max_tokens).
CONTEXT = 195


def _calls(run_dir):
    return [json.loads(line) for line in (run_dir / "calls.jsonl").open()]


def test_a_call_too_long_for_the_model_falls_back_counted_and_is_not_asked_again(tmp_path,
                                                                                   capsys):
    out = tmp_path / "run"
    with Loopback("default", context_tokens=CONTEXT) as server:
        argv = ["run", "single_room", "--model", "openai/default", "--base-url", server.url,
                "--quiet", "--out", str(out)]
        assert main(argv) == 0
        calls = _calls(out)
        refused = [c for c in calls if "too_long" in c["faults"]]
        assert refused and len(refused) < len(calls)  # the short ones were answered
        for call in refused:
            assert call["faults"] == ["too_long", "fallback"] and call["retries"] == 0
            assert "maximum context length is 195 tokens" in call["refused"]
            assert call["refused"].startswith("400: ")
        stats = server.stats()
        assert stats["refused_too_long"] == len(refused)  # each asked once, never again
        result = json.loads((out / "result.json").read_text())
        assert result["status"] == "completed" and result["unavailable_calls"] == 0
        [warning] = [w for w in result["warnings"] if w.startswith("too long for")]
        assert f"openai/default: {len(refused)} call(s)" in warning
        assert f"from call {refused[0]['seq']} (chat.turn" in warning
        assert "maximum context length" in capsys.readouterr().out
        # The same command again: every answer and every refusal comes from the cache.
        server.reset_stats()
        assert main([*argv, "--overwrite"]) == 0
        assert server.stats()["requests"] == 0 and server.stats()["refused_too_long"] == 0
        again = _calls(out)
        assert [c["refused"] for c in again if "refused" in c] == \
            [c["refused"] for c in refused]
        assert all(c["cached"] for c in again)


@pytest.mark.parametrize("body, expected", [
    # vLLM
    ({"object": "error", "message": "This model's maximum context length is 2048 tokens. "
      "However, you requested 2100 tokens (2000 in the messages, 100 in the completion). "
      "Please reduce the length of the messages or completion.", "type": "BadRequestError",
      "code": 400}, True),
    # the llama.cpp server
    ({"error": {"code": 400, "message": "the request exceeds the available context size, try "
                "increasing it", "type": "exceed_context_size_error"}}, True),
    # OpenAI's code alone
    ({"error": {"message": "Too many tokens.", "code": "context_length_exceeded"}}, True),
    # another invalid request stays what it was
    ({"error": {"message": "temperature: Input should be less than or equal to 2"}}, False),
])
def test_servers_say_too_long_in_their_own_words(body, expected):
    assert too_long(body, server_reason(body)) is expected


@pytest.mark.model
def test_the_embedded_model_says_too_long_as_an_endpoint_does(tmp_path, embedded_weights):
    """llama-cpp-python refuses a prompt as long as its context window with a ValueError: the
    embedded model's call falls back counted `too_long` with that reason, never a traceback;
    the short call beside it is answered, and the refusal is cached like an endpoint's."""
    from pydantic import BaseModel

    from sandbox.llm import LLMRequest, LLMSettings, Message, make_llm
    from sandbox.llm.local import LocalBackend

    class Reply(BaseModel):
        text: str

    # (llama.cpp takes no window under 256 tokens)
    backend = LocalBackend(n_ctx=256, n_threads=1, prefix_mb=0, weights=embedded_weights,
                           lanes=1)
    settings = LLMSettings(model="local/smollm2-135m", cache_path=tmp_path / "cache.jsonl")

    def ask(words: int):
        return make_llm(settings, backend=backend).complete(LLMRequest(
            messages=[Message(role="user", content="Say hello. " + "word " * words)],
            schema=Reply, fallback=Reply(text="..."), max_tokens=8, seed=1, tag="test"))

    refused = ask(300)
    assert refused.faults == ["too_long", "fallback"] and refused.parsed == Reply(text="...")
    assert "exceed context window of 256" in refused.refused
    assert refused.refused.startswith("local/smollm2-135m: ")
    assert "too_long" not in ask(5).faults  # the model itself is fine
    again = ask(300)  # from the cache: nothing asked of the model
    assert again.cached and again.refused == refused.refused
