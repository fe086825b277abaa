"""Import the public STSS task format (a JSON list of tasks) as our templates.

    imported = import_public_tasks("tasks.json", world)          # -> PublicImport
    imported.templates, imported.failed                           # failed: index, id, reason
    write_templates(imported.templates, "out/templates")

Each public task has: goal, FPG (the sentence injected into `currently`), Description (the
target sentence), task_type, performer, role_requirement, Note, n_characters, all_chars,
env_name, optional performer_choices / time_choices / location_choices, and `task`: {target,
target_num, goal: [{keyword, alter_kwd, start_time ("YYYY-MM-DD HH:MM" or "N/A"),
duration_in_minutes, location, required_character}]}.

Its characters and places are Smallville's. On a world imported from the reference
(`sandbox import-ville`) they are ours too and import as they are; on another world
`name_map` maps them (`{"Isabella Rodriguez": "Maya Lindqvist", "Hobbs Cafe": "Copper Kettle
Cafe"}`), in the sentences too. A place name that is a near match of exactly one place (case,
punctuation, statements.PLACE_SYNONYMS: "Hobbs Coffee" for Hobbs Cafe) is mapped and recorded in
the template's `name_mapping`, unless `strict_names`. A task with a name that neither resolves
nor is mapped, or a malformed one, fails alone (`PublicImport.failed`, naming the names it
could not place and the nearest the world has); with `strict_names` any failure refuses the
whole file. `#Any` in a character field means any resident (a performer drawn from all, an
appointment with anyone).

The goal and target sentences state the time and place a seed draws: where they state the
task's own they get {time}, {end_time}, {place}; where that cannot be done safely the choices
shrink to what they state (`import_notes`); what the task contradicts in itself is an
`import_warnings` entry (statements.py, tasks/README.md). The meta-task files' own placeholders
(#performer, #target_0, #location_0, #time_0, #target_num) become ours.

Times: `start_time` and `time_choices` are 'YYYY-MM-DD HH:MM' (seconds and a 'T' are read too;
a bare 'HH:MM' choice takes the task's day); all of one task's times must fall on one day, which
becomes the template's `date`. A task without one (appointment, find partner, ask for others:
"N/A") takes the day its sentences name, else the reference's event day, 2023-02-14; a sentence
(or the title) naming another day than the one the task is scored on is an error. A task runs at
its published time (the goal's `start_time`, `published_time` in the template), as the
reference plans and scores it; its other `time_choices` are drawn per seed only with
`draw_times` (`--draw-times`), and the title and sentences then name the time drawn. Every error
names the task's index and id (`[4] (party_3)`) and the field.

`target_num` is kept in the template for the reference rule set, which divides by
target_num - 1 as the authors' scorer does; our rules count against ceil(background / 2) (or
/ 3) over the background drawn per seed (a Description that states another count is warned
about). Each place is kept as the file wrote it too (`reference_places`), for the reference's
substring test. Not read: `all_chars` and `n_characters` (the background is drawn per seed from
our residents, 10-12, as for our own templates), `required_character` (an appointment's target
comes from `task.target`).
`duration_in_minutes` is the window of a task with a fixed start time and must be > 0 there (0
or missing is an error, not a guessed default); without a start time ("N/A") it is not read.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from pydantic import BaseModel, Field

from sandbox.files import FileFormatError, read_data
from sandbox.storage import write_atomic
from tasks.kit.items import digest
from worlds import Address, AddressError, World, world_residents

from .instantiate import SHARE, expected_count, place_name
from .schema import TaskTemplate, TaskType, check_in_world, parse_template
from .statements import name_pattern, place_key, stated_counts, stated_days, tell_drawn_values

# The day the reference's tasks happen on: its scorer counts chats before a fixed
# datetime(2023, 2, 14), and its town's storage base starts on February 13, 2023 (meta.json).
REFERENCE_EVENT_DAY = date(2023, 2, 14)
WILDCARDS = {"#any"}  # a character field that means "any resident", compared lower-cased
PUBLIC_TYPES = {
    "party": TaskType.public_activity, "public activity": TaskType.public_activity,
    "personal appointment": TaskType.appointment, "appointment": TaskType.appointment,
    "find partner": TaskType.inviting_companions,
    "inviting companions": TaskType.inviting_companions,
    "online meeting": TaskType.online_activity, "online activity": TaskType.online_activity,
    "ask for others": TaskType.asking_for_help, "asking for help": TaskType.asking_for_help,
}


class ImportProblem(FileFormatError):
    """A public task that cannot become a template here; `unplaced` lists the names it could
    not place ("'Hobbs Cafe' (location)"), `names` the same with the nearest names we have."""

    def __init__(self, path: Path | str, reason: str, where: str = "",
                 unplaced: list[Unplaced] | None = None):
        super().__init__(path, reason, where)
        self.names = sorted(set(unplaced or []))
        self.unplaced = sorted({str(n) for n in self.names})


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


def is_wildcard(name: str) -> bool:
    """The public files' stand-in for 'any character' (`#Any`), not a name to place."""
    return name.strip().lower() in WILDCARDS


class _Placer:
    """Maps one task's names onto the world, remembering what it could not place and which
    place names it matched near (`mapped`, unless `strict_names`)."""

    def __init__(self, world: World, name_map: dict[str, str], strict_names: bool = False):
        self.world = world
        self.names = dict(name_map)
        self.map = {k.lower(): v for k, v in name_map.items()}
        self.residents = {r.name for r in world_residents(world)}
        self.strict_names = strict_names
        self.used: dict[str, str] = {}  # original -> ours, for rewriting sentences
        self.mapped: dict[str, str] = {}  # a public place name matched near -> our address
        self.spellings: dict[str, str] = {}  # its own name in sentences -> ours
        self.written: dict[str, str] = {}  # our address -> the place as written (name-mapped)
        self.unplaced: list[Unplaced] = []

    def person(self, name: str) -> str | None:
        ours = self.map.get(name.strip().lower(), name.strip())
        if ours in self.residents:
            self.used[name.strip()] = ours
            return ours
        near = difflib.get_close_matches(name.strip(), sorted(self.residents), n=3, cutoff=0.5)
        self.unplaced.append(Unplaced(name.strip(), "character", tuple(near)))
        return None

    def people(self, names: list[str]) -> tuple[list[str], bool]:
        """The residents a list of public names stands for, and whether it held the wildcard."""
        wildcard = any(is_wildcard(n) for n in names)
        placed = [self.person(n) for n in names if not is_wildcard(n)]
        return [p for p in placed if p], wildcard

    def place(self, text: str | None) -> str | None:
        if text is None or text.strip().upper() in ("", "N/A"):
            return None
        text = text.strip()
        parts = [p.strip() for p in text.split(":")]
        tries = [self.map.get(text.lower(), text)]
        named = [self.map.get(p.lower(), p) for p in parts]
        tries += [":".join(named[i:]) for i in range(len(named))]  # drop their world name
        for attempt in tries:
            try:
                found = str(self.world.resolve(attempt))
            except AddressError:
                continue
            self.written.setdefault(found, tries[0] if attempt == tries[0] else ":".join(named))
            return found
        near = near_places(self.world, named)
        if len(near) == 1 and not self.strict_names:
            self.mapped[text] = str(near[0])
            self.written.setdefault(str(near[0]), ":".join(named))
            self.spellings[named[-1]] = near[0].parts[-1]
            return str(near[0])
        if len(near) == 1:
            unplaced = Unplaced(text, "location", (), f"--strict-names: its near match "
                                                      f"{str(near[0])!r} is not taken")
        elif near:  # choosing one would be a guess
            unplaced = Unplaced(text, "location", tuple(map(str, near)),
                                f"a near match of {len(near)} places")
        else:
            unplaced = Unplaced(text, "location", nearest_places(self.world, parts[-1]))
        self.unplaced.append(unplaced)
        return None

    def sentence(self, text: str) -> str:
        """The text with every mapped name (people and places) replaced by ours."""
        swaps = {**self.names, **self.used}
        for original in sorted(swaps, key=len, reverse=True):
            text = re.sub(re.escape(original), swaps[original], text)
        for theirs, ours in self.spellings.items():  # "Hobbs coffee" as well as "Hobbs Coffee"
            text = re.sub(name_pattern(theirs), lambda _, ours=ours: ours, text,
                          flags=re.IGNORECASE)
        return text.replace("{", "{{").replace("}", "}}")  # no placeholders in imported text


class Unplaced(NamedTuple):
    """A public name the world has no resident or place for, and the closest it has."""

    name: str
    kind: str  # character | location
    nearest: tuple[str, ...]
    why: str = ""  # a near match refused: of several places, or by --strict-names

    def __str__(self) -> str:
        return f"{self.name!r} ({self.kind})"

    def described(self) -> str:
        near = f"; nearest: {', '.join(repr(n) for n in self.nearest)}" if self.nearest else \
            "" if self.why else "; nothing close"
        why = f"; {self.why}" if self.why else ""
        return f"{self.name!r} ({self.kind}{why}{near})"


def near_places(world: World, parts: list[str]) -> list[Address]:
    """The places a public address names up to case, punctuation and PLACE_SYNONYMS ("the
    Ville:Hobbs coffee" -> Hobbs Cafe); its leading parts (their world's name) may be left out.
    More than one place: the name is ambiguous, and the caller must not choose."""
    by_key: dict[tuple[str, ...], list[Address]] = {}
    for level in ("sector", "arena", "object"):
        for place in world.places(level):
            by_key.setdefault(tuple(place_key(p) for p in place.parts[1:]), []).append(place)
    keys = tuple(place_key(p) for p in parts)
    for i in range(len(keys)):
        if keys[i:] in by_key:
            return by_key[keys[i:]]
    return []


def nearest_places(world: World, name: str, n: int = 3) -> tuple[str, ...]:
    """Addresses of the world whose own name (last part) is closest to `name`."""
    by_name: dict[str, list[str]] = {}
    for level in ("sector", "arena", "object"):
        for place in world.places(level):
            by_name.setdefault(place.parts[-1].lower(), []).append(str(place))
    close = difflib.get_close_matches(name.strip().lower(), list(by_name), n=n, cutoff=0.5)
    return tuple(a for c in close for a in by_name[c])[:n]


_WHEN = re.compile(r"^(?:(\d{4}-\d{2}-\d{2})[ T])?(\d{1,2}):(\d{2})(?::(\d{2}))?$")


def public_time(value: Any) -> tuple[date | None, str] | None:
    """A time as the public files write it: 'YYYY-MM-DD HH:MM' (also with seconds or a 'T'),
    or a bare 'HH:MM'; None for 'N/A' or nothing. Returns (date or None, 'HH:MM');
    ValueError for anything else."""
    if value is None or str(value).strip().upper() in ("", "N/A"):
        return None
    match = _WHEN.match(str(value).strip())
    if match is None:
        raise ValueError(f"{value!r} is not a time ('YYYY-MM-DD HH:MM', 'HH:MM' or 'N/A')")
    day, hours, minutes, seconds = match.groups()
    try:
        when = datetime(2000, 1, 1, int(hours), int(minutes), int(seconds or 0))
        on = date.fromisoformat(day) if day else None
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a real date and time ({exc})") from exc
    if when.second:  # our times are whole minutes; rounding would move the scoring window
        raise ValueError(f"{value!r} has seconds; give whole minutes")
    return on, f"{when:%H:%M}"


def _times(raw: dict[str, Any], first: dict[str, Any]) -> tuple[date | None, list[str]]:
    """The task's date and its start times (the goal's start first, then the other choices),
    every public time read; ValueError naming the field when one is unreadable or on a day
    that is not the task's."""
    fields = [("task.goal.0.start_time", first.get("start_time"))]
    choices = raw.get("time_choices") or []
    if not isinstance(choices, list):
        raise _FieldError("time_choices", f"expected a list of times, not {choices!r}")
    fields += [(f"time_choices.{i}", v) for i, v in enumerate(choices)]
    day, day_field, clocks = None, "", []
    for field, value in fields:
        try:
            when = public_time(value)
        except ValueError as exc:
            raise _FieldError(field, str(exc)) from exc
        if when is None:
            continue
        on, clock = when
        if on is not None and day is not None and on != day:
            raise _FieldError(field, f"{value!r} is on {on}, but {day_field} puts the task on "
                                     f"{day}; a task happens on one day")
        if on is not None and day is None:
            day, day_field = on, field
        if clock not in clocks:
            clocks.append(clock)
    return day, clocks


def _event_day(day: date | None, sentences: dict[str, str]) -> tuple[date, str]:
    """The day a task is scored on, and where it comes from: the day of its times; else the one
    day its sentences name; else the reference's event day (its scorer's fixed cutoff)."""
    if day is not None:
        return day, "its times"
    named = {(d.year, d.month, d.day) for text in sentences.values() for d in stated_days(text)
             if d.year}
    if len(named) == 1:
        return date(*named.pop()), "the day its sentences name"
    return REFERENCE_EVENT_DAY, "the reference's event day (its times give none)"


def _check_days(field: str, text: str, day: date, day_from: str) -> None:
    """A sentence naming another day than the one the task is scored on is an error: the
    performer would be told one day and scored on another."""
    for named in stated_days(text):
        if (named.month, named.day) != (day.month, day.day) or named.year not in (0, day.year):
            raise _FieldError(field, f"names the day {named.text!r}, but the task is scored on "
                                     f"{day} ({day_from}); a task happens on one day")


class _FieldError(ValueError):
    """A malformed field of one task (the caller adds the task's index and id)."""

    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field, self.reason = field, reason


def task_label(index: int, task_id: str) -> str:
    """How errors name a task: its index in the file and its id."""
    return f"[{index}] ({task_id})"


_NOT_FILE_NAME = re.compile(r"[^\w.-]+")  # letters and digits of any script, _ . -


def public_id(raw: dict[str, Any], index: int) -> str:
    """A task's id: its env_name (spaces as underscores), else public_<index>. The id names the
    template file written for the task, so an env_name that is not a plain file name (a path,
    `..`, control characters, a very long text) gets its safe part and a hash of the whole:
    it never writes outside the directory, and two such names never share a file."""
    text = str(raw.get("env_name") or f"public_{index}").strip().replace(" ", "_")
    safe = _NOT_FILE_NAME.sub("_", text).strip("._")[:40]
    if safe == text:
        return text
    return f"{safe or 'public'}_{digest(text)}"


def import_task(raw: dict[str, Any], world: World, name_map: dict[str, str] | None = None, *,
                path: Path | str = "<public tasks>", index: int = 0,
                task_id: str | None = None, strict_names: bool = False,
                draw_times: bool = False) -> TaskTemplate:
    """One public task as a template of `world`; ImportProblem (naming the task's index and
    id, and the field) when it cannot be placed or is malformed. `strict_names`: a place name
    the world does not have exactly is not placed even when it is a near match of one place.
    `draw_times`: a seed draws the start among `time_choices` [default: the published time,
    the goal's start_time, as the reference runs and scores it]."""
    task_id = task_id or public_id(raw, index)
    label = task_label(index, task_id)
    try:
        return _import(raw, world, _Placer(world, name_map or {}, strict_names), path, label,
                       task_id, draw_times)
    except _FieldError as exc:
        raise ImportProblem(path, exc.reason, f"{label}.{exc.field}") from exc
    except KeyError as exc:
        raise ImportProblem(path, f"malformed task: missing field {exc}", label) from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise ImportProblem(path, f"malformed task: {exc}", label) from exc


def _import(raw: dict[str, Any], world: World, placer: _Placer, path: Path | str,
            label: str, task_id: str, draw_times: bool = False) -> TaskTemplate:
    kind = PUBLIC_TYPES.get(str(raw.get("task_type", "")).strip().lower())
    if kind is None:
        raise _FieldError("task_type", f"unknown task_type {raw.get('task_type')!r}; known: "
                                       f"{', '.join(sorted(PUBLIC_TYPES))}")
    spec = raw.get("task") or {}
    goals = spec.get("goal") or []
    if not goals:
        raise _FieldError("task.goal", "no task.goal entries (keyword, location, time)")
    if kind is not TaskType.asking_for_help and len(goals) > 1:
        raise _FieldError("task.goal", f"{len(goals)} goal entries; only asking for help has "
                                       "several steps here")
    named = str(raw.get("performer") or "").strip()
    performer = placer.person(named) if named and not is_wildcard(named) else None
    choices, anyone = placer.people(list(raw.get("performer_choices") or []))
    anyone = anyone or is_wildcard(named)
    targets, any_target = placer.people(list(spec.get("target") or [])) \
        if kind is TaskType.appointment else ([], False)
    if any_target:  # whoever the performer wants to meet: every resident but them
        targets = sorted(placer.residents)
    first = goals[0]
    day, clocks = _times(raw, first)
    published = public_time(first.get("start_time"))  # read by _times: never raises here
    said = {field: str(raw.get(field) or raw.get("goal") or "") for field in ("FPG",
                                                                              "Description")}
    day, day_from = _event_day(day, said)
    data: dict[str, Any] = {
        "id": task_id, "type": kind.value,
        "title": str(raw.get("goal") or raw.get("env_name") or kind.value),
        "note": str(raw.get("Note") or ""),
    }
    if performer:
        data["performer"] = performer
    elif choices and not anyone:
        data["performer_choices"] = choices
    elif raw.get("role_requirement"):  # drawn from everyone whose occupation fits
        data["performer_role"] = _role(raw["role_requirement"])
    elif anyone:
        data["performer_choices"] = sorted(placer.residents)
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
    data["date"] = day.isoformat()
    time_notes = []
    if kind in (TaskType.public_activity, TaskType.online_activity) and clocks:
        # The reference plans and scores only the goal's own start: the other choices are
        # drawn per seed only when asked, so that a task runs at the time it was published.
        data["time_choices"] = clocks if draw_times or published is None else clocks[:1]
        if published is not None:
            data["published_time"] = published[1]
        if len(clocks) > 1 and published is None:
            time_notes.append(f"time drawn per seed from {', '.join(clocks)}: no published "
                              "time (task.goal.0.start_time N/A)")
        elif len(clocks) > 1:
            time_notes.append(
                f"time drawn per seed from {', '.join(clocks)} (--draw-times); published "
                f"{clocks[0]}" if draw_times else
                f"runs at its published time {clocks[0]} (task.goal.0.start_time), as the "
                f"reference does; its other time_choices ({', '.join(clocks[1:])}) are drawn "
                "per seed only with --draw-times")
        data["duration_minutes"] = int(first.get("duration_in_minutes") or 0)
    if targets:
        data["target_choices"] = targets
    if placer.unplaced:
        names = sorted(set(placer.unplaced))
        raise ImportProblem(path, "cannot place these names in world "
                                  f"'{world.name}': {', '.join(n.described() for n in names)}; "
                                  "map them with a name map", label, unplaced=names)
    if data.get("duration_minutes", 1) <= 0:
        # No made-up default: the duration is the scoring window, and an invented one would
        # change who counts without anyone noticing.
        raise _FieldError("task.goal.0.duration_in_minutes",
                          f"duration_in_minutes {data['duration_minutes']}: a {kind.value} task "
                          "starts at a fixed time and needs how long it lasts (> 0) for its "
                          "scoring window")
    warnings, notes = [], []
    others = [c for c in choices if c != performer]  # whom a named performer leaves out
    if performer and others and not anyone:  # (#Any holds the named performer too)
        if performer in choices:
            notes.append(f"performer_choices not used: the task names its performer, "
                         f"{performer}")
        else:  # the file contradicts itself; the named performer is the one its sentences name
            warnings.append(f"performer {named!r} is not among performer_choices "
                            f"({', '.join(raw['performer_choices'])}); {performer} performs "
                            "and the choices are not used")
    sentences = {}
    for field in ("FPG", "Description"):
        text = placer.sentence(said[field])
        sentences[field] = _fill_public_placeholders(text, field, kind, data, day, warnings)
    # The title names the time drawn too: the header's title, the sentence told and the score
    # name one time.
    sentences["title"] = placer.sentence(data["title"])
    for field, text in sentences.items():
        _check_days(field, text, day, day_from)
    told = tell_drawn_values(
        sentences, world=world, time_choices=data.get("time_choices", []),
        duration=data.get("duration_minutes"), location_choices=data.get("location_choices", []),
        day=day)
    data["goal"], data["target"] = told.sentences["FPG"], told.sentences["Description"]
    data["title"] = told.sentences["title"]
    if data.get("time_choices"):
        data["time_choices"] = told.time_choices
    if data.get("location_choices"):
        data["location_choices"] = told.location_choices
    warnings += told.warnings + _count_warnings(kind, told.sentences["Description"],
                                                spec.get("target_num"))
    data.update(name_mapping=placer.mapped, import_warnings=warnings,
                import_notes=time_notes + told.notes + notes,
                reference_places=placer.written)
    target_num = spec.get("target_num")
    if isinstance(target_num, int) and not isinstance(target_num, bool) and target_num >= 1:
        data["target_num"] = target_num
    elif target_num is not None:
        raise _FieldError("task.target_num", f"target_num {target_num!r} is not a head count "
                                             "(an integer >= 1, the performer included)")
    try:
        template = parse_template(data, path)
    except FileFormatError as exc:
        raise _FieldError(exc.where or "task", exc.reason) from exc
    problems = check_in_world(template, world)
    if problems:
        raise _FieldError(problems[0][0], problems[0][1])
    return template


_PUBLIC_PLACEHOLDER = re.compile(r"#[a-z]+(?:_[a-z]+|_\d+)?\b")


def _fill_public_placeholders(text: str, field: str, kind: TaskType, data: dict[str, Any],
                              day: date | None, warnings: list[str]) -> str:
    """The public meta-task files write their sentences with their own placeholders, which the
    public code fills as it draws a task: #performer, #target_0, #location_0, #time_0,
    #target_num. Here they become ours, so that the sentence states what each seed draws
    (#target_num: the count our score uses, {expected}); a step's #location_N of a help task
    is that step's place. One that nothing fills here is left, with a warning."""
    fixed_time = kind in (TaskType.public_activity, TaskType.online_activity)
    steps = [s["location"] for s in data.get("steps", [])]

    def ours(found: re.Match) -> str:
        word = found[0][1:]
        index = int(word.rsplit("_", 1)[1]) if word[-1].isdigit() else 0
        if word == "performer":
            return "{performer}"
        if word == "target_0" and kind is TaskType.appointment:
            return "{target}"
        if word == "target_num" and kind in SHARE:
            return "{expected}"
        if word == "time_0" and fixed_time:
            return f"{day} {{time}}" if day else "{time}"  # as the public code writes it
        if word.startswith("location_") and data.get("location_choices") and index == 0:
            return "{place}"
        if word.startswith("location_") and index < len(steps):
            return place_name(steps[index])
        warnings.append(f"{field} holds {found[0]}, a public placeholder that nothing fills "
                        f"for a {kind.value} task; left as written")
        return found[0]

    return _PUBLIC_PLACEHOLDER.sub(ours, text)


def _role(requirement: Any) -> str:
    """role_requirement: a text, or (in some files) a list holding one."""
    if isinstance(requirement, list):
        if len(requirement) != 1:
            raise _FieldError("role_requirement", f"{requirement!r}: one role is read here, "
                                                  "the words the performer's occupation holds")
        requirement = requirement[0]
    return str(requirement)


def _count_warnings(kind: TaskType, description: str, target_num: Any) -> list[str]:
    """A head count the Description states that a score will not use: ours counts against
    ceil(background / 2) (or / 3) over the 10-12 background residents drawn per seed; the
    public code (and our reference rule set) against target_num - 1 (target_num counts the
    performer)."""
    if kind not in SHARE:
        return []
    lo, hi = TaskTemplate.model_fields["background"].default
    scored = sorted({expected_count(kind, n) for n in range(lo, hi + 1)})
    out = []
    for count in dict.fromkeys(stated_counts(description)):
        if count not in scored:
            out.append(f"Description states {count} people, but the score counts against "
                       f"{' or '.join(map(str, scored))} here ({lo}-{hi} background residents)")
        if isinstance(target_num, int) and target_num - 1 != count:
            out.append(f"Description states {count} people, but its target_num {target_num} "
                       f"counts against {target_num - 1} (the performer and {target_num - 1} "
                       "others) in the public code")
    return out


class FailedTask(BaseModel):
    """A public task that did not become a template: its index in the file, its id, where
    (`[4] (party_3).time_choices.1`) and why."""

    index: int
    id: str
    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class PublicImport:
    """What importing one public file gave: the templates, and the tasks that failed alone."""

    source: Path
    templates: list[TaskTemplate]
    failed: list[FailedTask]

    @property
    def total(self) -> int:
        return len(self.templates) + len(self.failed)


def import_public_tasks(path: Path | str, world: World, name_map: dict[str, str] | None = None,
                        *, strict_names: bool = False, draw_times: bool = False) -> PublicImport:
    """Every task of a public STSS file as templates. A task that cannot be placed or is
    malformed fails alone: it is in `failed` with its index, id and the reason, and the others
    import. With `strict_names`, a place name must be the world's own (no near match) and any
    failure refuses the whole file: an ImportProblem listing every name of the file that could
    not be placed (with the tasks that use it and the nearest names the world has), or else
    the first task's error."""
    tasks = read_public_tasks(path)
    ids = [public_id(raw, i) for i, raw in enumerate(tasks)]
    repeated = {i for i in ids if ids.count(i) > 1}  # e.g. every task named after one base
    ids = [f"{t}_{i}" if t in repeated else t for i, t in enumerate(ids)]
    out, failed, errors = [], [], []
    unplaced: dict[Unplaced, list[str]] = {}  # name -> the tasks that use it
    for i, raw in enumerate(tasks):
        try:
            out.append(import_task(raw, world, name_map, path=path, index=i, task_id=ids[i],
                                   strict_names=strict_names, draw_times=draw_times))
        except ImportProblem as exc:
            errors.append(exc)
            failed.append(FailedTask(index=i, id=ids[i], where=exc.where, reason=exc.reason))
            for name in exc.names:
                unplaced.setdefault(name, []).append(task_label(i, ids[i]))
    if strict_names and unplaced:
        parts = [f"{n.described()} in {', '.join(tasks)}" for n, tasks in sorted(unplaced.items())]
        raise ImportProblem(path, f"cannot place {len(unplaced)} name(s) in world "
                                  f"'{world.name}': {'; '.join(parts)}. Map them with a name "
                                  "map, or import the world they come from",
                            unplaced=list(unplaced))
    if strict_names and errors:
        raise errors[0]
    return PublicImport(Path(path), out, failed)


class TemplateImport(BaseModel):
    """What the import decided on its own for one template (see TaskTemplate)."""

    name_mapping: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ImportReport(BaseModel):
    """The import, as the suite table lists it: the public file and how many of its tasks
    became templates (when the suite imported one), the tasks that failed, and per template
    the place names matched near, the warnings and the notes."""

    source: str | None = None
    tasks: int | None = None
    failed: list[FailedTask] = Field(default_factory=list)
    templates: dict[str, TemplateImport] = Field(default_factory=dict)

    @property
    def imported(self) -> int | None:
        return None if self.tasks is None else self.tasks - len(self.failed)


def import_report(templates: list[TaskTemplate], imported: PublicImport | None = None
                  ) -> ImportReport | None:
    """The report of `imported` (a suite run from a public file), or of templates imported
    earlier and read from their YAML files; None when there is nothing to say."""
    said = {t.id: TemplateImport(name_mapping=t.name_mapping, warnings=t.import_warnings,
                                 notes=t.import_notes)
            for t in templates if t.name_mapping or t.import_warnings or t.import_notes}
    if imported is None:
        return ImportReport(templates=said) if said else None
    return ImportReport(source=str(imported.source), tasks=imported.total,
                        failed=imported.failed, templates=said)


def write_templates(templates: list[TaskTemplate], directory: Path | str) -> list[Path]:
    """Save templates as our YAML files (one per task), for editing and `sandbox run`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for template in templates:
        data = json.loads(template.model_dump_json(exclude_defaults=True))
        path = directory / f"{template.id}.yaml"
        write_atomic(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        paths.append(path)
    return paths
