"""A script's category: LastOnly, FirstChan or SubseqChan (`categorize`, `category_note`,
`OVERRIDES`), and the published split they rest on, kept apart from any one file that holds it.

The published script file marks no category: a Hard script is FirstChan when its turn is the
first challenging turn of its dialogue, SubseqChan when later (spec section 3.2), and only the
whole published set shows which turn that was. A file cut from it (the 182 SubseqChan scripts
alone) would have each dialogue's earliest remaining script taken for its FirstChan. So the
split of the published set is kept here, derived once from the whole file:

    python -m tasks.simulbench.importer simulbench_all.jsonl    # writes published_split.json

`published_split.json` (beside this module) lists each published dialogue that has Hard scripts:
its source_id, source_file_name, first challenging turn and the ids of its Hard scripts. A
script of a file is categorised from it when its dialogue is listed and its id (an integer, or
the same number written as a string) is one of that dialogue's; in a file whose ids are not the
published ones (a published subset renumbered 0..n-1) by its turn against its dialogue's first
challenging turn, when every Hard script of the file fits the table so (`fits_published_turns`);
any other script is worked out from the file it is in (`categorize`), and
`category_note` says how many of each.
The shipped table is the published file's (data/simulbench_all.jsonl of SimulBench/SimulBench,
ids 0-274): 94 dialogues, FirstChan 93 (38 stateless, 55 stateful) and SubseqChan 182, with the
OVERRIDES (script 154 is SubseqChan, its dialogue's first challenging turn 3).
"""

from __future__ import annotations

import json
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


# The published file has 94 scripts that open a challenging run of their dialogue, where the
# paper counts 93 FirstChan scripts: script 154 (045#JSON_Data_Store, turn 4) is alone in its
# dialogue because its turn-3 FirstChan script was dropped by the full-score filter, so it is a
# SubseqChan script. Keyed by (id, source_id, turn_num): a file where id 154 is another script
# is not touched; the id is compared as a number, so "154" is 154.
OVERRIDES: dict[tuple[Any, str, int], Category] = {
    (154, "045#JSON_Data_Store", 4): "subseqchan",
}


def categorize(scripts: list[Script]) -> list[Script]:
    """Set each script's category: LastOnly for turn_num 0; a Hard script of the published set
    takes the published split (this module, whatever file it comes in): by its
    id, or, in a file renumbered from the published set (every Hard script fits the split by
    its dialogue and turn), by its turn against its dialogue's first challenging turn; any
    other's is worked out from this file: of its dialogue's Hard scripts here the earliest
    turn is FirstChan, the later ones SubseqChan; then OVERRIDES. Ids are compared as the
    published file numbers them ("154" is 154). `categorized_by` says which: "published",
    "published turn" or "file"."""
    first: dict[tuple[str, str], int] = {}
    by_id: dict[tuple[str, str], bool] = {}  # every Hard script of the dialogue matches by id
    for s in scripts:
        if s.hard:
            key = (s.source_id, s.source_file_name)
            first[key] = min(first.get(key, s.turn_num), s.turn_num)
            by_id[key] = by_id.get(key, True) and published_category(s) is not None
    # A renumbered subset's ids name other scripts of the published set (now and then one of
    # the same dialogue), and its dialogues' earliest scripts are not their FirstChan ones (a
    # SubseqChan-only file): its turns decide, for the whole file. A dialogue is taken by its
    # ids only when all of its scripts match (a chance match of one id is not the dialogue).
    by_turn = not all(by_id.values()) and fits_published_turns(scripts)
    for s in scripts:
        if not s.hard:
            s.category, s.categorized_by = "lastonly", "turn"
            continue
        if by_turn:
            s.category, s.categorized_by = category_by_turn(s), "published turn"
            continue
        if by_id[(s.source_id, s.source_file_name)]:
            s.category, s.categorized_by = published_category(s), "published"
            continue
        earliest = first[(s.source_id, s.source_file_name)] == s.turn_num
        s.category, s.categorized_by = ("firstchan" if earliest else "subseqchan"), "file"
        s.category = OVERRIDES.get((id_key(s.id), s.source_id, s.turn_num), s.category)
    return scripts


def category_note(scripts: Sequence[Script]) -> str | None:
    """A line saying how the Hard scripts' categories were found when not by the published
    ids: by their turns in a renumbered published subset; or worked out from the file alone
    when the file looks cut from a numbered set (its integer ids do not run 0..n-1) or holds
    dialogues of the published set whose turns do not fit it. Such a file may hold a
    dialogue's later scripts without its FirstChan one."""
    by_turn = sum(s.categorized_by == "published turn" for s in scripts)
    inferred = [s for s in scripts if s.categorized_by == "file"]
    ids = sorted(k for k in (id_key(s.id) for s in scripts) if isinstance(k, int))
    cut = bool(ids) and ids != list(range(len(ids)))
    published = sum(in_published_split(s) for s in inferred)
    notes = []
    if by_turn:
        notes.append(f"{by_turn} Hard scripts' FirstChan/SubseqChan taken from the published "
                     "split by their turn against their dialogue's first challenging turn: "
                     "their ids are not the published ones (a renumbered file)")
    if inferred and (cut or published):
        why = (f"which looks cut from a numbered set (its ids do not run 0.."
               f"{len(scripts) - 1})") if cut else \
            (f"{published} of them of published dialogues whose ids and turns do not fit the "
             "published split")
        notes.append(f"{len(inferred)} Hard scripts' FirstChan/SubseqChan worked out from this "
                     f"file alone, {why}; a dialogue's earliest script here is taken for its "
                     "FirstChan. Run the whole file with --subset instead, or see "
                     "tasks/simulbench/categories.py")
    return "; ".join(notes) or None
