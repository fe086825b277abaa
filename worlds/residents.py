"""Residents: the people of a world, one YAML file each, checked against the world's places.

Fields follow the generative-agents persona (name, age, innate, learned, currently, lifestyle,
living area) plus what a town needs: occupation, workplace, wake and sleep times, daily
requirements, whom they know, and a plain daily routine (times and places) that scripted runs
and benchmarks walk without a model. Optional: the arenas they know (`spatial_memory`, as the
reference town's personas have; otherwise they know every arena but other people's homes) and
the tile they start on (`start_tile`; otherwise their home).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sandbox.files import FileFormatError, read_data, validation_error

from .address import AddressError
from .world import World

_CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _clock(value: str | int) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 24 * 60:
        # YAML 1.1 reads an unquoted 12:30 as the base-60 number 750; take it as meant.
        return f"{value // 60:02d}:{value % 60:02d}"
    if not isinstance(value, str) or not _CLOCK.match(value):
        raise ValueError(f"{value!r} is not a time of day HH:MM (24-hour)")
    return value


def minutes(clock: str) -> int:
    """Minutes after midnight of an HH:MM time."""
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


class RoutineStep(BaseModel):
    """From `at` on, the resident goes to `place` and does `doing`."""

    model_config = ConfigDict(extra="forbid")

    at: str
    place: str
    doing: str = Field(min_length=1)

    @field_validator("at", mode="before")
    @classmethod
    def _at(cls, value: str | int) -> str:
        return _clock(value)


class Resident(BaseModel):
    """One person of the town as written in their file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    age: int = Field(ge=0, le=120)
    occupation: str = Field(min_length=1)
    innate: str = Field(min_length=1)  # a few traits, comma separated
    learned: str = Field(min_length=1)  # background, history, skills
    currently: str = Field(min_length=1)  # what occupies them these days (tasks inject here)
    lifestyle: str = Field(min_length=1)  # habits, including when they wake and sleep
    wakes_at: str
    sleeps_at: str
    living_area: str  # an address in the world (usually their home's arena)
    workplace: str | None = None  # an address, if they work somewhere
    daily_requirements: list[str] = Field(default_factory=list)
    knows: dict[str, str] = Field(default_factory=dict)  # other resident -> how they know them
    routine: list[RoutineStep] = Field(default_factory=list)
    # The arenas the resident knows (the reference's spatial memory); empty: every arena but
    # other residents' homes.
    spatial_memory: list[str] = Field(default_factory=list)
    start_tile: tuple[int, int] | None = None  # where the resident starts [default: home]

    @field_validator("wakes_at", "sleeps_at", mode="before")
    @classmethod
    def _times(cls, value: str | int) -> str:
        return _clock(value)

    @field_validator("routine")
    @classmethod
    def _in_order(cls, steps: list[RoutineStep]) -> list[RoutineStep]:
        for before, after in zip(steps, steps[1:], strict=False):
            if minutes(after.at) <= minutes(before.at):
                raise ValueError(f"routine times must increase: {after.at} after {before.at}")
        return steps


def load_resident(path: Path | str, world: World | None = None) -> Resident:
    """Read one resident file; with a world, check every place it names exists there."""
    path = Path(path)
    data = read_data(path)
    try:
        resident = Resident.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from exc
    if world is not None:
        places = [("living_area", resident.living_area)]
        if resident.workplace:
            places.append(("workplace", resident.workplace))
        places += [(f"routine.{i}.place", s.place) for i, s in enumerate(resident.routine)]
        places += [(f"spatial_memory.{i}", p) for i, p in enumerate(resident.spatial_memory)]
        for field, place in places:
            try:
                world.resolve(place)
            except AddressError as exc:
                raise FileFormatError(path, str(exc), field) from exc
        if resident.start_tile is not None and not world.walkable(resident.start_tile):
            raise FileFormatError(path, f"tile {resident.start_tile} is not a walkable tile of "
                                        f"world '{world.name}'", "start_tile")
    return resident


def load_residents(directory: Path | str, world: World | None = None) -> list[Resident]:
    """Every `*.yaml` resident in `directory`, sorted by name; all checked, or an error.

    Besides each file's own checks: names are unique, and everyone a resident `knows` lives in
    the same directory.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileFormatError(directory, "no such residents directory")
    found: dict[str, tuple[Resident, Path]] = {}
    for path in sorted(directory.glob("*.yaml")):
        resident = load_resident(path, world)
        if resident.name in found:
            raise FileFormatError(path, f"duplicate resident name {resident.name!r} (also in "
                                        f"{found[resident.name][1].name})", "name")
        found[resident.name] = (resident, path)
    for resident, path in found.values():
        for other in resident.knows:
            if other not in found:
                raise FileFormatError(path, f"knows {other!r}, who is not a resident here",
                                      f"knows.{other}")
            if other == resident.name:
                raise FileFormatError(path, "a resident cannot list themselves", f"knows.{other}")
    return [found[name][0] for name in sorted(found)]


# Residents read for a world, by (world, directory) and the files as they were then: a run reads
# them several times (the scenario, the society, the tasks), and a town of 1,000 residents takes
# seconds to parse. A file changed, added or removed since is read again.
_read: dict[tuple[int, Path], tuple[tuple, list[Resident]]] = {}


def world_residents(world: World) -> list[Resident]:
    """The residents a world file points to (its `residents:` directory), or none."""
    if not world.spec.residents:
        return []
    directory = (world.source.parent / world.spec.residents).resolve()
    stats = [(p.name, p.stat()) for p in sorted(directory.glob("*.yaml"))] \
        if directory.is_dir() else []
    files = tuple((name, st.st_mtime_ns, st.st_size) for name, st in stats)
    key = (id(world), directory)
    cached = _read.get(key)
    if cached is None or cached[0] != files:
        cached = _read[key] = (files, load_residents(directory, world))
    return list(cached[1])
