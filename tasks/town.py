"""A day in a town: an episode Scenario (sandbox.runner protocol) of generative agents.

    scenario = TownScenario(TownConfig(world="town", residents=["Agnes Whitfield", ...],
                                       architecture="ga",
                                       architectures={"Agnes Whitfield": "ga_tdp"},
                                       tasks={"Agnes Whitfield": "Agnes wants to ..."},
                                       hours=16))
    run_episode(scenario, llm, seed=0, out_dir="runs/day")

From a shell: `sandbox run town_day [--config FILE.yaml]` (tasks/scenarios/town_day.py), with
options that change the file (`--performer NAME --arch ga_tdp --task TEXT`, `--residents N`,
`--hours H`, ...). The STSS episode (tasks/stss/episode.py) builds the same thing from a task
template: personas from the world's residents, `ga_tdp` for the performer and `ga` for the
others, the task injected into the performer's `currently` and task planner.
"""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.society import Society, build_society
from sandbox.engine import Engine
from worlds import WorldState, load_world, world_residents


class TownConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    world: str = "town"  # built-in name or path of a world file with residents
    residents: list[str] | None = None  # names; None: everyone in the world's residents
    architecture: str = "ga"
    architectures: dict[str, str] = Field(default_factory=dict)  # per-agent overrides
    tasks: dict[str, str] = Field(default_factory=dict)  # agent -> task text
    start_time: datetime = datetime(2024, 2, 13, 6, 0)
    hours: float = Field(default=16, gt=0)
    embedder: str | None = None  # override every architecture's (e.g. "hashing" in tests)
    # Module parameters changed in every architecture of the episode, by slot, e.g.
    # {"reflector": {"threshold": 60}}: a small town sees fewer events than the reference's.
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)


class TownScenario:
    """Generative agents living a day in a town; implements sandbox.runner.Scenario."""

    name = "town_day"
    # A day in a town where nobody walks or nobody talks measures nothing (sandbox/runner.py).
    expected_events = {"move": "nobody moved: no agent walked anywhere",
                       "utterance": "nobody talked: no conversation happened"}

    def __init__(self, config: TownConfig):
        self.cfg = config
        self.start_time = config.start_time
        self.world = config.world
        self.until = config.hours * 3600
        self.society: Society | None = None

    def config(self) -> dict[str, Any]:
        """The config as given, and every architecture it names in full (modules and their
        parameters after this episode's changes), so a run says exactly what each agent ran."""
        names = sorted({self.cfg.architecture, *self.cfg.architectures.values()})
        skipped = {n: sorted(self.params_not_taken(n)) for n in names}
        return {**self.cfg.model_dump(mode="json"),
                "architecture_modules": {n: self.architecture(n).describe() for n in names},
                **({"params_not_applied": {n: s for n, s in skipped.items() if s}}
                   if any(skipped.values()) else {})}

    def params_not_taken(self, name: str) -> set[str]:
        """The slots of the file's `params` whose module in architecture `name` takes no
        parameter at all (an ablation's `none` reflector: nothing to tune): left out, and said
        in the header's `params_not_applied`. A module that takes parameters gets them, so a
        misspelt one is still an error."""
        from agents.architecture import load_architecture

        architecture = load_architecture(name)
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
        not_taken = self.params_not_taken(name)
        for slot, params in self.cfg.params.items():
            if slot not in architecture.params:
                raise KeyError(f"no slot {slot!r}; slots are {', '.join(architecture.params)}")
            if slot in not_taken:  # tuning a module this architecture does not have
                continue
            architecture = architecture.with_params(slot, **params)
        return architecture

    def setup(self, engine: Engine) -> None:
        world, people = self._residents()
        loaded = {}

        def arch(name: str):
            if name not in loaded:
                loaded[name] = self.architecture(name)
            return loaded[name]

        town = WorldState(engine, world)
        for person in people:  # a start tile of the storage base; the others start at home
            if person.start_tile is not None:
                town.place(person.name, person.start_tile)
        # Every resident's home is private, also of those who sit this episode out.
        self.society = build_society(
            town, people, architecture=arch(self.cfg.architecture),
            architectures={n: arch(a) for n, a in self.cfg.architectures.items()},
            homes=world.homes)
        for name, task in self.cfg.tasks.items():
            self.society.agent(name).give_task(task)
        self.society.start(engine)
