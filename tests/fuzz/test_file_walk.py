"""Every kind of file a command reads, given every hostile shape (empty, over its bound, a
FIFO, a device, a directory, not UTF-8, the wrong type, NaN or infinity, a boolean for a
number), is refused as a user's mistake: exit 2, one line, no traceback, nothing written, no
hang (tests/fuzz/file_walk.py walks them, by the parser walk's rules)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from file_walk import KINDS, walk  # noqa: E402


def test_every_file_kind_given_every_hostile_shape_is_refused_cleanly(tmp_path):
    outcomes = walk(tmp_path)
    assert {o.case.command for o in outcomes} == {k.name for k in KINDS}
    assert len(outcomes) >= 95
    failed = {f"{o.case.command}: {o.case.option}": o.why() for o in outcomes if not o.clean}
    assert failed == {}
