"""A day in a town: an episode Scenario (sandbox.runner protocol) of generative agents.

    scenario = TownScenario(TownConfig(world="town", residents=["Agnes Whitfield", ...],
                                       architecture="ga",
                                       architectures={"Agnes Whitfield": "ga_tdp"},
                                       tasks={"Agnes Whitfield": "Agnes wants to ..."},
                                       whispers=[Whisper.parse("Agnes Whitfield@09:00: ...")],
                                       hours=16))
    run_episode(scenario, llm, seed=0, out_dir="runs/day")

From a shell: `sandbox run town_day [--config FILE.yaml]` (tasks/scenarios/town_day.py), with
options that change the file (`--performer NAME --arch ga_tdp --task TEXT`, `--residents N`,
`--hours H`, ...). The STSS episode (tasks/stss/episode.py) builds the same thing from a task
template: personas from the world's residents, `ga_tdp` for the performer and `ga` for the
others, the task injected into the performer's `currently` and task planner. A whisper is a
memory planted in a resident at a simulated time (agents.society.Society.whisper); a fork
(`sandbox fork`) changes a running town through `change_architecture` and `whisper`.
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.registry import distribution
from agents.society import Society, build_society
from sandbox.engine import Engine
from sandbox.simtime import TimeSpecError, clock_text, parse_time
from worlds import WorldState, load_world, world_residents


class Whisper(BaseModel):
    """A memory planted in a resident at a simulated time, as a thought it believes it had
    (`--whisper "NAME@HH:MM: text"`, or an entry of a town file's `whispers:`)."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    # HH:MM (the first such time at or after the start), 'YYYY-MM-DD HH:MM', or +1h30m
    at: str = Field(min_length=1)
    text: str = Field(min_length=1)

    @field_validator("at", mode="before")
    @classmethod
    def _time(cls, value):
        if isinstance(value, datetime):
            return value.isoformat(sep=" ")
        if isinstance(value, int) and not isinstance(value, bool):  # YAML 1.1 reads 07:30 as 450
            return f"{value // 60:02d}:{value % 60:02d}"
        return value

    @classmethod
    def parse(cls, spec: str) -> Whisper:
        """`NAME@TIME: text` -> a Whisper; ValueError saying how to write one."""
        found = _WHISPER.fullmatch(spec.strip())
        if found is None or not found["text"].strip():
            raise ValueError(f"{spec!r}: write NAME@HH:MM: text (or NAME@'YYYY-MM-DD HH:MM': "
                             "text, NAME@+1h30m: text)")
        return cls(agent=found["agent"].strip(), at=found["at"], text=found["text"].strip())

    def __str__(self) -> str:
        return f"{self.agent}@{self.at}: {self.text}"

    def seconds(self, start: datetime) -> float:
        """When it is planted, in seconds since `start`; ValueError if `at` is not a time."""
        try:
            return parse_time(self.at, start)
        except TimeSpecError as exc:
            raise ValueError(str(exc)) from None


_WHISPER = re.compile(r"(?P<agent>[^@]+)@(?P<at>\+[0-9.smhd ]+|"
                      r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2})?|\d{1,2}:\d{2}(?::\d{2})?)"
                      r"\s*:\s*(?P<text>.*)", re.DOTALL)


DEFAULT_START = datetime(2024, 2, 13, 6, 0)


def default_start(world: str) -> datetime:
    """06:00 on the world's own start date (the imported reference town's), else on ours."""
    found = load_world(world).start_date
    return DEFAULT_START if found is None else datetime.combine(found, DEFAULT_START.time())


class TownConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    world: str = "town"  # built-in name or path of a world file with residents
    residents: list[str] | None = None  # names; None: everyone in the world's residents
    architecture: str = "ga"
    architectures: dict[str, str] = Field(default_factory=dict)  # per-agent overrides
    tasks: dict[str, str] = Field(default_factory=dict)  # agent -> task text
    # [default: 06:00 on the world's start_date (the imported reference town's: February 13,
    # 2023), else on 2024-02-13]
    start_time: datetime | None = None
    hours: float = Field(default=16, gt=0)
    embedder: str | None = None  # override every architecture's (e.g. "hashing" in tests)
    # Module parameters changed in every architecture of the episode, by slot, e.g.
    # {"reflector": {"threshold": 60}}: a small town sees fewer events than the reference's.
    # A slot whose module takes no parameters (`none`: ga_no_reflection's reflector) keeps none.
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    whispers: list[Whisper] = Field(default_factory=list)  # memories planted as it runs


class TownScenario:
    """Generative agents living a day in a town; implements sandbox.runner.Scenario."""

    name = "town_day"
    # A day in a town where nobody walks or nobody talks measures nothing (sandbox/runner.py).
    expected_events = {"move": "nobody moved: no agent walked anywhere",
                       "utterance": "nobody talked: no conversation happened"}

    def __init__(self, config: TownConfig):
        if config.start_time is None:  # recorded in full: the header says when it started
            config = config.model_copy(update={"start_time": default_start(config.world)})
        self.cfg = config
        self.start_time = config.start_time
        self.world = config.world
        self.until = config.hours * 3600
        self.society: Society | None = None

    def config(self) -> dict[str, Any]:
        """The config as given, and every architecture it names in full (modules and their
        parameters after this episode's changes), so a run says exactly what each agent ran."""
        names = sorted({self.cfg.architecture, *self.cfg.architectures.values()})
        built = {n: self.architecture(n) for n in names}
        skipped = {n: sorted(self.params_not_taken(a)) for n, a in built.items()}
        described = {n: a.describe() for n, a in built.items()}
        supplied = {n: {slot: dist for slot, m in d["modules"].items()
                        if (dist := distribution(slot, m["module"]))}
                    for n, d in described.items()}
        return {**self.cfg.model_dump(mode="json"),
                "architecture_modules": described,
                **({"params_not_applied": {n: s for n, s in skipped.items() if s}}
                   if any(skipped.values()) else {}),
                # which package supplied each third-party module (absent: all built in)
                **({"module_distributions": {n: s for n, s in supplied.items() if s}}
                   if any(supplied.values()) else {})}

    def params_not_taken(self, architecture) -> set[str]:
        """The slots of the file's `params` whose module in `architecture` takes no parameter
        at all (an ablation's `none` reflector: nothing to tune): left out, and said in the
        header's `params_not_applied`. A module that takes parameters gets them, so a misspelt
        one is still an error."""
        return {slot for slot, params in self.cfg.params.items()
                if slot in architecture.params and params
                and not type(architecture.params[slot]).model_fields}

    def models(self, default_model: str) -> dict[str, str]:
        return {name: default_model for name in self.resident_names()}

    def _residents(self):
        world = load_world(self.cfg.world)
        people = world_residents(world)
        if self.cfg.residents is not None:
            by_name = {p.name: p for p in people}
            missing = [n for n in self.cfg.residents if n not in by_name]
            if missing:
                near = {c for name in missing
                        for c in difflib.get_close_matches(name, list(by_name), n=2, cutoff=0.5)}
                hint = f"; did you mean {', '.join(sorted(near))}?" if near else ""
                raise KeyError(f"no resident(s) {', '.join(missing)} in world {world.name}"
                               f"{hint} (residents: {', '.join(sorted(by_name))})")
            people = [by_name[n] for n in self.cfg.residents]
        return world, people

    def resident_names(self) -> list[str]:
        """Who lives this episode, in the order they join: the config's `residents`, or every
        resident of the world. A KeyError names those the world does not have, so a builder
        can check a config before anything runs."""
        return [p.name for p in self._residents()[1]]

    def architecture(self, name: str):
        """The named architecture with this episode's parameter changes applied."""
        from agents.architecture import load_architecture

        architecture = load_architecture(name)
        if self.cfg.embedder:
            architecture = architecture.with_params("memory", embedder=self.cfg.embedder)
        not_taken = self.params_not_taken(architecture)
        for slot, params in self.cfg.params.items():
            if slot not in architecture.params:
                raise KeyError(f"no slot {slot!r}; slots are {', '.join(architecture.params)}")
            if slot in not_taken:  # tuning a module this architecture does not have
                continue
            try:
                architecture = architecture.with_params(slot, **params)
            except ValidationError as exc:
                # Named by slot, field and module: a third-party module may lack a parameter
                # the built-in one has, and pydantic's own text names neither.
                first = exc.errors()[0]
                field = ".".join(str(part) for part in first["loc"])
                module = architecture.describe()["modules"][slot]["module"]
                taken = ", ".join(type(architecture.params[slot]).model_fields) or "none"
                raise KeyError(f"{slot}.{field}: {first['msg'].removeprefix('Value error, ')} "
                               f"(the {slot} module {module!r} of {name} takes: {taken})"
                               ) from None
        return architecture

    def planted(self) -> list[tuple[Whisper, float]]:
        """Each whisper with its time in seconds since the start; a ValueError naming the first
        whose resident is not in the episode (with the nearest names) or whose time is not
        inside it, so a builder can check a config before anything runs."""
        names = self.resident_names()
        out = []
        for whisper in self.cfg.whispers:
            try:
                out.append((whisper, whisper_time(whisper, names, self.start_time, self.until)))
            except ValueError as exc:
                raise ValueError(f"whisper {str(whisper)!r}: {exc}") from None
        return out

    def change_architecture(self, engine: Engine, name: str, architecture: str
                            ) -> dict[str, str]:
        """Swap a resident's modules for `architecture`'s (a name or file, with this
        episode's parameter changes) mid-episode; {slot: "" carried, or why it starts fresh}."""
        assert self.society is not None, "the episode has not started"
        return self.society.change_architecture(engine, name, self.architecture(architecture))

    def whisper(self, engine: Engine, whisper: Whisper, at: float) -> None:
        """Plant a whisper at `at` (seconds since the start; now or later) while it runs."""
        assert self.society is not None, "the episode has not started"
        self.society.whisper(engine, whisper.agent, whisper.text, at)

    def _society(self, town: WorldState, people, homes: list[str]) -> Society:
        loaded = {}

        def arch(name: str):
            if name not in loaded:
                loaded[name] = self.architecture(name)
            return loaded[name]

        # Every resident's home is private, also of those who sit this episode out.
        return build_society(
            town, people, architecture=arch(self.cfg.architecture),
            architectures={n: arch(a) for n, a in self.cfg.architectures.items()}, homes=homes)

    def setup(self, engine: Engine) -> None:
        world, people = self._residents()
        town = WorldState(engine, world)
        for person in people:  # a start tile of the storage base; the others start at home
            if person.start_tile is not None:
                town.place(person.name, person.start_tile)
        self.society = self._society(town, people, world.homes)
        for name, task in self.cfg.tasks.items():
            self.society.agent(name).give_task(task)
        self.society.start(engine)
        for whisper, at in self.planted():
            self.society.whisper(engine, whisper.agent, whisper.text, at)

    # -- checkpoint (sandbox/checkpoint.py) -------------------------------------------------------
    def checkpoint(self, engine: Engine) -> tuple[dict, dict]:
        assert self.society is not None, "the episode has not started"
        return self.society.checkpoint()

    def restore(self, engine: Engine, state: dict, waits: dict) -> None:
        """Build the town as `setup` does, nothing placed, logged or started, and make it the
        checkpoint's (`Society.restore`)."""
        world, people = self._residents()
        self.society = self._society(WorldState(engine, world), people, world.homes)
        self.society.restore(engine, state, waits, self.architecture)


def whisper_time(whisper: Whisper, names: list[str], start: datetime, until: float,
                 not_before: float = 0.0) -> float:
    """The whisper's time in seconds since `start`, checked: its resident among `names` (else
    the nearest ones) and its time from `not_before` to before `until`; ValueError otherwise."""
    if whisper.agent not in names:
        near = difflib.get_close_matches(whisper.agent, names, n=2, cutoff=0.5)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        raise ValueError(f"no resident {whisper.agent!r} in this episode{hint} (residents: "
                         f"{', '.join(names)})")
    at = whisper.seconds(start)
    if not_before > 0 and 0 <= at < not_before:
        raise ValueError(f"{whisper.at} is before the fork point "
                         f"({clock_text(start, not_before)})")
    if not not_before <= at < until:
        raise ValueError(f"{whisper.at} is outside the episode ({clock_text(start, not_before)}"
                         f" to {clock_text(start, until)}, starting {start:%Y-%m-%d %H:%M})")
    return at


def town_of(scenario) -> TownScenario | None:
    """The town a scenario runs: a TownScenario itself, or the one a task's episode wraps as
    its `town`; None for a scenario without one (a single room)."""
    if isinstance(scenario, TownScenario):
        return scenario
    town = getattr(scenario, "town", None)
    return town if isinstance(town, TownScenario) else None


def recorded_town(config: dict[str, Any]) -> TownScenario | None:
    """The town a run's header config records (a town day's, or the one a task's episode
    wraps under `town`), not started: to check what a change to it needs before anything
    runs. None when the config holds no town; a ValueError naming the field when it holds one
    that does not read (a damaged or hand-edited header)."""
    town = config.get("town") if isinstance(config.get("town"), dict) else config
    if not {"world", "architecture", "tasks", "hours"} <= set(town):
        return None
    fields = {k: v for k, v in town.items() if k in TownConfig.model_fields}
    try:
        return TownScenario(TownConfig.model_validate(fields))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "town"
        raise ValueError(f"its header's town does not read: {where}: {first['msg']}") from None


def performer_of(config: dict[str, Any]) -> str | None:
    """The resident a town run's header config gives a task, when exactly one has one; else
    None."""
    return performer_in(recorded_town(config))


def performer_in(town: TownScenario | None) -> str | None:
    """The resident the town gives a task, when exactly one has one; else None."""
    tasks = town.cfg.tasks if town is not None else {}
    return next(iter(tasks)) if len(tasks) == 1 else None
