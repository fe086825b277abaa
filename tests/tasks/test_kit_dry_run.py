"""`sandbox NAME --dry-run` of a single-room benchmark: the items the run would make (finished
ones skipped), their calls and tokens per role at the rate of the directory's finished items;
nothing written. Checked against the run it foretells."""

from __future__ import annotations

import json
import re

import pytest

from sandbox.app.cli import main

ROLES = ["--model", "scripted/refutebench", "--refuter", "scripted/refutebench", "--judge",
         "scripted/refutebench"]


def test_a_dry_run_foretells_the_calls_of_each_role(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["refutebench", *ROLES, "--every", "9", "--out", str(out)]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in (out / "runs").iterdir())
    assert main(["refutebench", *ROLES, "--every", "3", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "Dry run: 18 dialogue(s) to run, 9 finished and skipped; nothing was written." \
        in printed
    estimated = {m.group(1): int(m.group(2)) for m in
                 re.finditer(r"\| (model|refuter|judge) \| scripted/refutebench \| (\d+) \|",
                             printed)}
    assert sorted(p.name for p in (out / "runs").iterdir()) == before  # nothing run
    board = tmp_path / "b.json"
    assert main(["refutebench", *ROLES, "--every", "3", "--out", str(out)]) == 0
    assert main(["refutebench-board", str(out), "--json", str(board)]) == 0
    usage = next(iter(json.loads(board.read_text())["usage"].values()))
    # the scripted double makes the same calls for every dialogue: the estimate is exact
    for role, calls in estimated.items():
        assert calls == usage[role]["calls"] * 2 // 3, role


def rows(printed: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r"\| (\w+) \| scripted/\w+ \| (\d+) \|[^\n]*rates\.json", printed)}


@pytest.mark.parametrize("name, argv, noun", [
    ("refutebench", ROLES, "dialogues"),
    ("refutebench", [*ROLES, "--setting", "persistent"], "dialogues"),
    ("pingpong", ["--player", "scripted/pingpong", "--interrogator", "scripted/pingpong",
                  "--judge", "scripted/pingpong"], "conversations"),
])
def test_a_fresh_directory_is_estimated_from_the_kept_rates(name, argv, noun, tmp_path,
                                                            capsys):
    """Before its first item is finished, a directory's dry run has the rates kept with the
    benchmark for its options (bench/kit_rates.py, on the scripted models), said as such, and
    they foretell the run's calls per role; before, every role was 0 calls, 'no rate'."""
    out = tmp_path / "new"
    assert main([name, *argv, "--every", "4", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not out.exists() and "The kept rates were measured on scripted/" in printed
    estimated = rows(printed)
    assert estimated and all(calls > 0 for calls in estimated.values())
    board = tmp_path / "b.json"
    assert main([name, *argv, "--every", "4", "--out", str(out)]) == 0
    assert main([f"{name}-board", str(out), "--json", str(board)]) == 0
    usage = next(iter(json.loads(board.read_text())["usage"].values()))
    for role, calls in estimated.items():
        assert 0.75 <= calls / usage[role]["calls"] <= 1.33, (role, calls, usage[role])


def test_options_no_rate_was_kept_for_are_said(tmp_path, capsys):
    assert main(["refutebench", *ROLES, "--tasks", "mt", "--every", "9", "--out",
                 str(tmp_path / "new"), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "0 finished" in printed and "no rate kept for these options" in printed
    assert "| model |" not in printed and not (tmp_path / "new").exists()


def test_the_language_level_estimates_each_architecture_before_it_runs(tmp_path, capsys):
    """`sandbox stss-lang --dry-run`: per --arch, the conversations it would run and their
    calls per role (performer, partner, judge) from the rates kept with the benchmark, which
    the run then makes; before, stss-lang had no dry run at all."""
    argv = ["stss-lang", "--model", "scripted/stss-lang", "--judge", "scripted/stss-lang",
            "--every", "8", "--out", str(tmp_path / "lang")]
    assert main([*argv, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not (tmp_path / "lang").exists()
    sections = dict(zip(["ga", "ga_tdp"], printed.split("ga_tdp\n"), strict=True))
    estimated = {arch: {m.group(1): int(m.group(2)) for m in re.finditer(
        r"\| (performer|partner|judge) \| scripted/stss-lang \| (\d+) \|", text)}
        for arch, text in sections.items()}
    assert all(set(e) == {"performer", "partner", "judge"} for e in estimated.values())
    assert estimated["ga_tdp"]["performer"] > estimated["ga"]["performer"]  # TDP's plans
    board = tmp_path / "t3.json"
    assert main([*argv, "--json", str(board)]) == 0
    usage = json.loads(board.read_text())["usage"]
    for arch, roles in estimated.items():
        for role, calls in roles.items():
            made = usage[f"scripted/stss-lang {arch}"][role]["calls"]
            assert 0.75 <= calls / made <= 1.33, (arch, role, calls, made)
