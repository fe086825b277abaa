"""The STSS language level's scenario set: conversations frozen from action-level runs.

A scenario is the paper's (task, performer, target character) tuple, frozen at the moment a
conversation began in an STSS episode: both characters' personas and memory streams as they were
then (nothing from later), the context each retrieved for its first line, the performer's TDP
plans if it had any, the task's facts, and the original conversation (kept for reference; a
replay regenerates it). A set is one versioned JSON file, re-loadable without the run:

    {"format": "stss-lang-scenarios", "version": 1, "scenarios": [...]}

Times of memories are seconds relative to the conversation's start (all <= 0), so a replay can
start its clock at `at` and find the memories exactly as old as they were.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.frozen import FrozenMemory  # the memory stream as of a moment, of any run
from sandbox.files import FileFormatError, read_data, validation_error
from sandbox.storage import write_atomic
from tasks.stss.schema import TaskType

FORMAT = "stss-lang-scenarios"
VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TDPPlans(_Strict):
    """The performer's target-driven plans as made in the run (for reference: a replay under
    GA+TDP asks the model under test for its own)."""

    general_plan: list[str] = Field(default_factory=list)
    conversation_reminder: list[str] = Field(default_factory=list)


class Character(_Strict):
    name: str = Field(min_length=1)
    persona: dict[str, Any]  # agents.Persona fields, as the world's resident file gives them
    architecture: str = "ga"  # what it ran in the episode
    memories: list[FrozenMemory] = Field(default_factory=list)
    retrieved: list[str] = Field(default_factory=list)  # context of its first line in the run
    tdp: TDPPlans | None = None


class Step(_Strict):
    keyword: str
    alternatives: list[str] = Field(default_factory=list)
    location: str | None = None


class TaskFacts(_Strict):
    """What the judge is told of the task, and what the performer was given."""

    id: str  # the task instance: template and seed (the unit of the macro average)
    template: str
    title: str = ""
    type: TaskType
    goal: str
    criteria: str = ""
    text: str  # what was injected into the performer (goal and criteria)
    performer: str
    target: str | None = None
    steps: list[Step] = Field(default_factory=list)
    start: datetime | None = None
    end: datetime | None = None


class Line(_Strict):
    agent: str
    text: str


class Source(_Strict):
    run: str  # the run directory it was harvested from (for people; never read again)
    seed: int
    conversation: str
    models: dict[str, str] = Field(default_factory=dict)
    world: str = "town"
    embedder: str | None = None
    action_score: float | None = None  # the run's action-level score (its score.json), if any


class Scenario(_Strict):
    id: str
    task: TaskFacts
    performer: Character
    partner: Character
    initiator: str  # who spoke first in the run (the replay keeps the order)
    at: datetime  # when the conversation began
    location: str
    original: list[Line] = Field(default_factory=list)
    source: Source


class ScenarioSet(_Strict):
    format: Literal["stss-lang-scenarios"] = FORMAT
    version: Literal[1] = VERSION
    harvested_from: list[str] = Field(default_factory=list)
    scenarios: list[Scenario] = Field(default_factory=list)
    # What the harvest could not read: a run directory whose header does not, a damaged line
    # of a run's log (its conversations are harvested from the lines that read).
    problems: list[str] = Field(default_factory=list)


def save_set(scenarios: ScenarioSet, path: Path | str) -> Path:
    """Write atomically: a kill never leaves half a set."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, scenarios.model_dump_json(indent=1))
    return path


def load_set(path: Path | str) -> ScenarioSet:
    """Read a scenario set; FileFormatError naming the file, the field and the reason when it
    is not one, or one of another version."""
    data = read_data(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise FileFormatError(path, f"not an STSS language-level scenario set (format "
                              f"{FORMAT!r} expected; write one with `sandbox stss-harvest`)",
                              "format")
    if data.get("version") != VERSION:
        raise FileFormatError(path, f"version {data.get('version')!r}; this code reads version "
                              f"{VERSION} (harvest the runs again)", "version")
    try:
        loaded = ScenarioSet.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from exc
    if not loaded.scenarios:
        raise FileFormatError(path, "no scenarios: nothing to replay (harvest runs that have "
                                    "conversations)", "scenarios")
    for i, scenario in enumerate(loaded.scenarios):
        problem = cross_reference(scenario)
        if problem:
            raise FileFormatError(path, problem[1], f"scenarios.{i}.{problem[0]}")
    return loaded


def cross_reference(scenario: Scenario) -> tuple[str, str] | None:
    """(field, reason) of the first name in a scenario that names nobody in it: the judge would
    be asked about a person who never spoke."""
    me, other = scenario.performer.name, scenario.partner.name
    if other == me:
        return "partner.name", f"the partner has the performer's name {me!r}"
    if scenario.task.performer != me:
        return "task.performer", (f"the task's performer {scenario.task.performer!r} is not "
                                  f"the scenario's performer {me!r}")
    if scenario.initiator not in (me, other):
        return "initiator", (f"{scenario.initiator!r} started the conversation but is neither "
                             f"{me!r} nor {other!r}")
    if scenario.task.type is TaskType.appointment and scenario.task.target != other:
        return "task.target", (f"an appointment's conversation is with its target: "
                               f"{scenario.task.target!r} is not the partner {other!r}")
    for j, line in enumerate(scenario.original):
        if line.agent not in (me, other):
            return f"original.{j}.agent", f"{line.agent!r} speaks but is neither {me!r} nor " \
                                          f"{other!r}"
    from agents.persona import Persona  # the replay builds its agents from these

    for field, character in (("performer", scenario.performer), ("partner", scenario.partner)):
        try:
            persona = Persona.model_validate(character.persona)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            return f"{field}.persona.{where}", error["msg"]
        if persona.name != character.name:
            return f"{field}.persona.name", (f"the persona is {persona.name!r}, the character "
                                             f"{character.name!r}")
    return None
