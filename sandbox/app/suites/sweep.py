"""An experiment in one file: models x architectures x benchmarks x seeds, each cell run by the
benchmark's own command, each benchmark boarded over its cells, one summary of the whole.

    out: runs/exp                      # [default: --out]
    models:                            # a name for the board -> a model, or a model and flags
      smol: local/smollm2-135m
      gpt: {model: openai/gpt-4o-mini, flags: {base-url: "http://127.0.0.1:8000/v1"}}
    architectures: [ga, ga_tdp]        # for a benchmark whose performer has one
    seeds: [0, 1]                      # every benchmark: all in one cell (--seeds) or a
                                       # cell per seed (--seed, the cell named NAME-sN)
    benchmarks:                        # installed benchmarks (`sandbox list benchmarks`)
      NAME:
        flags: {judge: [local/smollm2-135m], every: 8}

A cell is `sandbox COMMAND FLAGS --MODEL_FLAG MODEL [--ARCH_FLAG ARCH] [--SEEDS_FLAG ...]
--out OUT/BENCHMARK/CELL`; `flags` turn into options (`every: 8` -> `--every 8`, a list into
the option repeated, `true` into the bare flag). Every cell is parsed by the real command line
and its models and the benchmark's own check (template names, say) run before anything runs (a
misspelt flag, model or template stops the sweep at once), every role's model is said at the
start, and a cell that fails does not stop the others. Run again, every command resumes
its own directory: finished work is skipped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sandbox.app.options import SEED_MAX, SEEDS_MAX
from sandbox.files import FileFormatError, load_model
from sandbox.pathnames import safe_component
from sandbox.redact import redact_command

SWEEP_FILE = "sweep.json"


def _flags(value: dict[str, Any]) -> dict[str, Any]:
    """Flags of a cell, without `out`: the sweep gives every cell its own OUT/BENCHMARK/CELL,
    and a cell's --out of its own would leave the experiment (and its board)."""
    for key in value:
        if str(key).lstrip("-").replace("_", "-") == "out":
            raise ValueError("`out` is the sweep's own (each cell writes into "
                             "OUT/BENCHMARK/CELL); give it at the top of the file or as --out")
    return value


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    flags: dict[str, Any] = Field(default_factory=dict)

    @field_validator("flags")
    @classmethod
    def _no_out(cls, value):
        return _flags(value)


class BenchmarkEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    flags: dict[str, Any] = Field(default_factory=dict)

    @field_validator("flags")
    @classmethod
    def _no_out(cls, value):
        return _flags(value)


class Experiment(BaseModel):
    """What an experiment file says."""

    model_config = ConfigDict(extra="forbid")

    out: Path | None = None
    models: dict[str, ModelEntry]
    architectures: list[str] = Field(default_factory=lambda: ["ga", "ga_tdp"])
    seeds: list[int] = Field(default_factory=lambda: [0])
    benchmarks: dict[str, BenchmarkEntry]

    @field_validator("models", mode="before")
    @classmethod
    def _model_strings(cls, value):
        if isinstance(value, dict):
            return {k: {"model": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _empty_entries(cls, value):
        if isinstance(value, dict):
            return {k: {} if v is None else v for k, v in value.items()}
        return value

    @field_validator("models", "benchmarks")
    @classmethod
    def _not_empty(cls, value):
        if not value:
            raise ValueError("name at least one")
        return value

    @field_validator("models")
    @classmethod
    def _labels_are_names(cls, value):
        # A model's label names its cells' folders (OUT/BENCHMARK/LABEL-ARCH): `../../x`
        # would run the whole cell outside OUT.
        for label in value:
            safe_component(label, "model label")
        return value

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value):
        # Checked as --seeds is (app/options.py): a boolean is no seed (YAML's `true` once ran
        # seed 1), and a list longer than a suite takes is no experiment (10^5 seeds of a
        # per-seed benchmark are 10^5 cells, which a dry run once spent minutes listing).
        if not isinstance(value, list) or not value:
            raise ValueError("one or more seeds, each a whole number from 0")
        if len(value) > SEEDS_MAX:
            raise ValueError(f"{len(value):,} seeds; at most {SEEDS_MAX:,}")
        for seed in value:
            if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
                raise ValueError(f"seed {seed!r}: seeds are whole numbers from 0 to "
                                 f"{SEED_MAX:,}")
        return value


def load_experiment(path: Path) -> Experiment:
    return load_model(path, Experiment)


def flag_words(flags: dict[str, Any]) -> list[str]:
    """`{every: 8, judge: [a, b], rejudge: true}` -> `--every 8 --judge a --judge b --rejudge`."""
    words: list[str] = []
    for key, value in flags.items():
        flag = "--" + str(key).lstrip("-").replace("_", "-")
        if value is True:
            words.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            for one in value:
                words += [flag, str(one)]
        else:
            words += [flag, str(value)]
    return words


@dataclass
class Cell:
    """One run of one benchmark: its command line and where it writes."""

    benchmark: str
    name: str  # the cell's folder and board label: the model's name, and the architecture's
    model: str
    architecture: str | None
    argv: list[str]
    out: Path
    status: str = "planned"  # planned | ok | failed (exit code) | error (why)
    said: str = ""
    seed: int | None = None  # the cell's one seed (None: the benchmark's seeds axis, or none)
    alias: str = ""  # the model's name in the experiment file
    config: str = ""  # the configuration's name, its board label: `name` without its seed


@dataclass
class Plan:
    cells: list[Cell] = field(default_factory=list)
    boards: dict[str, list[str]] = field(default_factory=dict)  # benchmark -> board argv


def plan(experiment: Experiment, out: Path, recipes: dict[str, Any]) -> Plan:
    """Every cell of the experiment, and each benchmark's board over its cells. `recipes`:
    benchmark name -> its plugins.Sweep (a ValueError names a benchmark without one)."""
    found = Plan()
    for name, entry in experiment.benchmarks.items():
        recipe = recipes.get(name)
        if recipe is None:
            raise ValueError(f"benchmark {name!r}: not installed, or it cannot be swept; "
                             f"sweepable: {', '.join(sorted(recipes)) or 'none'}")
        archs = experiment.architectures if recipe.arch_flag else [None]
        seeds = experiment.seeds
        if not recipe.seeds_flag and not recipe.seed_flag and seeds != [0]:
            raise ValueError(f"benchmark {name!r} takes no seeds, and the experiment names "
                             f"{', '.join(map(str, seeds))}; sweep it in a file of its own "
                             "without `seeds`")
        # A benchmark taking one seed a run gets a cell per seed (named -sN when there are
        # several); one taking them all at once gets them in one cell.
        per_seed = [None] if recipe.seeds_flag or not recipe.seed_flag else seeds
        own = {f for f in (recipe.model_flag, recipe.arch_flag, recipe.seeds_flag,
                           recipe.seed_flag, recipe.label_flag) if f}
        for given in (entry.flags, *(m.flags for m in experiment.models.values())):
            for word in flag_words(given):
                if word in own:
                    raise ValueError(f"benchmark {name!r}: the flag {word} is the sweep's own "
                                     "(from `models`, `architectures` or `seeds`); drop it "
                                     "from `flags`")
        outs = []
        for alias, model in experiment.models.items():
            for arch in archs:
                for seed in per_seed:
                    # The configuration's name: its cells of several seeds share it, so the
                    # board pools them into one row (evaluation/kit/rows.py).
                    config = f"{alias}-{Path(arch).stem}" if arch else alias
                    cell = config
                    if seed is not None and len(per_seed) > 1:
                        cell += f"-s{seed}"
                    cell_out = out / name / cell
                    argv = [recipe.command, *flag_words(entry.flags), *flag_words(model.flags),
                            recipe.model_flag, model.model]
                    if arch:
                        argv += [recipe.arch_flag, arch]
                    if recipe.seeds_flag:
                        argv += [recipe.seeds_flag, ",".join(map(str, seeds))]
                    elif seed is not None:
                        argv += [recipe.seed_flag, str(seed)]
                    if recipe.label_flag:
                        argv += [recipe.label_flag, config]
                    argv += ["--out", str(cell_out)]
                    found.cells.append(Cell(name, cell, model.model, arch, argv, cell_out,
                                            seed=seed, alias=alias, config=config))
                    outs.append(cell_out)
        found.boards[name] = [recipe.board, *map(str, outs), "--markdown",
                              str(out / name / "board.md"), "--json",
                              str(out / name / "board.json")]
    return found


def experiment_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def record(experiment: Experiment, source: Path, digest: str, found: Plan) -> dict:
    """OUT/sweep.json: the experiment as run (its file and the digest of what was read), and
    each cell's command line and outcome."""
    return {"experiment": str(source), "digest": digest,
            "models": {k: v.model_dump() for k, v in experiment.models.items()},
            "architectures": experiment.architectures, "seeds": experiment.seeds,
            "cells": [{"benchmark": c.benchmark, "cell": c.name, "model": c.model,
                       "architecture": c.architecture,
                       "command": ["sandbox", *redact_command(c.argv)],
                       "out": str(c.out), "status": c.status, "said": c.said}
                      for c in found.cells]}


def comparison_pairs(cells: list[Cell]) -> list[tuple[str, list[Cell], list[Cell]]]:
    """(what differs, A's cells, B's cells) for every pair of configurations of one benchmark
    that differ in one thing: two architectures of one model, then two models on one
    architecture. A configuration's cells are all its seeds (a cell per seed): compared over
    them all, one comparison, not one per seed. A is the one first in the experiment file."""
    configs: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        configs.setdefault((cell.benchmark, cell.config or cell.name), []).append(cell)
    groups: dict[str, list[list[Cell]]] = {}
    for (benchmark, _), mine in configs.items():
        groups.setdefault(benchmark, []).append(mine)
    pairs = []
    for mine in groups.values():
        couples = list(combinations(mine, 2))
        pairs += [("architectures", a, b) for a, b in couples
                  if a[0].alias == b[0].alias and a[0].architecture != b[0].architecture]
        pairs += [("models", a, b) for a, b in couples
                  if a[0].alias != b[0].alias and a[0].architecture == b[0].architecture]
    return pairs


def summary_markdown(experiment: Experiment, source: Path, found: Plan,
                     boards: dict[str, str], comparisons: list[str] | None = None) -> str:
    """The whole experiment: what ran, how each cell ended, then every benchmark's board, and
    the comparisons of cells that differ in one thing (their lines, `comparisons`)."""
    lines = [f"# Sweep of {source.name}", "",
             f"Models: {', '.join(f'{k} ({v.model})' for k, v in experiment.models.items())}; "
             f"architectures: {', '.join(experiment.architectures)}; seeds: "
             f"{', '.join(map(str, experiment.seeds))}.", "",
             "| Benchmark | Cell | Model | Architecture | Outcome |", "|---|---|---|---|---|"]
    for c in found.cells:
        outcome = c.status + (f": {c.said}" if c.said else "")
        lines.append(f"| {c.benchmark} | {c.name} | {c.model} | {c.architecture or '-'} | "
                     f"{outcome.replace('|', '/')} |")
    for name in found.boards:
        lines += ["", f"## {name}", "", boards.get(name, "(no board: no cell finished)").rstrip()]
    if comparisons:
        lines += ["", "## Comparisons", "", *comparisons]
    return "\n".join(lines) + "\n"


def check_plan(found: Plan) -> None:
    """Two cells writing one directory (two model names alike after the architecture's)."""
    outs = [c.out for c in found.cells]
    twice = sorted({str(o) for o in outs if outs.count(o) > 1})
    if twice:
        raise FileFormatError("models", f"two cells would share {twice[0]}; give the models "
                                        "names that differ")


def write_json(path: Path, data: dict) -> None:
    from sandbox.storage import write_atomic

    write_atomic(path, json.dumps(data, indent=2) + "\n")
