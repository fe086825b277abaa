"""STSS task templates: the YAML schema for the five task types of the STSS paper (Table 2).

A template says who performs the task (a named resident, a list to draw from, or a role the
performer's occupation must name), the sentence injected into the performer's `currently` (the
goal) and the sentence that states what counts as success (the target), the keyword an agent's
action must contain to count (plus alternatives), and, per type:

| type                  | time                    | place                   | also          |
|-----------------------|-------------------------|-------------------------|---------------|
| public_activity       | `time_choices` (fixed)  | `location_choices`      | duration      |
| appointment           | negotiated              | negotiated              | `target_choices` |
| inviting_companions   | negotiated              | `location_choices`      |               |
| online_activity       | `time_choices` (fixed)  | anywhere                | duration      |
| asking_for_help       | none                    | one per step            | `steps` in order |

Sentences may use placeholders filled at instantiation: {performer} {first_name} {place}
{time} {end_time} {date} {weekday} {target} {target_first} {expected} {home} (the sector where
the performer lives; a step's location may be `{performer_home}`). Load with
`load_template(path, world)`: a bad file fails with the file, the field and the reason.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import string
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sandbox.files import FileFormatError, read_data, validation_error
from sandbox.pathnames import component_problem
from sandbox.simtime import sim_time_problem
from worlds import AddressError, World

from .residents import residents_of

TEMPLATES_DIR = Path(__file__).with_name("templates")
PLACEHOLDERS = frozenset({"performer", "first_name", "place", "time", "end_time", "date",
                          "weekday", "target", "target_first", "expected", "home"})
PERFORMER_HOME = "{performer_home}"  # a step location: the sector where the performer lives
_CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class TaskType(StrEnum):
    public_activity = "public_activity"
    appointment = "appointment"
    inviting_companions = "inviting_companions"
    online_activity = "online_activity"
    asking_for_help = "asking_for_help"

    @property
    def label(self) -> str:
        """The column heading of the paper's Table 4."""
        return {"public_activity": "Pub. Act.", "appointment": "Appo.",
                "inviting_companions": "Inv. Com.", "online_activity": "Online Act.",
                "asking_for_help": "Help"}[self.value]


def clock(value: str | int) -> str:
    """An HH:MM time of day (YAML 1.1 reads an unquoted 17:00 as the number 1020)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 24 * 60:
        return f"{value // 60:02d}:{value % 60:02d}"
    if not isinstance(value, str) or not _CLOCK.match(value.strip()):
        raise ValueError(f"{value!r} is not a time of day HH:MM (24-hour)")
    return value.strip()


class Step(BaseModel):
    """One action the scorer looks for: its keyword (or an alternative) at a place."""

    model_config = ConfigDict(extra="forbid")

    keyword: str = Field(min_length=1)
    alternatives: list[str] = Field(default_factory=list)
    location: str | None = None  # an address; PERFORMER_HOME for the performer's home sector


class TaskTemplate(BaseModel):
    """One social-task template as written in its YAML file."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""  # defaults to the file name without .yaml
    type: TaskType
    title: str = Field(min_length=1)
    goal: str = Field(min_length=1)  # injected into the performer's `currently`
    target: str = Field(min_length=1)  # what success is, also injected
    performer: str | None = None
    performer_choices: list[str] = Field(default_factory=list)
    performer_role: str | None = None  # words the performer's occupation must contain
    target_choices: list[str] = Field(default_factory=list)  # appointment: whom to meet
    keyword: str | None = None
    alternatives: list[str] = Field(default_factory=list)
    location_choices: list[str] = Field(default_factory=list)
    time_choices: list[str] = Field(default_factory=list)
    # An imported public task's own time (its goal's start_time): what the reference runs and
    # scores; a seed draws among time_choices only when the import was asked to (--draw-times).
    published_time: str | None = None
    duration_minutes: int | None = None
    steps: list[Step] = Field(default_factory=list)  # asking for help, in order
    date: dt.date | None = None  # the event day [default: 2024-02-14; imported: the file's]
    background: tuple[int, int] = (10, 12)  # how many background residents, drawn per seed
    note: str = ""
    # Written by the public importer (tasks/stss/importer.py) and listed in the suite table, so
    # that what the import decided on its own is seen where the scores are read:
    name_mapping: dict[str, str] = Field(default_factory=dict)  # public place -> our address
    import_warnings: list[str] = Field(default_factory=list)  # the public task contradicts itself
    import_notes: list[str] = Field(default_factory=list)  # choices the import narrowed, and why
    # For the reference rule set (evaluation/stss/reference.py), which counts as the STSS
    # authors' scorer does: how many people the task is for, the performer included (the public
    # files' `target_num`; its denominators are target_num - 1). Without it, the reference
    # rules divide by the same count ours do (ceil(background / 2) or / 3), and say so.
    target_num: int | None = Field(default=None, ge=1)
    # Our address -> the place as the public file wrote it (after the name map): the reference
    # tests that text as a case-sensitive substring of an address, so a name we matched near
    # ("Hobbs Coffee" for Hobbs Cafe) stays unmatched there, as it is in the authors' runs.
    reference_places: dict[str, str] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_names_a_file(cls, value: str) -> str:
        # The id names the template's file and its suite folder (OUT/<id>/...).
        if value and (problem := component_problem(value)):
            raise ValueError(f"{problem}; an id is one file name")
        return value

    @field_validator("time_choices", mode="before")
    @classmethod
    def _clocks(cls, values):
        return [clock(v) for v in values] if isinstance(values, list) else values

    @field_validator("published_time", mode="before")
    @classmethod
    def _published(cls, value):
        return None if value is None else clock(value)

    @field_validator("keyword", "alternatives")
    @classmethod
    def _no_blank(cls, value):
        words = value if isinstance(value, list) else [value]
        if any(w is not None and not w.strip() for w in words):
            raise ValueError("a keyword cannot be blank")
        return value

    # -- what the scorer will look for ----------------------------------------------------------
    def scored_steps(self) -> list[Step]:
        """The actions scored: the steps of a help task, else the one keyword (and place)."""
        if self.type is TaskType.asking_for_help:
            return self.steps
        return [Step(keyword=self.keyword or "", alternatives=self.alternatives)]

    def check(self) -> list[tuple[str, str]]:
        """Rules between fields, as (field, reason) pairs; empty when the template is sound."""
        t, problems = self.type, []
        fixed_time = t in (TaskType.public_activity, TaskType.online_activity)
        if t is TaskType.asking_for_help:
            if not self.steps:
                problems.append(("steps", "an asking_for_help task needs its steps, in order"))
            if self.keyword:
                problems.append(("keyword", "asking_for_help scores its steps; put each keyword "
                                            "in a step"))
            if self.alternatives:  # the scorer would ignore them
                problems.append(("alternatives", "asking_for_help scores its steps; put the "
                                                 "alternatives in the step they belong to"))
            for i, step in enumerate(self.steps):
                if not step.location:
                    problems.append((f"steps.{i}.location", "each step needs the place where "
                                                            "it must be done"))
        elif not self.keyword:
            problems.append(("keyword", f"missing keyword: a {t.value} task needs the word an "
                                        "agent's action must contain to count"))
        elif self.steps:
            problems.append(("steps", f"only asking_for_help has steps, not {t.value}"))
        needs_place = t in (TaskType.public_activity, TaskType.inviting_companions)
        if needs_place and not self.location_choices:
            problems.append(("location_choices", f"a {t.value} task happens at a fixed place: "
                                                 "give at least one"))
        if not needs_place and self.location_choices:
            where = {"appointment": "the two agree on it", "online_activity": "it is online",
                     "asking_for_help": "each step has its own"}[t.value]
            problems.append(("location_choices", f"a {t.value} task has no fixed place "
                                                 f"({where})"))
        if fixed_time:
            if not self.time_choices:
                problems.append(("time_choices", f"a {t.value} task starts at a fixed time: "
                                                 "give at least one HH:MM"))
            if self.duration_minutes is None:
                problems.append(("duration_minutes", "how long the activity lasts is needed "
                                                     "for its time window"))
        elif self.time_choices:
            problems.append(("time_choices", f"a {t.value} task has no fixed time"))
        if not fixed_time and self.duration_minutes is not None:  # it would be ignored
            problems.append(("duration_minutes", f"a {t.value} task has no time window: only "
                                                 "public and online activity take a duration"))
        if self.duration_minutes is not None and self.duration_minutes <= 0:
            problems.append(("duration_minutes", f"the window ends before it starts "
                                                 f"(duration_minutes {self.duration_minutes}; "
                                                 "it must be > 0)"))
        too_long = sim_time_problem(self.duration_minutes * 60) \
            if self.duration_minutes is not None else None
        if too_long is not None:  # the episode runs to the window's end
            problems.append(("duration_minutes", f"{self.duration_minutes} {too_long}"))
        if t is TaskType.appointment and not self.target_choices:
            problems.append(("target_choices", "an appointment needs the person to meet"))
        if t is not TaskType.appointment and self.target_choices:
            problems.append(("target_choices", "only an appointment has a target character"))
        if not (self.performer or self.performer_choices or self.performer_role):
            problems.append(("performer", "name the performer, give performer_choices, or a "
                                          "performer_role"))
        if self.performer and (self.performer_choices or self.performer_role):
            problems.append(("performer", "a fixed performer leaves no choice: drop "
                                          "performer_choices and performer_role"))
        lo, hi = self.background
        if not 0 <= lo <= hi:
            problems.append(("background", f"not a range: {lo} to {hi}"))
        for field in ("title", "goal", "target"):
            for name in _placeholders(getattr(self, field)):
                if name not in PLACEHOLDERS:
                    problems.append((field, f"unknown placeholder {{{name}}}; known: "
                                            f"{', '.join(sorted(PLACEHOLDERS))}"))
        return problems


def _placeholders(text: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:  # an unmatched brace
        return [f"(bad braces: {exc})"]


def check_in_world(template: TaskTemplate, world: World) -> list[tuple[str, str]]:
    """Names and places the template uses that the world does not have, as (field, reason)."""
    problems = []
    residents = residents_of(world)
    names = [("performer", template.performer)] if template.performer else []
    names += [(f"performer_choices.{i}", n) for i, n in enumerate(template.performer_choices)]
    names += [(f"target_choices.{i}", n) for i, n in enumerate(template.target_choices)]
    for field, name in names:
        if name not in residents:
            close = [n for n in residents if n.split()[0] == name.split()[0]] or \
                difflib.get_close_matches(name, list(residents), n=2, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            problems.append((field, f"no resident {name!r} in world '{world.name}'{hint}"))
    if template.performer_role:
        role = template.performer_role.lower()
        pool = template.performer_choices or list(residents)
        if not any(role in residents[n].occupation.lower() for n in pool if n in residents):
            problems.append(("performer_role", f"no resident's occupation mentions {role!r}"))
    places = [(f"location_choices.{i}", p) for i, p in enumerate(template.location_choices)]
    places += [(f"steps.{i}.location", s.location) for i, s in enumerate(template.steps)
               if s.location and s.location != PERFORMER_HOME]
    for field, place in places:
        try:
            world.resolve(place)
        except AddressError as exc:
            problems.append((field, str(exc)))
    return problems


def parse_template(data: object, path: Path | str, world: World | None = None) -> TaskTemplate:
    """Validate loaded data as a template; every problem names the file and field."""
    try:
        template = TaskTemplate.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from exc
    if not template.id:
        template.id = Path(path).stem
    problems = template.check() + (check_in_world(template, world) if world else [])
    if problems:
        field, reason = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise FileFormatError(path, reason + more, field)
    return template


def load_template(path: Path | str, world: World | None = None) -> TaskTemplate:
    """Read one template file (YAML); with a world, check its names and places exist there."""
    path = Path(path)
    data = read_data(path)
    return parse_template(data, path, world)


def builtin_templates() -> list[Path]:
    """The template files shipped in tasks/stss/templates, sorted."""
    return sorted(TEMPLATES_DIR.glob("*.yaml"))


def template_names() -> list[str]:
    """The built-in templates' names (their files' stems), sorted."""
    return [path.stem for path in builtin_templates()]


def nearest_templates(name: str, n: int = 3) -> list[str]:
    """The built-in template names closest to a misspelt one, nearest first: those about as
    close as the nearest (every name shares a type's prefix with five others), none when
    nothing is close."""
    import difflib

    def closeness(other: str) -> float:
        return difflib.SequenceMatcher(None, name, other).ratio()

    close = difflib.get_close_matches(name, template_names(), n=n)
    return [c for c in close if closeness(c) >= closeness(close[0]) - 0.1]


def template_path(name_or_path: str | Path) -> Path:
    """A path to a template file, or the built-in template of that name."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return path
    builtin = TEMPLATES_DIR / f"{name_or_path}.yaml"
    if builtin.exists():
        return builtin
    raise FileFormatError(path, "no such template file, and no built-in template of that name "
                                f"(see {TEMPLATES_DIR})")


def is_template_ref(text: str) -> bool:
    """Whether a `sandbox run` argument names a template (a file or a built-in name)."""
    path = Path(text)
    return path.suffix in (".yaml", ".yml") or (TEMPLATES_DIR / f"{text}.yaml").exists()
