"""The log tells the whole truth about memories: each one is logged when it enters the stream,
before anything uses it; its importance, scored later in a batch, is an event of its own."""

from __future__ import annotations

import gzip
import json

from sandbox.app.cli import main


def test_every_memory_an_event_refers_to_is_logged_before_it(tmp_path):
    out = tmp_path / "run"
    # The whole window (from 06:00 the day before): retrievals, reflections, batches scored.
    assert main(["run", "public_spring_tasting", "--model", "scripted/town", "--embedder",
                 "hashing", "--background", "2", "--seed", "1", "--quiet",
                 "--out", str(out)]) == 0
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    known: dict[str, set[int]] = {}
    referred = added = scored = 0
    for e in events:
        mine = known.setdefault(e.get("agent") or "", set())
        if e["kind"] == "memory_added":
            assert set(e["evidence"]) <= mine, e  # a thought's evidence came first
            mine.add(e["memory"])
            added += 1
        elif e["kind"] == "memory_scored":
            assert e["memory"] in mine, e
            scored += 1
        elif e["kind"] == "memory_retrieved":
            assert set(e["ids"]) <= mine, e  # nothing retrieved before it was logged
            referred += len(e["ids"])
    assert added and referred and scored  # batches were scored after their memories entered
    # Every memory an agent holds is in the log, the ones still waiting for a score included:
    # the streams as the last checkpoint saved them, against the events logged by then.
    last = sorted((out / "checkpoints").glob("*.json.gz"))[-1]
    saved = json.loads(gzip.decompress(last.read_bytes()))
    logged_by_then: dict[str, set[int]] = {}
    for e in events[:saved["events"]]:  # how many events it carries
        if e["kind"] == "memory_added":
            logged_by_then.setdefault(e["agent"], set()).add(e["memory"])
    for name, agent in saved["scenario"]["agents"].items():
        held = {node["id"] for node in agent["modules"]["memory"]["nodes"]}
        assert held and held == logged_by_then[name], name
