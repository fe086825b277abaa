"""Instantiation: a template and a seed become one concrete task (`STSSTask`).

The seed draws, in this order: the performer (when the template leaves a choice), the target
character (appointment), the time, the place, how many background residents (10-12 unless
overridden) and who they are (a target is always among them). The sentences get their
placeholders filled; the result is what goes into the run header and what the scorer reads.
"""

from __future__ import annotations

import datetime as dt
import math
from datetime import datetime, time, timedelta

import numpy as np
from pydantic import BaseModel, Field

from worlds import Address, World, world_ref

from .residents import residents_of
from .schema import PERFORMER_HOME, TaskTemplate, TaskType

DEFAULT_DATE = dt.date(2024, 2, 14)  # a Wednesday; the episode starts the day before
SHARE = {TaskType.public_activity: 2, TaskType.online_activity: 2,
         TaskType.inviting_companions: 3}  # expected participants = ceil(background / share)


class TaskStep(BaseModel):
    """An action the scorer looks for, with its place resolved (None: anywhere)."""

    keyword: str
    alternatives: list[str] = Field(default_factory=list)
    location: str | None = None
    # The place as the reference rule set tests it (a substring of an address; None: "N/A",
    # anywhere): the public file's text for an imported task, else our address without the
    # world's name ("Copper Kettle Cafe"), as the public files write theirs.
    reference_location: str | None = None

    @property
    def keywords(self) -> list[str]:
        return [self.keyword, *self.alternatives]


class STSSTask(BaseModel):
    """One instantiated social task: everything an episode and its scorer need."""

    template: str
    title: str
    type: TaskType
    world: str  # a name or file that loads it again (worlds.world_ref)
    seed: int
    performer: str
    background: list[str]  # everyone else in the episode
    target: str | None = None  # the person to meet (appointment)
    goal: str  # the sentence injected into the performer's `currently`
    criteria: str  # the target sentence: what counts as success
    steps: list[TaskStep]  # one for every type but asking for help
    date: dt.date  # the event day
    start: datetime | None = None  # the scoring window (None: the whole episode)
    end: datetime | None = None
    expected: int  # participants (or helpers, or the target) the score is relative to
    target_num: int | None = None  # the template's (public files'), for the reference rules
    published_time: str | None = None  # an imported task's own time; `start` differs from it
    # only when the import drew times per seed (--draw-times)

    @property
    def currently(self) -> str:
        """What the performer's `currently` becomes (goal and target, as in the STSS code)."""
        return f"{self.goal} {self.criteria}"


def place_name(address: str) -> str:
    """How a sentence names a place: the sector, with the arena when one is given."""
    parts = Address.parse(address).parts
    return parts[1] if len(parts) == 2 else f"the {parts[2]} of {parts[1]}" \
        if len(parts) >= 3 else parts[0]


def expected_count(task_type: TaskType, background: int) -> int:
    """ceil(background / 2) (public, online) or / 3 (inviting); 1 for appointment and help."""
    share = SHARE.get(task_type)
    return max(1, math.ceil(background / share)) if share else 1


def _pick(rng: np.random.Generator, options: list):
    return options[int(rng.integers(len(options)))]


def instantiate(template: TaskTemplate, seed: int, world: World, *,
                background: int | None = None) -> STSSTask:
    """The task `seed` draws from `template` in `world` (whose residents fill the roles).

    `background` overrides how many other residents take part (a short demo uses 2-3).
    """
    rng = np.random.default_rng(seed)
    residents = residents_of(world)
    pool = [template.performer] if template.performer else \
        list(template.performer_choices or residents)
    if template.performer_role:
        role = template.performer_role.lower()
        pool = [n for n in pool if role in residents[n].occupation.lower()]
    performer = _pick(rng, sorted(pool))
    target = None
    if template.type is TaskType.appointment:
        targets = [n for n in template.target_choices if n != performer]
        if not targets:
            raise ValueError(f"{template.id}: the only target choice is the performer")
        target = _pick(rng, targets)
    when = _pick(rng, template.time_choices) if template.time_choices else None
    place = str(world.resolve(_pick(rng, template.location_choices))) \
        if template.location_choices else None

    lo, hi = template.background
    count = int(rng.integers(lo, hi + 1)) if background is None else background
    others = sorted(n for n in residents if n not in (performer, target))
    count = max(count, 1 if target else 0)
    if background is not None and count > len(others) + (1 if target else 0):
        # Asked for more than the town holds: said, not quietly cut to what there is.
        raise ValueError(f"--background {background}: {world.name} has "
                         f"{len(others) + (1 if target else 0)} residents besides the "
                         "performer")
    drawn = rng.choice(len(others), size=min(len(others), count - (1 if target else 0)),
                       replace=False)
    chosen = sorted([others[int(i)] for i in drawn] + ([target] if target else []))

    day = template.date or DEFAULT_DATE
    start = end = None
    if when is not None:
        start = datetime.combine(day, time.fromisoformat(when))
        end = start + timedelta(minutes=template.duration_minutes or 0)
    home = str(Address.parse(residents[performer].living_area).up_to("sector"))
    steps = []
    for step in template.scored_steps():
        location = step.location or place  # the help steps have their own places
        if location == PERFORMER_HOME:
            location = home
        elif location is not None:
            location = str(world.resolve(location))
        written = None
        if location is not None:  # as a public task writes a place: no world name
            written = template.reference_places.get(
                location, ":".join(Address.parse(location).parts[1:]))
        steps.append(TaskStep(keyword=step.keyword, alternatives=step.alternatives,
                              location=location, reference_location=written))
    expected = expected_count(template.type, len(chosen))
    values = {
        "performer": performer, "first_name": performer.split()[0],
        "place": place_name(place) if place else "", "time": when or "",
        "end_time": end.strftime("%H:%M") if end else "",
        "date": f"{day:%B} {day.day}", "weekday": f"{day:%A}",
        "target": target or "", "target_first": target.split()[0] if target else "",
        "expected": expected, "home": place_name(home),
    }
    return STSSTask(
        template=template.id, title=template.title.format(**values).strip(), type=template.type,
        world=world_ref(world),
        seed=seed, performer=performer, background=chosen, target=target,
        goal=template.goal.format(**values).strip(),
        criteria=template.target.format(**values).strip(), steps=steps, date=day,
        start=start, end=end, expected=expected, target_num=template.target_num,
        published_time=template.published_time)
