"""Claiming an output: what a directory already holds, and what an output may never replace.

The rules, for every command (each checked before anything is written):
- an output never replaces an input of the same command, nor lies inside an input directory
  (`refuse_inputs`: a board's --json over the benchmark's manifest, frames exported into the
  run they show);
- a directory is only written over when it holds our own output of that kind (`claim_run`: a
  run directory, or a directory holding nothing but the files a run writes; a directory of the
  user's own files is refused, --overwrite or not);
- one --out belongs to one kind of output (`claim`, below).

Each kind of output marks its directory with a file of its own: a run its `header.json`, a
single-room benchmark its manifest (`<benchmark>.json`, whose `benchmark` field names it), and
the outputs of a benchmark's own commands the files it declares (`add_marker`: its plug-in's
`outputs`, a suite's file). A command that writes into a directory marked by another kind is
refused before it writes anything: the two would mix (a board would read the other's files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
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


# What a run writes into its directory (sandbox/log.py, checkpoint.py, judgments.py: its logs,
# scores, judgments and checkpoints), and the hidden files of our locks and of killed atomic
# writes (sandbox/lock.py, storage.py), which any of our outputs may hold.
RUN_NAMES = re.compile(r"header\.json|events\.jsonl|calls\.jsonl|prompts\.jsonl|llm_cache\.jsonl"
                       r"|result\.json|judgments|checkpoints|score(\.[\w-]+)?\.json")
_OUR_HIDDEN = re.compile(r"\.sandbox\.lock|\..+\.[0-9a-z_]{8}\.tmp")


def foreign(out: Path, ours: re.Pattern = RUN_NAMES) -> list[str]:
    """The names in directory `out` that `ours` (what one kind of output writes there: a
    run's by default) does not match, sorted; [] for a missing or empty directory."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir()
                  if not ours.fullmatch(p.name) and not _OUR_HIDDEN.fullmatch(p.name))


def claim_run(out: Path) -> None:
    """OutputTaken unless `out` may take a run: missing, empty, or holding only what a run
    writes (a run, a killed one, a cache copied for a rerun). A directory of anything else is
    the user's: a run written into it would mix with their files, and --overwrite would
    delete any of them that bear a run's file names."""
    claim_own(out, RUN_NAMES, "a run")


def claim_own(out: Path, ours: re.Pattern, what: str) -> None:
    """OutputTaken when `out` is a file, or a directory holding names `ours` does not match
    (what `what` writes there): only a new or empty directory, or one of our own outputs of
    that kind, is written into."""
    if out.exists() and not out.is_dir():
        raise OutputTaken(f"{out} is a file, not a directory")
    other = foreign(out, ours)
    if other:
        shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise OutputTaken(f"{out} holds files that are not {what}'s ({shown}); {what} is "
                          "written only into a new or empty directory or over its own kind; "
                          "use another directory")


def refuse_inputs(output: Path, inputs: Iterable[Path], what: str = "an output") -> None:
    """OutputTaken when `output` is one of `inputs` or lies inside one of them that is a
    directory: writing it would change what the command reads."""
    target = Path(output).resolve()
    for given in inputs:
        source = Path(given).resolve()
        if target == source:
            raise OutputTaken(f"{output} is an input of this command, and an output never "
                              f"replaces an input: write {what} elsewhere")
        if source in target.parents:
            raise OutputTaken(f"{output} lies inside {given}, an input of this command, and an "
                              f"output is never written into an input: write {what} elsewhere")
