"""An endpoint that dies during a run (the loopback endpoint answering N chat calls, then
resetting every connection, as a crashed server does), killed at several points: after the
first call, half way, just before the last. The run is never "completed" and the command never
exits 0; it says how many calls never reached a model; and the same command run again with the
endpoint back finishes with exactly what an uninterrupted run gives (a town run resumed from
its last checkpoint before the death, or run again over itself; a PingPong directory resumed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import sandbox.llm
from sandbox.app.cli import main
from sandbox.llm import CallRecord
from sandbox.llm.loopback import Loopback
from sandbox.llm.retry import RetryingLLM

TOWN = ["run", "public_spring_tasting", "--seed", "1", "--model", "openai/town", "--embedder",
        "hashing", "--background", "2", "--same-day", "--start", "11:00", "--quiet"]
PINGPONG = ["pingpong", "--player", "openai/pingpong", "--interrogator", "openai/pingpong",
            "--judge", "openai/pingpong", "--every", "16"]
KILLED = {"after the first call": lambda n: 1, "half way": lambda n: n // 2,
          "before the last call": lambda n: n - 1}


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Retries of a dead connection in milliseconds, not the CLI's seconds (the same faults,
    counted the same way)."""
    monkeypatch.setattr(sandbox.llm, "RetryingLLM", lambda inner, max_attempts, initial_wait_s:
                        RetryingLLM(inner, max_attempts=2, initial_wait_s=0.001,
                                    max_wait_s=0.01))


def calls_of(run: Path) -> list[CallRecord]:
    return [CallRecord.model_validate_json(line)
            for line in (run / "calls.jsonl").read_text().splitlines()]


def score_of(run: Path) -> dict:
    return {k: v for k, v in json.loads((run / "score.json").read_text()).items() if k != "run"}


@pytest.fixture(scope="module")
def town_whole(tmp_path_factory) -> tuple[Path, int]:
    """An uninterrupted town run against the endpoint, and how many calls it answered."""
    out = tmp_path_factory.mktemp("town") / "whole"
    with Loopback("town") as server:
        assert main([*TOWN, "--base-url", server.url, "--out", str(out)]) == 0
        return out, server.answered


@pytest.mark.parametrize("resume", ["rerun", "--overwrite"])
@pytest.mark.parametrize("killed", KILLED)
def test_a_town_run_whose_endpoint_dies_is_not_completed_and_goes_on(town_whole, tmp_path,
                                                                     capsys, killed, resume):
    whole, answered = town_whole
    out = tmp_path / "run"
    with Loopback("town", die_after=KILLED[killed](answered)) as server:
        argv = [*TOWN, "--base-url", server.url, "--out", str(out)]
        assert main(argv) == 1
        said = capsys.readouterr().err  # the reason, on stderr
        result = json.loads((out / "result.json").read_text())
        assert result["status"] == "unavailable" and not (out / "score.json").exists()
        lost = [c for c in calls_of(out) if "unavailable" in c.faults]
        assert result["unavailable_calls"] == len(lost) >= 1
        assert len(calls_of(out)) - len(lost) <= server.answered  # the rest were answered
        [line] = [x for x in said.splitlines() if x.startswith("unavailable:")]
        assert re.search(rf"\b{len(lost)} of {result['llm_calls']} LLM calls never reached a "
                         "model", line), line
        server.dead, server.die_after = False, None  # the endpoint is back
        again = ["rerun", str(out)] if resume == "rerun" else [*argv, "--overwrite"]
        assert main(again) == 0
    assert json.loads((out / "result.json").read_text())["status"] == "completed"
    assert (out / "events.jsonl").read_bytes() == (whole / "events.jsonl").read_bytes()
    assert score_of(out) == score_of(whole)


def board_rows(directory: Path, tmp_path: Path) -> list[dict]:
    """The board's numbers (not its usage: a resumed directory also counts the calls of the
    run that was cut)."""
    board = tmp_path / f"{directory.name}-board.json"
    assert main(["pingpong-board", str(directory), "--json", str(board)]) == 0
    return [{k: row[k] for k in ("score", "ci", "criteria", "conversations", "scored")}
            for row in json.loads(board.read_text())["rows"]]


@pytest.fixture(scope="module")
def pingpong_whole(tmp_path_factory) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("pp") / "whole"
    with Loopback("pingpong") as server:
        assert main([*PINGPONG, "--base-url", server.url, "--out", str(out)]) == 0
        return out, server.answered


@pytest.mark.parametrize("killed", KILLED)
def test_a_pingpong_run_whose_endpoint_dies_names_its_items_and_resumes(pingpong_whole,
                                                                        tmp_path, capsys,
                                                                        killed):
    whole, answered = pingpong_whole
    out = tmp_path / "cut"
    with Loopback("pingpong", die_after=KILLED[killed](answered)) as server:
        argv = [*PINGPONG, "--base-url", server.url, "--out", str(out)]
        assert main(argv) == 1
        printed = capsys.readouterr()
        said, why = printed.out, printed.err  # why it failed: on stderr, where scripts look
        dead = sorted(run.name for run in (out / "runs").iterdir()
                      if json.loads((run / "result.json").read_text())["status"]
                      == "unavailable")
        judged_dead = sum("judgments made" in line and "unavailable" in line
                          for line in said.splitlines())
        assert dead or judged_dead  # a dialogue or a judgment that never reached a model
        for item in dead:  # each named, on the command's stderr and on the board
            assert f"unavailable: {item}: " in why
        assert "reached no model" in why
        capsys.readouterr()
        if dead:
            assert main(["pingpong-board", str(out)]) == 0
            board = capsys.readouterr().out
            assert all(item in board for item in dead)
        server.dead, server.die_after = False, None
        assert main(argv) == 0
    assert board_rows(out, tmp_path) == board_rows(whole, tmp_path)
    for run in (whole / "runs").iterdir():
        assert (out / "runs" / run.name / "events.jsonl").read_bytes() == \
            (run / "events.jsonl").read_bytes()
