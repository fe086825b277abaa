"""The inputs that broke a loader once (found by the fuzz tests, kept in tests/data/bad/), each
through the command that reads it: a one-line error naming the file (exit 2), or for a run
directory the bad line reported and skipped; no traceback, no output directory left behind.
Every input refused is left byte for byte as it was (a damaged run keeps its score.json, a cache
that is not ours is not appended to). Add a file (a run: a folder) to the folder of its kind
when a new one turns up."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .harness import check_cli

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"

# kind (a folder of tests/data/bad) -> the arguments that read such a file (bench/hostile.py
# runs the same corpus through the same commands)
READERS = {kind: argv for kind, argv in
           json.loads((BAD / "readers.json").read_text(encoding="utf-8")).items()
           if kind != "_"}


def command(kind: str, given: Path, out: Path) -> list:
    """READERS[kind] filled in: one command's arguments (a run_dir: a list of them)."""
    def fill(argv):
        return [a.format(f=given, out=out) for a in argv]
    argv = READERS[kind]
    return [fill(a) for a in argv] if isinstance(argv[0], list) else fill(argv)


CASES = sorted(p for kind in READERS if (BAD / kind).is_dir() for p in (BAD / kind).iterdir())


def contents(given: Path) -> dict[str, bytes]:
    """Every file of `given` (a file, or a directory's files) with its bytes."""
    paths = [given] if given.is_file() else sorted(p for p in given.rglob("*") if p.is_file())
    return {str(p): p.read_bytes() for p in paths}


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_bad_input_found_once_fails_in_one_line(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    given = tmp_path / path.name
    (shutil.copytree if path.is_dir() else shutil.copy)(path, given)
    out = tmp_path / "out"
    before = contents(given)
    if path.parent.name == "run_dir":
        for args in command("run_dir", given, out):
            check_cli(args, [given])
        assert contents(given) == before
        return
    code, err = check_cli(command(path.parent.name, given, out), [given], out)
    assert code == 2, err
    assert contents(given) == before  # a refused input is left byte for byte as it was
