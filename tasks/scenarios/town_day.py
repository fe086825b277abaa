"""`sandbox run town_day`: generative agents living a day in a town, from a TownConfig file and
the command line's changes to it (`TownChanges`)."""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.architecture import load_architecture
from sandbox.errors import UserError
from sandbox.files import FileFormatError, load_model, validation_error
from sandbox.simtime import sim_time_problem
from tasks.town import TownConfig, TownScenario, Whisper, whisper_time
from worlds import load_world, world_residents

DEFAULT_CONFIG = Path(__file__).with_name("town_day.yaml")


class TownChanges(BaseModel):
    """What `sandbox run town_day` options change in the file's TownConfig (None: keep it)."""

    model_config = ConfigDict(extra="forbid")

    world: str | None = None  # --world
    residents: list[str] | None = None  # --resident NAME ...: exactly these
    first: int | None = None  # --residents N: the first N residents of the world, by name
    architecture: str | None = None  # --architecture: everyone's
    performer: str | None = None  # --performer: gets performer_architecture and the task
    performer_architecture: str = "ga_tdp"  # --arch
    task: str | None = None  # --task
    hours: float | None = None  # --hours
    embedder: str | None = None  # --embedder
    whispers: list[Whisper] = Field(default_factory=list)  # --whisper: added to the file's

    def apply(self, config: TownConfig) -> TownConfig:
        """The config with these changes; ValueError naming the option that cannot apply."""
        if self.task is not None and self.performer is None:
            raise ValueError("--task needs --performer (who gets the task)")
        data = config.model_dump()
        for field in ("world", "architecture", "hours", "embedder"):
            if getattr(self, field) is not None:
                data[field] = getattr(self, field)
        names = self.residents
        if names is not None or self.first is not None or self.performer is not None:
            world = load_world(data["world"])
            everyone = sorted(r.name for r in world_residents(world))
            for option, name in [*(("--resident", n) for n in names or []),
                                 ("--performer", self.performer)]:
                if name is not None and name not in everyone:
                    near = difflib.get_close_matches(name, everyone, n=2, cutoff=0.5)
                    hint = f"; did you mean {' or '.join(near)}?" if near else ""
                    raise ValueError(f"{option} {name!r}: no such resident in world "
                                     f"{world.name}{hint} (`sandbox world {world.name}` lists "
                                     "them)")
        if names is None and self.first is not None:
            names = everyone[: self.first]
        if self.world is not None and self.world != config.world and names is None \
                and not self.performer and data["residents"] is not None:
            # Another town: the file's residents, tasks and whispers of people who do not live
            # there are the file's town's (the shipped day names Larkhaven's); those who do
            # stay, else everyone of the new town lives its day.
            people = {r.name for r in world_residents(load_world(data["world"]))}
            data["residents"] = [n for n in data["residents"] if n in people] or None
            for field in ("architectures", "tasks"):
                data[field] = {n: v for n, v in data[field].items() if n in people}
            data["whispers"] = [w for w in data["whispers"] if w["agent"] in people]
            if self.performer and self.performer not in names:  # the performer takes a seat
                names = [self.performer, *names[: self.first - 1]]
        if names is None and self.performer and data["residents"] is not None:
            names = data["residents"]
        if names is not None:
            if self.performer:
                names = [*names, self.performer]
            data["residents"] = list(dict.fromkeys(names))
            for field in ("architectures", "tasks"):  # of residents the options left out
                data[field] = {n: v for n, v in data[field].items() if n in data["residents"]}
            data["whispers"] = [w for w in data["whispers"] if w["agent"] in data["residents"]]
        data["whispers"] = [*data["whispers"], *(w.model_dump() for w in self.whispers)]
        if self.performer:
            data["architectures"] = {**data["architectures"],
                                     self.performer: self.performer_architecture}
            if self.task is not None:
                data["tasks"] = {**data["tasks"], self.performer: self.task}
        try:
            return TownConfig.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"--{first['loc'][0]}: {first['msg']}") from exc


def town_day(path: Path | str | None = None, max_turns: int | None = None,
             changes: TownChanges | None = None) -> TownScenario:
    """Read and check a town-day file (with the command line's `changes`) before anything runs:
    residents and architectures must exist, so a typo is a one-line error rather than a crash
    minutes into the episode."""
    path = path or DEFAULT_CONFIG
    if max_turns is not None:
        raise FileFormatError(path, "--turns is for single_room; a town conversation's length "
                                    "is the architecture's conversation.max_turns")
    config = load_model(path, TownConfig)
    if changes is not None:
        config = changes.apply(config)
    too_long = sim_time_problem(config.hours * 3600)
    if too_long is not None:
        if changes is not None and changes.hours is not None:
            raise ValueError(f"--hours {changes.hours:g}: {too_long}")
        raise FileFormatError(path, f"{config.hours:g} {too_long}", "hours")
    scenario = TownScenario(config)
    try:
        names = scenario.resident_names()
    except KeyError as exc:
        raise FileFormatError(path, exc.args[0], "residents") from exc
    except UserError as exc:  # the world it names cannot be found
        raise FileFormatError(path, str(exc), "world") from exc
    for name in [*config.architectures, *config.tasks]:
        if name not in names:
            raise FileFormatError(path, f"{name!r} is not among the residents "
                                        f"({', '.join(names)})", "architectures/tasks")
    given = len(config.whispers) - (len(changes.whispers) if changes is not None else 0)
    for n, whisper in enumerate(config.whispers):
        try:
            whisper_time(whisper, names, scenario.start_time, scenario.until)
        except ValueError as exc:
            if n >= given:  # one of the command line's
                raise ValueError(f"--whisper {str(whisper)!r}: {exc}") from None
            raise FileFormatError(path, str(exc), f"whispers.{n}") from None
    for arch in sorted({config.architecture, *config.architectures.values()}):
        try:
            load_architecture(arch)
        except FileFormatError as exc:
            if exc.path.is_file():  # a bad architecture file names itself
                raise
            raise FileFormatError(path, str(exc), "architectures") from exc
        try:
            scenario.architecture(arch)
        except KeyError as exc:
            raise FileFormatError(path, exc.args[0], "params") from exc
        except ValidationError as exc:
            raise FileFormatError(path, f"for {arch}: {validation_error(path, exc).reason}",
                                  "params") from exc
    return scenario
