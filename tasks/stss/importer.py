"""Import the public STSS task format (a JSON list of tasks) as our templates.

Each public task has: goal, FPG (the sentence injected into `currently`), Description (the
target sentence), task_type, performer, role_requirement, Note, n_characters, all_chars,
env_name, optional performer_choices / time_choices / location_choices, and `task`: {target,
target_num, goal: [{keyword, alter_kwd, start_time ("YYYY-MM-DD HH:MM" or "N/A"),
duration_in_minutes, location, required_character}]}.

Its characters and places belong to another town. A name that is also a resident or a place of
our world is kept; `name_map` maps the others (`{"Isabella Rodriguez": "Maya Lindqvist",
"Hobbs Cafe": "Copper Kettle Cafe"}`), in the sentences too. A task with a name that neither
resolves nor is mapped fails with the list of every name that could not be placed.

Not read: `all_chars` and `n_characters` (the background is drawn per seed from our residents,
10-12, as for our own templates), `target_num` (the expected count follows from the background,
as in the paper's scorer), `required_character` (an appointment's target comes from
`task.target`). `duration_in_minutes` is the window of a task with a fixed start time and must
be > 0 there (0 or missing is an error, not a guessed default); without a start time ("N/A")
it is not read.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from sandbox.files import FileFormatError, read_data
from worlds import AddressError, World, world_residents

from .schema import TaskTemplate, TaskType, check_in_world, parse_template

PUBLIC_TYPES = {
    "party": TaskType.public_activity, "public activity": TaskType.public_activity,
    "personal appointment": TaskType.appointment, "appointment": TaskType.appointment,
    "find partner": TaskType.inviting_companions,
    "inviting companions": TaskType.inviting_companions,
    "online meeting": TaskType.online_activity, "online activity": TaskType.online_activity,
    "ask for others": TaskType.asking_for_help, "asking for help": TaskType.asking_for_help,
}


class ImportProblem(FileFormatError):
    """A public task that cannot become a template here; `unplaced` lists the names."""

    def __init__(self, path: Path | str, reason: str, where: str = "",
                 unplaced: list[str] | None = None):
        super().__init__(path, reason, where)
        self.unplaced = unplaced or []


def read_public_tasks(path: Path | str) -> list[dict[str, Any]]:
    data = read_data(path)
    if isinstance(data, dict):  # some files keep the list under one key
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else data
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise FileFormatError(path, "expected a JSON list of STSS tasks (objects)")
    if not data:  # a suite of nothing would "succeed" with an empty table
        raise FileFormatError(path, "no tasks in the file")
    return data


class _Placer:
    """Maps one task's names onto the world, remembering what it could not place."""

    def __init__(self, world: World, name_map: dict[str, str]):
        self.world = world
        self.names = dict(name_map)
        self.map = {k.lower(): v for k, v in name_map.items()}
        self.residents = {r.name for r in world_residents(world)}
        self.used: dict[str, str] = {}  # original -> ours, for rewriting sentences
        self.unplaced: list[str] = []

    def person(self, name: str) -> str | None:
        ours = self.map.get(name.strip().lower(), name.strip())
        if ours in self.residents:
            self.used[name.strip()] = ours
            return ours
        self.unplaced.append(f"{name!r} (character)")
        return None

    def place(self, text: str | None) -> str | None:
        if text is None or text.strip().upper() in ("", "N/A"):
            return None
        text = text.strip()
        parts = [p.strip() for p in text.split(":")]
        tries = [self.map.get(text.lower(), text)]
        mapped = [self.map.get(p.lower(), p) for p in parts]
        tries += [":".join(mapped[i:]) for i in range(len(mapped))]  # drop their world name
        for attempt in tries:
            try:
                found = str(self.world.resolve(attempt))
            except AddressError:
                continue
            return found
        self.unplaced.append(f"{text!r} (location)")
        return None

    def sentence(self, text: str) -> str:
        """The text with every mapped name (people and places) replaced by ours."""
        swaps = {**self.names, **self.used}
        for original in sorted(swaps, key=len, reverse=True):
            text = re.sub(re.escape(original), swaps[original], text)
        return text.replace("{", "{{").replace("}", "}}")  # no placeholders in imported text


def _time(value: str | None) -> datetime | None:
    if not value or str(value).strip().upper() == "N/A":
        return None
    return datetime.strptime(str(value).strip(), "%Y-%m-%d %H:%M")


def import_task(raw: dict[str, Any], world: World, name_map: dict[str, str] | None = None, *,
                path: Path | str = "<public tasks>", index: int = 0) -> TaskTemplate:
    """One public task as a template of `world`; ImportProblem when it cannot be placed."""
    where = f"[{index}]"
    kind = PUBLIC_TYPES.get(str(raw.get("task_type", "")).strip().lower())
    if kind is None:
        raise ImportProblem(path, f"unknown task_type {raw.get('task_type')!r}; known: "
                                  f"{', '.join(sorted(PUBLIC_TYPES))}", f"{where}.task_type")
    spec = raw.get("task") or {}
    goals = spec.get("goal") or []
    if not goals:
        raise ImportProblem(path, "no task.goal entries (keyword, location, time)",
                            f"{where}.task.goal")
    if kind is not TaskType.asking_for_help and len(goals) > 1:
        raise ImportProblem(path, f"{len(goals)} goal entries; only asking for help has "
                                  "several steps here", f"{where}.task.goal")
    placer = _Placer(world, name_map or {})
    performer = placer.person(raw["performer"]) if raw.get("performer") else None
    choices = [p for p in (placer.person(n) for n in raw.get("performer_choices") or []) if p]
    targets = [p for p in (placer.person(n) for n in spec.get("target") or []) if p] \
        if kind is TaskType.appointment else []
    first = goals[0]
    start = _time(first.get("start_time"))
    data: dict[str, Any] = {
        "id": str(raw.get("env_name") or f"public_{index}").replace(" ", "_"),
        "type": kind.value, "title": str(raw.get("goal") or raw.get("env_name") or kind.value),
        "note": str(raw.get("Note") or ""),
    }
    if performer:
        data["performer"] = performer
    elif choices:
        data["performer_choices"] = choices
    elif raw.get("role_requirement"):
        data["performer_role"] = str(raw["role_requirement"])
    if kind is TaskType.asking_for_help:
        data["steps"] = [{"keyword": g["keyword"], "alternatives": list(g.get("alter_kwd") or []),
                          "location": placer.place(g.get("location"))} for g in goals]
    else:
        data["keyword"] = first["keyword"]
        data["alternatives"] = list(first.get("alter_kwd") or [])
        if kind in (TaskType.public_activity, TaskType.inviting_companions):
            places = [placer.place(p) for p in raw.get("location_choices") or []] or \
                [placer.place(first.get("location"))]
            data["location_choices"] = [p for p in places if p]
    if kind in (TaskType.public_activity, TaskType.online_activity) and start is not None:
        data["date"] = start.date().isoformat()
        data["time_choices"] = [start.strftime("%H:%M")] + [
            t for t in (raw.get("time_choices") or []) if t != start.strftime("%H:%M")]
        data["duration_minutes"] = int(first.get("duration_in_minutes") or 0)
    elif start is not None:
        data["date"] = start.date().isoformat()
    if targets:
        data["target_choices"] = targets
    if placer.unplaced:
        names = sorted(set(placer.unplaced))
        raise ImportProblem(path, "cannot place these names in world "
                                  f"'{world.name}': {', '.join(names)}; map them with a name map",
                            where, unplaced=names)
    if data.get("duration_minutes", 1) <= 0:
        # No made-up default: the duration is the scoring window, and an invented one would
        # change who counts without anyone noticing.
        raise ImportProblem(path, f"duration_in_minutes {data['duration_minutes']}: a "
                                  f"{kind.value} task starts at a fixed time and needs how long "
                                  "it lasts (> 0) for its scoring window",
                            f"{where}.task.goal.0.duration_in_minutes")
    data["goal"] = placer.sentence(str(raw.get("FPG") or raw.get("goal") or ""))
    data["target"] = placer.sentence(str(raw.get("Description") or raw.get("goal") or ""))
    template = parse_template(data, path)
    problems = check_in_world(template, world)
    if problems:
        raise ImportProblem(path, problems[0][1], f"{where}.{problems[0][0]}")
    return template


def import_public_tasks(path: Path | str, world: World,
                        name_map: dict[str, str] | None = None) -> list[TaskTemplate]:
    """Every task of a public STSS file as templates; the first task that fails raises, with
    every unplaced name of the whole file in its message."""
    tasks = read_public_tasks(path)
    out, unplaced, first_error = [], [], None
    for i, raw in enumerate(tasks):
        try:
            out.append(import_task(raw, world, name_map, path=path, index=i))
        except ImportProblem as exc:
            unplaced += exc.unplaced
            first_error = first_error or exc
        except (KeyError, TypeError, ValueError) as exc:  # a missing or malformed field
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            first_error = first_error or ImportProblem(path, f"malformed task: {what}", f"[{i}]")
    if first_error is not None:
        if unplaced:
            names = sorted(set(unplaced))
            raise ImportProblem(path, f"cannot place {len(names)} name(s) in world "
                                      f"'{world.name}': {', '.join(names)}; map them with a "
                                      "name map", unplaced=names)
        raise first_error
    return out


def write_templates(templates: list[TaskTemplate], directory: Path | str) -> list[Path]:
    """Save templates as our YAML files (one per task), for editing and `sandbox run`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for template in templates:
        data = json.loads(template.model_dump_json(exclude_defaults=True))
        path = directory / f"{template.id}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
        paths.append(path)
    return paths
