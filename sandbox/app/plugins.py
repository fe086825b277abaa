"""Benchmarks are plug-ins: each declares itself once and the command line is made from it.

A package adds a benchmark with an entry point in the group `sandbox.benchmarks` whose value is
a `Plugin`:

    [project.entry-points."sandbox.benchmarks"]
    toy = "toybench.plugin:TOY"

A `Plugin` names the benchmark and says what it brings: single-room `Benchmark`s (the kit
makes `sandbox NAME` and `sandbox NAME-board` from each declaration), commands of its own
(`commands(sub)`, for what the kit's two do not cover), and a `RunTarget` when `sandbox run`
may run one of its items (a task template). `sandbox list benchmarks` shows what is installed.

This module and sandbox/app/suites/benchmark.py are the API a benchmark is written against;
nothing else of sandbox/app names, or needs to know, any benchmark.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from evaluation.kit import BoardReport
from sandbox.errors import one_line
from sandbox.outdirs import add_marker

GROUP = "sandbox.benchmarks"
__all__ = ["GROUP", "Benchmark", "Board", "BoardReport", "Items", "Judging", "Option", "Plugin",
           "RunTarget", "Sweep", "installed", "plugins", "run_targets"]


@dataclass(frozen=True)
class Option:
    """A benchmark option (`--NAME`): its default, one line for --help, and what it takes:
    `choices`, or `type`, one of sandbox/app/options.py's types (its bounds checked at
    parsing; an option with neither is reported by the parser walk test)."""

    default: Any
    help: str = ""
    choices: tuple[str, ...] | None = None
    type: Callable[[str], Any] | None = None


@dataclass(frozen=True)
class Items:
    """Where a benchmark's items come from and what they are called."""

    load: Callable[[Path | None, dict[str, Any]], Any]  # (file or None, options) -> ItemSet
    help: str = "the items: our YAML or a public file"
    flag: str = "items"  # --items, or the benchmark's own word (--settings)
    noun: str = "items"  # what one item is called in messages ("pairs")
    header_key: str = "item"  # the run header field that holds the item id


@dataclass(frozen=True)
class Judging:
    """The benchmark's judges, how they sample, and the choices in how they are asked.

    `options` (name -> Option) are recorded in the manifest; changing one in a directory needs
    --rejudge. `choose` gives the judges for the chosen values (default: `judges`)."""

    judges: list  # every JudgeSpec the benchmark may ask (their tags name the judge role)
    sampling: Any  # tasks.kit.Sampling
    options: dict[str, Option] = field(default_factory=dict)
    choose: Callable[[dict[str, Any]], list] | None = None

    def settings(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Every judge option's value: `given`, else its default."""
        return {name: (given or {}).get(name, option.default)
                for name, option in self.options.items()}

    def specs(self, given: dict[str, Any] | None = None) -> list:
        """The judges asked with these judge options."""
        return self.judges if self.choose is None else self.choose(self.settings(given))


@dataclass(frozen=True)
class Board:
    """The benchmark's board: `build(dirs, judges=, seed=, resamples=, **options)` ->
    BoardReport, and its own options (flag name -> argparse keywords)."""

    build: Callable[..., Any]
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    example: str = ""  # a `sandbox NAME-board ...` line for --help
    # Options that choose which items run, not how: a label's directories differing only in
    # them are one row (evaluation/kit/rows.py)
    pooled: tuple[str, ...] = ()


@dataclass(frozen=True)
class Benchmark:
    """A single-room benchmark: what it must say for the kit to run, judge and board it.

    name        `sandbox NAME`, `sandbox NAME-board`, the manifest OUT/NAME.json
    roles       the dialogue's parts (tasks.kit.Role); `under_test` labels the row
    scenario    (item, item id, cast, options) -> the item's tasks.kit.DialogueScenario
    options     options that shape the dialogues (recorded; must not change in a directory)
    noun        what one run is called in messages ("conversations")
    example     a `sandbox NAME ...` line for --help
    rates       a rates file kept with the benchmark (bench/kit_rates.py writes it): calls and
                tokens per item and role, per set of options, for a --dry-run before the first
                item is finished
    """

    name: str
    title: str
    roles: list
    under_test: str
    items: Items
    scenario: Callable[[Any, str, Any, dict[str, Any]], Any]
    judging: Judging
    board: Board
    options: dict[str, Option] = field(default_factory=dict)
    noun: str = "dialogues"
    example: str = ""
    rates: Path | None = None

    @property
    def manifest_file(self) -> str:
        return f"{self.name}.json"

    def defaults(self) -> dict[str, Any]:
        return {name: option.default for name, option in self.options.items()}

    def role(self, name: str):
        return next(r for r in self.roles if r.name == name)

    def roles_by_tag(self) -> dict[str, str]:
        """Which role each call tag belongs to (judges' calls count as 'judge')."""
        return {**{r.tag: r.name for r in self.roles},
                **{j.tag: "judge" for j in self.judging.judges}}


@dataclass(frozen=True)
class RunTarget:
    """What a benchmark adds to `sandbox run SCENARIO`: the scenario names that are its items
    (`owns`), the options of such a run, and the run itself (-> exit code). For a name nobody
    owns, `near` gives its items' names closest to it and `listing` the `sandbox list WHAT`
    that lists them all: `sandbox run`'s error names both."""

    describe: str  # how `sandbox run --help` names them ("a task template: a .yaml file...")
    owns: Callable[[str], bool]
    add_options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    near: Callable[[str], Sequence[str]] | None = None
    listing: str | None = None  # a key of the plug-in's `lists`


@dataclass(frozen=True)
class Sweep:
    """How `sandbox sweep` runs one cell of this benchmark (a model, and an architecture when
    the benchmark's performer has one) and boards the cells: the benchmark's own commands,
    called with the flags the experiment file gives.

    command        the run command (`sandbox COMMAND ... --out CELL`)
    model_flag     the flag of the model under test (`--player`, `--model`)
    board          the board command over every cell's --out (`COMMAND-board`)
    arch_flag      the flag of the performer's architecture; None: the cells are the models
    seeds_flag     the flag all the experiment's seeds go to at once (`--seeds 0,1`)
    seed_flag      the flag one seed goes to (`--seed 1`): a cell per seed; with neither,
                   the benchmark has no seeds and an experiment of several is refused
    label_flag     the flag that names a cell on the board; None: the board names it itself
    check          called with each cell's parsed arguments before any cell runs: what the
                   parser cannot see (template names, architectures), as a ValueError
    """

    command: str
    model_flag: str
    board: str
    arch_flag: str | None = None
    seeds_flag: str | None = None
    label_flag: str | None = "--label"
    seed_flag: str | None = None
    check: Callable[[Any], None] | None = None


Listing = Callable[[], list[tuple[str, str]]]  # () -> (name, what it is) rows


@dataclass(frozen=True)
class Plugin:
    """A benchmark as installed: its name, what it is, and what it adds to `sandbox`: commands
    made from its single-room benchmarks, commands of its own, what `sandbox run` may run,
    what `sandbox list WHAT` shows (e.g. "templates": its task templates), and how `sandbox
    sweep` runs it.

    `outputs` names the files that mark the output directories of its own commands (file
    name -> what such a directory is, "a suite (sandbox NAME)"): no other command writes into
    one (sandbox.outdirs). A single-room benchmark's manifest needs no entry.

    `boards` gives the board of the directories its own commands write (marker file -> a
    function of those directories returning a BoardReport): what `sandbox report` shows of
    such a directory. A single-room benchmark's board needs no entry either.

    `board_commands` names the command that boards each kind of directory its own commands
    write (marker file -> its board command): `sandbox board DIR` runs it on such a directory."""

    name: str
    title: str
    benchmarks: Sequence[Benchmark] = ()
    commands: Callable[[Any], None] | None = None  # (subparsers) -> adds its own commands
    run_target: RunTarget | None = None
    lists: Mapping[str, Listing] = field(default_factory=dict)
    sweep: Sweep | None = None  # [default: from its one single-room benchmark, if it has one]
    outputs: Mapping[str, str] = field(default_factory=dict)
    boards: Mapping[str, Callable[[Sequence[Path]], BoardReport]] = field(default_factory=dict)
    board_commands: Mapping[str, str] = field(default_factory=dict)

    def sweep_recipe(self) -> Sweep | None:
        """How a sweep runs this benchmark: its own recipe, or the kit's commands of its one
        single-room benchmark."""
        if self.sweep is not None or len(self.benchmarks) != 1:
            return self.sweep
        bench = self.benchmarks[0]
        return Sweep(bench.name, f"--{bench.under_test}", f"{bench.name}-board",
                     seed_flag="--seed")


@dataclass(frozen=True)
class Installed:
    """One entry point of the group: the plug-in it gave, or why it gave none."""

    entry: str  # the entry point's name
    value: str  # module:attribute
    dist: str  # the distribution that declares it
    plugin: Plugin | None = None
    error: str = ""


def _load(ep) -> Installed:
    dist = ep.dist.name if ep.dist is not None else "?"
    try:
        plugin = ep.load()
    except Exception as exc:  # noqa: BLE001 - a broken plug-in is reported, the others still run
        # Said by the command line on every command, and listed by `sandbox list benchmarks`.
        error = one_line(f"{type(exc).__name__}: {exc}")
        return Installed(ep.name, ep.value, dist, error=error)
    if not isinstance(plugin, Plugin):
        error = f"{ep.value} is a {type(plugin).__name__}, not a sandbox.app.plugins.Plugin"
        return Installed(ep.name, ep.value, dist, error=error)
    for marker, what in plugin.outputs.items():
        add_marker(marker, what)
    return Installed(ep.name, ep.value, dist, plugin=plugin)


@cache
def installed() -> tuple[Installed, ...]:
    """Every entry point of `sandbox.benchmarks`, loaded once, in name order (one broken
    plug-in is an entry with its error, not a crash of every command)."""
    found = sorted(entry_points(group=GROUP), key=lambda ep: (ep.name, ep.value))
    return tuple(_load(ep) for ep in {(ep.name, ep.value): ep for ep in found}.values())


def plugins() -> list[Plugin]:
    """The plug-ins that loaded."""
    return [found.plugin for found in installed() if found.plugin is not None]


def run_targets() -> list[RunTarget]:
    return [p.run_target for p in plugins() if p.run_target is not None]


def listings() -> dict[str, list[Listing]]:
    """What the plug-ins add to `sandbox list`: name -> their listings."""
    found: dict[str, list[Listing]] = {}
    for plugin in plugins():
        for what, listing in plugin.lists.items():
            found.setdefault(what, []).append(listing)
    return found
