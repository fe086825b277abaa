"""Harvest: the language-level scenarios of STSS run directories (the log only, and the world's
resident files for the personas the header names).

Every conversation the performer had becomes a scenario, with the paper's rules (section 3.2):
at most two per (task, pair of characters), and for appointment tasks only the ones between the
performer and the target. A task is a template instance (template and seed): runs of one task
under several architectures share the cap. Memories are those the two characters had when the
conversation began; nothing added later (its own summary included) goes in.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path

from agents.frozen import memories_at
from sandbox.events import ConversationEnded, ConversationStarted, Utterance
from sandbox.events.agent import MemoryAdded, MemoryRetrieved, TaskPlanned
from sandbox.log import Run, RunFormatError, load_run, read_header
from tasks.kit import name_id
from tasks.stss.schema import TaskType

from .schema import (
    Character,
    Line,
    Scenario,
    ScenarioSet,
    Source,
    TaskFacts,
    TDPPlans,
)

PER_PAIR = 2  # the paper: at most two conversation instances per pair of characters and task


class NotAnSTSSRun(Exception):
    """A directory given to the harvest is not an STSS run (nor a folder holding some)."""


def stss_runs(paths: Iterable[Path | str], unreadable: list[str] | None = None) -> list[Path]:
    """Every STSS run directory under `paths` (a run, or a suite holding runs), sorted. A run
    directory inside a suite whose header does not read is added to `unreadable` (it may have
    been an STSS run; nobody can tell), never dropped quietly."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / "header.json").is_file():
            if _stss_header(path) is not True:
                raise NotAnSTSSRun(f"{path} is a run, but not an STSS task episode")
            found.append(path)
            continue
        if not path.is_dir():
            raise NotAnSTSSRun(f"{path}: no such run directory or suite")
        inside = []
        for header in sorted(path.rglob("header.json")):
            kind = _stss_header(header.parent)
            if kind is True:
                inside.append(header.parent)
            elif isinstance(kind, str) and unreadable is not None:
                unreadable.append(kind)  # it names the header
        if not inside:
            raise NotAnSTSSRun(f"{path} holds no STSS run directory")
        found += inside
    return list(dict.fromkeys(found))


def _stss_header(run_dir: Path) -> bool | str:
    """True for an STSS run, False for another run, why not when its header does not read."""
    try:
        return "stss_task" in read_header(run_dir).config
    except RunFormatError as exc:
        return str(exc)


def task_id(template: str, seed: int) -> str:
    return f"{template}-s{seed}"  # template names are file stems: unique, readable


def harvest(paths: Iterable[Path | str], *, per_pair: int = PER_PAIR) -> ScenarioSet:
    """The scenario set of every STSS run under `paths`, in run then log order."""
    problems: list[str] = []
    runs = stss_runs(paths, problems)
    taken: dict[tuple[str, str], int] = {}
    scenarios: list[Scenario] = []
    for run_dir in runs:
        run = load_run(run_dir)
        problems += [f"{run_dir}/{p.file} line {p.line}: {p.reason}" for p in run.problems]
        for scenario in run_scenarios(run):
            key = (scenario.task.id, scenario.partner.name)
            if taken.get(key, 0) >= per_pair:
                continue
            taken[key] = taken.get(key, 0) + 1
            scenario.id = f"{scenario.task.id}__{name_id(scenario.partner.name)}-{taken[key]}"
            scenarios.append(scenario)
    return ScenarioSet(harvested_from=[str(r) for r in runs], scenarios=scenarios,
                       problems=problems)


def _personas(world: str) -> dict[str, dict]:
    from agents.persona import Persona
    from tasks.stss.residents import residents_of
    from worlds import load_world

    return {name: Persona.from_resident(r).model_dump(mode="json")
            for name, r in residents_of(load_world(world)).items()}


def _step(step: dict) -> dict:
    """A task step as the language level states it: keyword, alternatives and place (not how
    the reference rule set reads the place, which only the action level uses)."""
    return {k: step[k] for k in ("keyword", "alternatives", "location") if k in step}


def run_scenarios(run: Run) -> list[Scenario]:
    """Every eligible conversation of one run (no cap applied), ids left empty."""
    config = run.header.config
    stss = config["stss_task"]
    town = config.get("town", {})
    performer = stss["performer"]
    kind = TaskType(stss["type"])
    target = stss.get("target")
    facts = TaskFacts(
        id=task_id(stss["template"], int(stss.get("seed", run.header.seed))),
        template=stss["template"], title=stss.get("title", ""), type=kind, goal=stss["goal"],
        criteria=stss.get("criteria", ""),
        text=town.get("tasks", {}).get(performer, stss["goal"]), performer=performer,
        target=target, steps=[_step(s) for s in stss.get("steps", [])], start=stss.get("start"),
        end=stss.get("end"))
    architectures = {**{n: town.get("architecture", "ga") for n in town.get("residents", [])},
                     **town.get("architectures", {})}
    personas = _personas(town.get("world", run.header.world or "town"))
    events = run.events
    start = run.header.start_time
    ends = {e.conversation: i for i, e in enumerate(events) if isinstance(e, ConversationEnded)}
    found: list[Scenario] = []
    for index, event in enumerate(events):
        if not isinstance(event, ConversationStarted) or performer not in event.participants:
            continue
        partner = next((p for p in event.participants if p != performer), None)
        if partner is None or (kind is TaskType.appointment and partner != target):
            continue
        end = ends.get(event.conversation, len(events))
        original = [Line(agent=e.agent or "", text=e.text) for e in events[index:end]
                    if isinstance(e, Utterance) and e.conversation == event.conversation]
        if not original:
            continue

        def character(name: str, _event=event, _end=end) -> Character:
            return Character(
                name=name, persona=personas.get(name, {"name": name, "living_area": ""}),
                architecture=architectures.get(name, "ga"),
                # created by its start and logged before it ended (one scored during its first
                # turn counts)
                memories=memories_at(events[:_end], name, _event.t),
                retrieved=_retrieved(events[:_end], name, _event),
                tdp=_tdp(events[:_end], name, _event.t))

        found.append(Scenario(
            id="", task=facts, performer=character(performer), partner=character(partner),
            initiator=event.participants[0],
            at=start + timedelta(seconds=event.t),
            location=event.location, original=original,
            source=Source(run=str(run.dir), seed=run.header.seed,
                          conversation=event.conversation, models=dict(run.header.models),
                          world=town.get("world", "town"), embedder=town.get("embedder"),
                          action_score=_action_score(run.dir))))
    return found


def _action_score(run_dir) -> float | None:
    """The run's action-level score as `sandbox score` wrote it (score.json), if it did."""
    import json

    try:
        return float(json.loads((Path(run_dir) / "score.json").read_text(encoding="utf-8"))
                     ["score"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _retrieved(events, agent: str, started: ConversationStarted) -> list[str]:
    """What the agent retrieved for its first line of this conversation."""
    described = {e.memory: e.description for e in events
                 if isinstance(e, MemoryAdded) and e.agent == agent}
    for e in events:
        if (isinstance(e, MemoryRetrieved) and e.agent == agent and e.t >= started.t
                and e.purpose == "converse.turn"):
            return [described[i] for i in e.ids if i in described]
    return []


def _tdp(events, agent: str, at: float) -> TDPPlans | None:
    plans = [e for e in events if isinstance(e, TaskPlanned) and e.agent == agent
             and e.t <= at and (e.general_plan or e.conversation_reminder)]
    if not plans:
        return None
    return TDPPlans(general_plan=plans[-1].general_plan,
                    conversation_reminder=plans[-1].conversation_reminder)
