"""SimulBench's item sets: collection items (task x dialogue) and answering items (scripts).

Ids are directory names built from content (tasks.kit): a collection item is
`<task>__d<k>` (k = 0, 1, 2: the task's three dialogues); a script is `<task>__<hash of the
script's content>`, so a reordered or subsampled file finds its runs again, and the same script
twice is an IdCollision naming both lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from tasks.kit import ItemSet, content_digest, name_id, slug

from .categories import category_note
from .models import DIALOGUES_PER_TASK, Script, SimTask

SUBSETS = ("all", "hard", "lastonly", "firstchan", "subseqchan", "stateful", "stateless")
Collect = tuple[SimTask, int]  # a task and which of its dialogues


def in_subset(script: Script, subset: str) -> bool:
    if subset == "all":
        return True
    if subset == "hard":
        return script.hard
    if subset in ("stateful", "stateless"):
        return script.type == subset
    return script.category == subset


def collection_items(tasks: Sequence[SimTask], source: str = "",
                     dialogues: int = DIALOGUES_PER_TASK) -> ItemSet[Collect]:
    """Every task's `dialogues` dialogues, task-major; --every K keeps every K-th of that list,
    so a quick run meets several tasks and each of their dialogue numbers."""
    items, ids, origins = [], [], []
    for t, task in enumerate(tasks):
        for k in range(dialogues):
            items.append((task, k))
            ids.append(f"{name_id(task.act)}__d{k}")
            origins.append(f"tasks.{t} ({task.act!r}) dialogue {k}")
    played = [task.model_dump(mode="json") for task in tasks]
    return ItemSet(items=items, ids=ids, origins=origins, source=source,
                   digest=content_digest({"tasks": played, "dialogues": dialogues}))


def script_id(script: Script) -> str:
    content = script.public()
    content.pop("id")
    return f"{slug(script.act) or 'script'}__{content_digest(content)[:10]}"


def script_items(scripts: Sequence[Script], source: str = "", subset: str = "all"
                 ) -> ItemSet[Script]:
    """The scripts of `subset`, in file order."""
    if subset not in SUBSETS:
        raise ValueError(f"unknown subset {subset!r} (one of {', '.join(SUBSETS)})")
    chosen = [(i, s) for i, s in enumerate(scripts) if in_subset(s, subset)]
    note = category_note(scripts)
    return ItemSet(items=[s for _, s in chosen], ids=[script_id(s) for _, s in chosen],
                   origins=[f"script {s.id} (line {i + 1})" for i, s in chosen], source=source,
                   digest=content_digest([s.public() for s in scripts]),
                   notes=[note] if note else [])
