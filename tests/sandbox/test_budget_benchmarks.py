"""`--max-calls` and `--episode-max-calls` on every benchmark command (scripted models): the
cap stops the command cleanly (exit 1, one line per item it stopped, no more calls than the cap,
judges included), and the same command without the cap goes on from the cache to the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS

SIMUL = "scripted/simulbench"
COMMANDS = {
    "pingpong": ["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "32"],
    "refutebench": ["refutebench", "--model", "scripted/refutebench", "--refuter",
                    "scripted/refutebench", "--judge", "scripted/refutebench", "--every", "40"],
    "simulbench-collect": ["simulbench-collect", "--user", SIMUL, "--simulator", SIMUL,
                           "--judge", SIMUL, "--every", "60"],
    "simulbench": ["simulbench", "--simulator", SIMUL, "--judge", SIMUL],
    "stss-lang": ["stss-lang", "--arch", "ga", "--model", "scripted/stss-lang", "--judge",
                  "scripted/stss-lang", "--every", "67"],
}


@pytest.fixture
def argv_of(tmp_path, monkeypatch):
    """The command line of a benchmark command, its inputs made where it needs any."""
    from tasks.simulbench import Collected, Message, extract, load_tasks, write_scripts
    from tasks.stss_lang.scripted import stss_lang_backend

    monkeypatch.setitem(SCRIPTS, "stss-lang", stss_lang_backend)
    task = load_tasks()[0]
    messages = [Message(role=role, content=f"{role} {k}") for k in range(4)
                for role in ("user", "assistant")]
    scripts = write_scripts(extract([Collected(task=task, index=0, messages=messages,
                                               challenging_turn=2)]),
                            tmp_path / "scripts.jsonl")

    def argv(command: str) -> list[str]:
        extra = ["--scripts", str(scripts)] if command == "simulbench" else []
        return [*COMMANDS[command], *extra, "--out", str(tmp_path / command)]

    return argv


def calls_made(out: Path) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in out.rglob("calls.jsonl"))


def statuses(out: Path) -> list[str]:
    return sorted(json.loads(p.read_text())["status"] for p in out.rglob("result.json"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_max_calls_stops_the_command_cleanly_and_the_same_command_goes_on(command, argv_of,
                                                                          tmp_path, capsys):
    argv = argv_of(command)
    out = tmp_path / command
    assert main([*argv, "--max-calls", "3"]) == 1
    said = capsys.readouterr()
    assert "stopped by a budget; run the same command with a higher cap" in said.err
    assert [line for line in said.err.splitlines() if line.startswith("budget: ")]
    assert 0 < calls_made(out) <= 3  # judges' calls count too
    assert "completed" not in statuses(out) or "budget" in statuses(out) or \
        "not started" in said.err
    assert main(argv) == 0  # no cap: the rest, the answers so far from the cache
    assert set(statuses(out)) == {"completed"}


def test_an_item_cap_stops_each_item_and_the_others_go_on(argv_of, tmp_path, capsys):
    argv = argv_of("pingpong")
    out = tmp_path / "pingpong"
    assert main([*argv, "--episode-max-calls", "2"]) == 1
    printed = capsys.readouterr().err  # why each item stopped: where scripts look
    assert statuses(out) == ["budget"] * 3  # every item stopped at its own cap
    for run_dir in (out / "runs").iterdir():
        assert len((run_dir / "calls.jsonl").read_text().splitlines()) <= 2
    assert len([line for line in printed.splitlines()
                if line.startswith("budget: ") and "item's budget of 2 calls" in line]) == 3
    assert main(argv) == 0 and statuses(out) == ["completed"] * 3


def test_a_runs_cap_is_refused_with_ray_workers(argv_of, capsys):
    assert main([*argv_of("pingpong"), "--max-calls", "5", "--executor", "ray"]) == 2
    assert "--episode-max-calls" in capsys.readouterr().err
