"""`sandbox NAME --dry-run` of a single-room benchmark: the items the run would make (finished
ones skipped), their calls and tokens per role at the rate of the directory's finished items;
nothing written. Checked against the run it foretells."""

from __future__ import annotations

import json
import re

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


def test_a_fresh_directory_says_it_has_no_rate_yet(tmp_path, capsys):
    assert main(["refutebench", *ROLES, "--every", "9", "--out", str(tmp_path / "new"),
                 "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "9 dialogue(s) to run, 0 finished" in printed and "No rate for every role" in printed
    assert not (tmp_path / "new").exists()
