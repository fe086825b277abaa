"""The published FirstChan/SubseqChan split, kept apart from any one file that holds it.

The published script file marks no category: a Hard script is FirstChan when its turn is the
first challenging turn of its dialogue, SubseqChan when later (spec section 3.2), and only the
whole published set shows which turn that was. A file cut from it (the 182 SubseqChan scripts
alone) would have each dialogue's earliest remaining script taken for its FirstChan. So the
split of the published set is kept here, derived once from the whole file:

    python -m tasks.simulbench.published simulbench_all.jsonl   # writes published_split.json

`published_split.json` (beside this module) lists each published dialogue that has Hard scripts:
its source_id, source_file_name, first challenging turn and the ids of its Hard scripts. A
script of a file is categorised from it when its dialogue is listed and its id (an integer, or
the same number written as a string) is one of that dialogue's; in a file whose ids are not the
published ones (a published subset renumbered 0..n-1) by its turn against its dialogue's first
challenging turn, when every Hard script of the file fits the table so (`fits_published_turns`);
any other script is worked out from the file it is in (tasks.simulbench.importer.categorize),
and the importer says how many of each.
The shipped table is the published file's (data/simulbench_all.jsonl of SimulBench/SimulBench,
ids 0-274): 94 dialogues, FirstChan 93 (38 stateless, 55 stateful) and SubseqChan 182, with the
importer's OVERRIDES (script 154 is SubseqChan, its dialogue's first challenging turn 3).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from .models import Category, Script

SPLIT_FILE = Path(__file__).with_name("published_split.json")


def id_key(value: Any) -> Any:
    """A script id as the published file numbers it: "12" and 12 are the same script."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value


def published_split() -> dict[tuple[str, str], tuple[int, frozenset]]:
    """(source_id, source_file_name) -> (first challenging turn, ids of its Hard scripts)."""
    return read_split(SPLIT_FILE)


@cache
def read_split(path: Path) -> dict[tuple[str, str], tuple[int, frozenset]]:
    if not path.is_file():
        return {}
    rows = json.loads(path.read_text(encoding="utf-8"))
    return {(r["source_id"], r["source_file_name"]): (int(r["first_turn"]),
                                                      frozenset(r["ids"])) for r in rows}


def published_category(script: Script) -> Category | None:
    """The published split's category of a Hard script, or None when it is not one of the
    published set's (another dialogue, another id, or a turn before its dialogue's first
    challenging one)."""
    found = published_split().get((script.source_id, script.source_file_name))
    if found is None or id_key(script.id) not in found[1] or script.turn_num < found[0]:
        return None
    first, _ = found
    return "firstchan" if script.turn_num == first else "subseqchan"


def fits_published_turns(scripts: Sequence[Script]) -> bool:
    """Whether every Hard script of a file can be a published one by its dialogue and turn
    alone (ids set aside: a file cut from the published set and renumbered): its dialogue is
    in the split, its turn is not before the dialogue's first challenging turn, no dialogue
    has two scripts of one turn or more scripts than it has published. A file of another
    collection on the published tasks (its judge found other turns) fails on some dialogue."""
    split = published_split()
    turns: dict[tuple[str, str], list[int]] = {}
    for s in scripts:
        if s.hard:
            turns.setdefault((s.source_id, s.source_file_name), []).append(s.turn_num)
    for key, mine in turns.items():
        found = split.get(key)
        if found is None or min(mine) < found[0] or len(set(mine)) != len(mine) or \
                len(mine) > len(found[1]):
            return False
    return bool(turns)


def category_by_turn(script: Script) -> Category:
    """A Hard script's category from its dialogue's published first challenging turn (the
    script is of a file that `fits_published_turns`)."""
    first, _ = published_split()[(script.source_id, script.source_file_name)]
    return "firstchan" if script.turn_num == first else "subseqchan"


def in_published_split(script: Script) -> bool:
    return (script.source_id, script.source_file_name) in published_split()


def derive_split(scripts: Sequence[Script]) -> list[dict[str, Any]]:
    """The split table of a whole published file, its scripts already categorised."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for s in scripts:
        if not s.hard:
            continue
        row = rows.setdefault((s.source_id, s.source_file_name), {
            "source_id": s.source_id, "source_file_name": s.source_file_name,
            "first_turn": None, "ids": []})
        row["ids"].append(id_key(s.id))
        if s.category == "firstchan":
            row["first_turn"] = s.turn_num
    for row in rows.values():
        if row["first_turn"] is None:  # its FirstChan script was filtered out of the file
            row["first_turn"] = min_turn_below(scripts, row)
    return list(rows.values())


def min_turn_below(scripts: Sequence[Script], row: dict[str, Any]) -> int:
    """A dialogue whose FirstChan script the full-score filter dropped: its remaining Hard
    scripts are all SubseqChan, so its first challenging turn is before the earliest of them."""
    turns = [s.turn_num for s in scripts if (s.source_id, s.source_file_name) ==
             (row["source_id"], row["source_file_name"]) and s.hard]
    return min(turns) - 1


def main(argv: list[str] | None = None) -> int:
    """Derive the table from the whole published file and write it beside this module."""
    from .importer import load_scripts

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tasks.simulbench.published simulbench_all.jsonl",
              file=sys.stderr)
        return 2
    scripts = load_scripts(args[0])
    split = derive_split(scripts)
    SPLIT_FILE.write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
    read_split.cache_clear()
    count = {c: sum(s.category == c for s in scripts) for c in ("firstchan", "subseqchan")}
    print(f"{len(split)} dialogues with Hard scripts (FirstChan {count['firstchan']}, "
          f"SubseqChan {count['subseqchan']}) into {SPLIT_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
