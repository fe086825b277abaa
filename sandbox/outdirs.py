"""What an output directory already holds: one --out belongs to one kind of output.

Each kind of output marks its directory with a file of its own: a run its `header.json`, a
single-room benchmark its manifest (`<benchmark>.json`, whose `benchmark` field names it), and
the outputs of a benchmark's own commands the files it declares (`add_marker`: its plug-in's
`outputs`, a suite's file). A command that writes into a directory marked by another kind is
refused before it writes anything: the two would mix (a board would read the other's files).
"""

from __future__ import annotations

import json
from pathlib import Path

MARKERS = {"header.json": "a run directory (sandbox run)"}  # and those added


def add_marker(name: str, what: str) -> None:
    """Another kind of output: the directories holding the file `name`, `what` they are."""
    MARKERS.setdefault(name, what)


class OutputTaken(Exception):
    """The directory holds another kind of output."""


def holder(out: Path, mine: str) -> str | None:
    """What `out` holds besides outputs marked by the file `mine`, described; None when it
    holds nothing of another kind (or is not there)."""
    if not out.is_dir() or (out / mine).is_file():
        return None
    for name, what in MARKERS.items():
        if name != mine and (out / name).is_file():
            return what
    for path in sorted(out.glob("*.json")):
        if path.name == mine:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # not a marker: another command's damaged file is its own to report
        if isinstance(data, dict) and isinstance(data.get("benchmark"), str):
            return f"a {data['benchmark']} benchmark ({path.name})"
    return None


def claim(out: Path, mine: str, what: str) -> None:
    """OutputTaken when `out` holds another kind of output than `what` (marked by `mine`)."""
    other = holder(out, mine)
    if other is not None:
        raise OutputTaken(f"{out} holds {other}, not {what}; use another --out")
