"""The inputs that broke a loader once (found by the fuzz tests, kept in tests/data/bad/), each
through the command that reads it: a one-line error naming the file (exit 2), or for a run
directory the bad line reported and skipped; no traceback, no output directory left behind.
Add a file (a run: a folder) to the folder of its kind when a new one turns up."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .harness import check_cli

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
NOPE = "scripted/nope"

# kind (a folder of tests/data/bad) -> the command that reads such a file, given it and an
# output directory
COMMANDS = {
    "world": lambda f, out: ["world", str(f)],
    "template": lambda f, out: ["run", str(f), "--model", NOPE, "--out", str(out)],
    "town_day": lambda f, out: ["run", "town_day", "--config", str(f), "--model", NOPE,
                                "--out", str(out)],
    "simulbench_tasks": lambda f, out: ["simulbench-collect", "--tasks", str(f), "--user", NOPE,
                                        "--simulator", NOPE, "--judge", NOPE, "--out",
                                        str(out)],
    "simulbench_scripts": lambda f, out: ["simulbench", "--scripts", str(f), "--simulator",
                                          NOPE, "--judge", NOPE, "--out", str(out)],
    "pingpong_settings": lambda f, out: ["pingpong", "--settings", str(f), "--player", NOPE,
                                         "--interrogator", NOPE, "--judge", NOPE, "--out",
                                         str(out)],
    "refutebench_items": lambda f, out: ["refutebench", "--items", str(f), "--model", NOPE,
                                         "--refuter", NOPE, "--judge", NOPE, "--out", str(out)],
    "stss_lang_set": lambda f, out: ["stss-lang", str(f), "--model", NOPE, "--judge", NOPE,
                                     "--out", str(out)],
    # a run directory: read by log, score and replay (a bad line is reported and skipped)
    "run_dir": lambda f, out: [["log", str(f)], ["score", str(f)],
                               ["replay", str(f), "--export", str(out)]],
}
CASES = sorted(p for kind in COMMANDS if (BAD / kind).is_dir() for p in (BAD / kind).iterdir())


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_bad_input_found_once_fails_in_one_line(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    given = tmp_path / path.name
    (shutil.copytree if path.is_dir() else shutil.copy)(path, given)
    out = tmp_path / "out"
    if path.parent.name == "run_dir":
        for args in COMMANDS["run_dir"](given, out):
            check_cli(args, [given])
        return
    code, err = check_cli(COMMANDS[path.parent.name](given, out), [given], out)
    assert code == 2, err
