"""Fuzzed run directories (issue 19): a run's header, events, calls, result or score, mutated,
read by `sandbox log`, `sandbox score` and `sandbox replay --export`: success or a one-line
error naming the file (exit 2), never a traceback."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.app.cli import main

from .harness import check_cli, mutated
from .test_fuzz_loaders import examples

SHORT = ["--model", "scripted/town", "--embedder", "hashing", "--background", "1",
         "--same-day", "--start", "16:00", "--quiet"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A finished STSS run (for score) and a single-room run (for log and replay)."""
    root = tmp_path_factory.mktemp("runs")
    stss, room = root / "stss", root / "room"
    assert main(["run", "public_spring_tasting", "--seed", "1", "--out", str(stss), *SHORT]) == 0
    assert main(["run", "single_room", "--model", "scripted/default", "--turns", "4",
                 "--quiet", "--out", str(room)]) == 0
    return {"stss": stss, "room": room}


FILES = ["header.json", "result.json", "events.jsonl", "calls.jsonl", "score.json"]


def broken_copy(source: Path, target: Path, name: str, data) -> Path | None:
    shutil.copytree(source, target)
    path = target / name
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    if name.endswith(".jsonl"):
        lines = text.splitlines()
        at = data.draw(st.integers(0, len(lines) - 1))
        how = data.draw(st.sampled_from(["mutate", "cut", "text", "drop"]))
        if how == "mutate":
            lines[at] = json.dumps(data.draw(mutated(json.loads(lines[at]))), ensure_ascii=False)
        elif how == "cut":
            lines[at] = lines[at][:data.draw(st.integers(0, len(lines[at])))]
        elif how == "text":
            lines[at] = data.draw(st.sampled_from(["", "null", "[]", "42", "\x00", "{", "é"]))
        else:
            del lines[at]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        how = data.draw(st.sampled_from(["mutate", "mutate", "cut", "delete"]))
        if how == "mutate":
            path.write_text(json.dumps(data.draw(mutated(json.loads(text))),
                                       ensure_ascii=False), encoding="utf-8")
        elif how == "cut":
            path.write_text(text[:data.draw(st.integers(0, len(text)))], encoding="utf-8")
        else:
            path.unlink()
    return path


@examples(25)
@given(st.sampled_from(FILES), st.data())
def test_log_and_score_read_a_broken_run(runs, name, data):
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        path = broken_copy(runs["stss"], run, name, data)
        names = [run / name, run] if path else [run]
        check_cli(["log", str(run)], names)
        check_cli(["score", str(run)], names)


@examples(12)  # each draws frames
@given(st.sampled_from(FILES[:4]), st.data())
def test_replay_exports_frames_of_a_broken_run(runs, name, data):
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        path = broken_copy(runs["room"], run, name, data)
        names = [run / name, run] if path else [run]
        check_cli(["replay", str(run), "--export", str(Path(tmp) / "frames")], names)
