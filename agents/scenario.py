"""A day in a town: an episode Scenario (sandbox.runner protocol) of generative agents.

    scenario = TownScenario(TownConfig(world="town", residents=["Agnes Whitfield", ...],
                                       architecture="ga",
                                       architectures={"Agnes Whitfield": "ga_tdp"},
                                       tasks={"Agnes Whitfield": "Agnes wants to ..."},
                                       hours=16))
    run_episode(scenario, llm, seed=0, out_dir="runs/day")

or from a shell (the performer's architecture is one flag):

    python -m agents.scenario --model local/smollm2-135m --residents 3 \
        --performer "Agnes Whitfield" --performer-architecture ga_tdp \
        --task "Agnes wants to hold a book sale at the library at 15:00 ..." --out runs/day

The STSS task runner builds the same thing from a task template: personas from the world's
residents, `ga_tdp` for the performer and `ga` for the others, the task injected into the
performer's `currently` and task planner.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sandbox.commands.common import non_negative_int
from sandbox.engine import Engine
from worlds import WorldState, load_world, world_residents

from .society import Society, build_society


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

    def __init__(self, config: TownConfig):
        self.cfg = config
        self.start_time = config.start_time
        self.world = config.world
        self.until = config.hours * 3600
        self.society: Society | None = None

    def config(self) -> dict[str, Any]:
        return self.cfg.model_dump(mode="json")

    def models(self, default_model: str) -> dict[str, str]:
        return {name: default_model for name in self._names()}

    def _residents(self):
        world = load_world(self.cfg.world)
        people = world_residents(world)
        if self.cfg.residents is not None:
            by_name = {p.name: p for p in people}
            missing = [n for n in self.cfg.residents if n not in by_name]
            if missing:
                raise KeyError(f"no resident(s) {', '.join(missing)} in world {world.name}")
            people = [by_name[n] for n in self.cfg.residents]
        return world, people

    def _names(self) -> list[str]:
        return [p.name for p in self._residents()[1]]

    def architecture(self, name: str):
        """The named architecture with this episode's parameter changes applied."""
        from .architecture import load_architecture

        architecture = load_architecture(name)
        if self.cfg.embedder:
            architecture = architecture.with_params("memory", embedder=self.cfg.embedder)
        for slot, params in self.cfg.params.items():
            if slot not in architecture.params:
                raise KeyError(f"no slot {slot!r}; slots are {', '.join(architecture.params)}")
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
        self.society = build_society(
            town, people, architecture=arch(self.cfg.architecture),
            architectures={n: arch(a) for n, a in self.cfg.architectures.items()})
        for name, task in self.cfg.tasks.items():
            self.society.agent(name).give_task(task)
        self.society.start(engine)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    from sandbox.commands.common import add_llm_options, build_llm, print_event
    from sandbox.log import CACHE, load_run
    from sandbox.runner import run_episode
    from sandbox.summary import print_summary, summarize

    from . import scripted  # noqa: F401  (registers scripted/town)

    p = argparse.ArgumentParser(prog="python -m agents.scenario",
                                description="Run generative agents through a day in a town.")
    p.add_argument("--world", default="town")
    p.add_argument("--residents", type=int, help="only the first N residents (by name)")
    p.add_argument("--resident", action="append", metavar="NAME",
                   help="a resident to include (repeatable); overrides --residents")
    p.add_argument("--architecture", default="ga", help="everyone's architecture")
    p.add_argument("--performer", help="the resident who gets --task")
    p.add_argument("--performer-architecture", default="ga_tdp")
    p.add_argument("--task", help="the social task injected into the performer")
    p.add_argument("--hours", type=float, default=16)
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--embedder", choices=["minilm", "hashing"])
    add_llm_options(p)
    args = p.parse_args(argv)
    names = None
    if args.resident:
        names = list(dict.fromkeys(args.resident + ([args.performer] if args.performer else [])))
    elif args.residents:
        everyone = sorted(r.name for r in world_residents(load_world(args.world)))
        names = everyone[: args.residents]
        if args.performer and args.performer not in names:
            names = [args.performer, *names[: args.residents - 1]]
    cfg = TownConfig(world=args.world, residents=names, architecture=args.architecture,
                     hours=args.hours, embedder=args.embedder,
                     architectures={args.performer: args.performer_architecture}
                     if args.performer else {},
                     tasks={args.performer: args.task} if args.performer and args.task else {})
    from pathlib import Path

    llm = build_llm(args, cache_default=Path(args.out) / CACHE)
    # Utterances and an hourly progress line as they happen: a day on the embedded model takes
    # minutes.
    run_episode(TownScenario(cfg), llm, seed=args.seed, out_dir=args.out, overwrite=True,
                on_event=print_event(Console()))
    print_summary(summarize(load_run(args.out)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
