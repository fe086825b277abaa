"""Every option of every command, given the hostile values of its declared kind, is refused
as a user's mistake: exit 2, one line, no traceback, nothing written, inputs unchanged
(tests/fuzz/parser_walk.py walks them; bench/hostile.py prints its tally)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from parser_walk import PARSE, Case, Scratch, cases, run_case, walk  # noqa: E402

from sandbox.app.options import Count  # noqa: E402


def test_every_option_declares_a_kind_and_every_hostile_value_is_refused(tmp_path):
    outcomes, undeclared = walk(tmp_path)
    assert undeclared == []
    assert len(outcomes) > 1_500  # every command's options, plug-ins included
    failed = {o.case.name: o.why() for o in outcomes if not o.clean}
    assert failed == {}


def _toy_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toy")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("count")
    p.add_argument("--plain", type=int)  # declares no kind
    p.add_argument("--bounded", type=Count(1, 5))
    return parser


def test_an_option_without_a_declared_kind_is_reported(tmp_path):
    found, undeclared = cases(_toy_parser(), Scratch(tmp_path))
    assert undeclared == ["count --plain"]
    assert {c.value for c in found if c.option == "--bounded"} >= {"0", "-1", "6", ""}


def test_a_value_accepted_or_a_file_written_is_a_failure(tmp_path):
    s = Scratch(tmp_path)
    before = s.snapshot()
    case = Case("count", "--bounded", "6", ["count", "--bounded=6"], PARSE)

    def accepts(argv):
        return 0

    def writes(argv):
        (s.work / "left.txt").write_text("x", encoding="utf-8")
        print("sandbox count: error: argument --bounded: out of range", file=sys.stderr)
        return 2

    assert run_case(case, accepts, s, before).problems() == ["exit 0", "0 lines on stderr"]
    wrote = run_case(case, writes, s, before)
    assert wrote.problems() == ["changed deep/er/work/left.txt"]
    assert not (s.work / "left.txt").exists()  # put back for the next case
