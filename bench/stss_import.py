"""Public STSS task files through the importer: per file, how many tasks import and which fail,
the place names matched near, the warnings and notes; then, over every public-activity task
and seeds 0..9, how many episodes tell the performer the time and place it is scored on
(its goal and target sentences name the drawn start, at most the window's end, and the drawn
place and no other of the town's places).

    .venv/bin/python bench/stss_import.py --world ville STSS/environment/data/task_0905/*.json

No model runs; the check reads the instantiated sentences only.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/ (bench/agents.py)

from tasks.stss import TaskType, import_public_tasks, instantiate  # noqa: E402
from tasks.stss.instantiate import place_name  # noqa: E402
from worlds import Address, load_world  # noqa: E402

# Clock times in figures, read apart from the importer's own reader (tasks/stss/statements.py).
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b|\b(\d{1,2})\s*([ap])\.?\s?m\b", re.IGNORECASE)


def clocks_stated(text: str) -> set[str]:
    found = set()
    for m in _CLOCK.finditer(text):
        hours = int(m[1]) if m[1] else int(m[3]) % 12 + (12 if m[4].lower() == "p" else 0)
        found.add(f"{hours:02d}:{m[2] or '00'}")
    return found


def told_what_is_scored(task, world) -> bool:
    told = f"{task.goal} {task.criteria}"
    start, end = task.start.strftime("%H:%M"), task.end.strftime("%H:%M")
    place = task.steps[0].location
    named = {s.parts[-1] for s in world.sectors() if s.parts[-1].lower() in told.lower()}
    return start in clocks_stated(told) and clocks_stated(told) <= {start, end} and \
        place_name(place) in told and named <= {Address.parse(place).parts[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--world", default="ville")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    world = load_world(args.world)
    right = episodes = 0
    for path in args.files:
        imported = import_public_tasks(path, world)
        print(f"{path}: {len(imported.templates)} of {imported.total} imported")
        for failure in imported.failed:
            print(f"  not imported: {failure}")
        file_right = file_episodes = 0
        for template in imported.templates:
            for theirs, ours in template.name_mapping.items():
                print(f"  {template.id}: name mapped: {theirs!r} -> {ours}")
            for warning in template.import_warnings:
                print(f"  {template.id}: warning: {warning}")
            for note in template.import_notes:
                print(f"  {template.id}: note: {note}")
            if template.type is TaskType.public_activity:
                told = [told_what_is_scored(instantiate(template, seed, world), world)
                        for seed in range(args.seeds)]
                file_right, file_episodes = file_right + sum(told), file_episodes + len(told)
        if file_episodes:
            print(f"  public activity x seeds 0..{args.seeds - 1}: {file_right} of "
                  f"{file_episodes} told the scored time and place")
        right, episodes = right + file_right, episodes + file_episodes
    print(f"all files: {right} of {episodes} public-activity episodes told the scored time and "
          "place")


if __name__ == "__main__":
    main()
