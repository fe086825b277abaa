"""`sandbox sweep EXPERIMENT.yaml`: models x architectures x benchmarks x seeds from one file
(sandbox/app/suites/sweep.py), each benchmark's board over its cells, and OUT/summary.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sandbox import terminal
from sandbox.app.options import InputFile
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.lock import hold_output

from .common import add_schedule_option, output_dir

EXAMPLE = """example: sandbox sweep experiment.yaml, with experiment.yaml:
  out: runs/exp
  models: {smol: local/smollm2-135m, other: openai/gpt-4o-mini}
  architectures: [ga, ga_tdp]
  seeds: [0]
  benchmarks:
    NAME: {flags: {judge: [local/smollm2-135m], every: 8}}
benchmarks that can be swept here: %s (`sandbox NAME --help` gives each one's flags)"""


def register(sub) -> None:
    p = sub.add_parser(
        "sweep", help="run a whole experiment from one file: models x architectures x "
                      "benchmarks, one board each",
        description="Run every cell of an experiment file (each model, with each architecture "
                    "where the benchmark's performer has one, on each benchmark) with the "
                    "benchmark's own command into OUT/BENCHMARK/CELL, then each benchmark's "
                    "board over its cells (OUT/BENCHMARK/board.md and .json), and the whole "
                    "in OUT/summary.md. Every cell is checked before any runs; every role's "
                    "model is printed first; a failed cell does not stop the others. Run the "
                    "same command again to resume: each command skips what is finished.",
        epilog=EXAMPLE % (", ".join(sorted(_recipes())) or "none installed"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", type=InputFile(), help="the experiment file (YAML or JSON)")
    p.add_argument("--out", type=output_dir,
                   help="where the cells go [default: the file's `out`]")
    p.add_argument("--dry-run", action="store_true",
                   help="check every cell and print the commands, with the estimate of each "
                        "cell whose command makes one (its own --dry-run); run nothing")
    add_schedule_option(p)
    p.set_defaults(func=main, resumable=True)


def _recipes() -> dict:
    from sandbox.app.plugins import plugins

    recipes = {p.name: p.sweep_recipe() for p in plugins()}
    return {name: recipe for name, recipe in recipes.items() if recipe is not None}


def _roles(args) -> str:
    """Every model a cell's command will use, defaults included, as `role model` pairs."""
    from sandbox.app.commands.benchmark import EMBEDDED

    shown = {key: value for key, value in vars(args).items() if value and (
        key in ("model", "partner_model") or isinstance(value, str) and "/" in value
        and value.split("/")[0] in ("local", "openai", "scripted"))}
    if hasattr(args, "judges"):
        shown["judge"] = ", ".join(args.judges or [EMBEDDED])
    return "; ".join(f"{key.replace('_', '-')} {value}" for key, value in shown.items())


def main(args) -> int:
    from sandbox.app.suites.sweep import (
        SWEEP_FILE,
        check_plan,
        experiment_digest,
        load_experiment,
        plan,
        record,
        summary_markdown,
        write_json,
    )
    from sandbox.storage import write_atomic

    console = terminal.console()
    try:
        experiment = load_experiment(args.experiment)
        digest = experiment_digest(args.experiment)  # of the file as read, not as it is later
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc
    out = args.out or experiment.out
    if out is None:
        raise UserError(f"{args.experiment}: no `out` in the file; give --out")
    try:
        found = plan(experiment, Path(out), _recipes())
        check_plan(found)
    except (ValueError, FileFormatError) as exc:
        raise UserError(f"{args.experiment}: {exc}") from exc
    from sandbox.app.cli import build_parser, parse_command

    parser = build_parser()
    recipes = _recipes()
    parsed = []
    for cell in found.cells:  # every cell checked before any runs
        cell_args = parse_command(parser, cell.argv, f"{cell.benchmark} {cell.name}: ")
        # as the cell's items record it (paths absolute, credentials masked): what sweep.json
        # and a dry run say remakes the cell, from any directory
        cell.argv = list(cell_args.argv)
        _check_cell(cell, cell_args, parser, recipes[cell.benchmark])
        parsed.append(cell_args)
    for cell, cell_args in zip(found.cells, parsed, strict=True):
        console.print(f"[dim]{cell.benchmark} {cell.name}: {_roles(cell_args)}[/]",
                      highlight=False, soft_wrap=True)
    if args.dry_run:
        refused = []
        for cell, cell_args in zip(found.cells, parsed, strict=True):
            print("sandbox " + " ".join(cell.argv))
            if hasattr(cell_args, "dry_run"):  # the command estimates itself: asked to
                cell_args.dry_run = True
                try:
                    cell_args.func(cell_args)
                except UserError as exc:  # refused as the run would be: the others go on
                    refused.append(f"{cell.benchmark}/{cell.name}")
                    console.print(f"[red]{cell.benchmark} {cell.name}: refused:[/] {exc}",
                                  highlight=False, soft_wrap=True)
        if refused:  # a dry run that passes says the run would: one that would not, fails
            print(f"sandbox sweep: {len(refused)} cell(s) would be refused: "
                  f"{', '.join(refused)}", file=sys.stderr)
            return 1
        return 0
    from sandbox.outdirs import OutputTaken, add_marker, claim

    add_marker(SWEEP_FILE, "an experiment (sandbox sweep)")
    try:
        claim(Path(out), SWEEP_FILE, "an experiment (sandbox sweep)")
    except OutputTaken as exc:
        raise UserError(str(exc)) from exc
    hold_output(Path(out))
    Path(out).mkdir(parents=True, exist_ok=True)
    for cell, cell_args in zip(found.cells, parsed, strict=True):
        console.rule(f"{cell.benchmark} {cell.name}", style="dim")
        try:
            code = cell_args.func(cell_args)
            cell.status = "ok" if code == 0 else f"failed (exit {code})"
        except UserError as exc:
            cell.status, cell.said = "error", str(exc)
            console.print(f"[red]{cell.benchmark} {cell.name}:[/] {exc}", highlight=False)
        write_json(Path(out) / SWEEP_FILE, record(experiment, args.experiment, digest, found))
    boards = {}
    for name, argv in found.boards.items():
        # Every cell whose directory holds work is boarded, also one refused this time (a
        # changed flag meeting its earlier configuration): what finished before still counts.
        outs = [c.out for c in found.cells if c.benchmark == name and _holds_work(c.out)]
        made = False
        if outs:
            board_argv = [argv[0], *map(str, outs), *argv[-4:]]
            console.rule(f"{name} board", style="dim")
            board_args = parse_command(parser, board_argv)
            try:
                made = board_args.func(board_args) == 0
            except UserError as exc:
                console.print(f"[red]{name} board:[/] {exc}", highlight=False)
        board_md = Path(argv[-3])
        if board_md.is_file():  # this run's, or the last one made, said to be so
            boards[name] = board_md.read_text(encoding="utf-8") + (
                "" if made else "\n(the board as last made: this run could not make it)\n")
    comparisons = compare_cells(found.cells, Path(out))
    summary = Path(out) / "summary.md"
    write_atomic(summary, summary_markdown(experiment, args.experiment, found, boards,
                                           comparisons))
    bad = [c for c in found.cells if c.status != "ok"]
    console.print(f"{len(found.cells)} cells, {len(found.cells) - len(bad)} finished; summary: "
                  f"{summary}", highlight=False)
    refused = [c for c in bad if c.status == "error"]
    stopped = [c for c in bad if c.status != "error"]
    if stopped:
        console.print(f"{len(stopped)} cell(s) did not finish: "
                      f"{', '.join(f'{c.benchmark}/{c.name}' for c in stopped)}; run the same "
                      "command again to go on", highlight=False)
    if refused:
        # Run as it is, such a cell is refused again: what it said must change first.
        console.print(f"{len(refused)} cell(s) were refused: "
                      f"{', '.join(f'{c.benchmark}/{c.name}' for c in refused)}; change what "
                      f"each said (the experiment file, or another --out), then run again",
                      highlight=False)
    return 1 if bad else 0


COMPARISONS = "comparisons"


def compare_cells(cells, out: Path) -> list[str]:
    """Every pair of cells that differ in one thing (two architectures of a model, two models
    on an architecture), compared item by item (`sandbox compare`) into
    OUT/comparisons/BENCHMARK/A__vs__B.md and .json; the lines of the summary's table, one per
    pair (a pair that cannot be compared says why)."""
    import json

    from evaluation.compare import compare_sets
    from evaluation.kit import BoardError
    from sandbox.app.suites.sweep import comparison_pairs
    from sandbox.storage import write_atomic

    lines = ["B - A item by item (`sandbox compare A B`): the mean paired difference, its 95% "
             "bootstrap interval, the sign-flip p and the matched items a paired t-test needs "
             "for the observed difference at 80% power; each in full in the file named.", "",
             "| Benchmark | Differ in | A | B | n | B - A | 95% CI | p | items needed | file |",
             "|---|---|---|---|--:|--:|--:|--:|--:|---|"]
    # A configuration's cells of several seeds are one side: one comparison over every seed.
    pairs = [(what, [c for c in a if _holds_work(c.out)], [c for c in b if _holds_work(c.out)])
             for what, a, b in comparison_pairs(cells)]
    pairs = [(what, a, b) for what, a, b in pairs if a and b]
    if not pairs:
        return []
    for what, a_cells, b_cells in pairs:
        a, b = a_cells[0], b_cells[0]
        a_name, b_name = a.config or a.name, b.config or b.name
        where = Path(out) / COMPARISONS / a.benchmark / f"{a_name}__vs__{b_name}"
        head = f"| {a.benchmark} | {what} | {a_name} | {b_name} |"
        try:
            report = compare_sets([str(c.out) for c in a_cells], [str(c.out) for c in b_cells])
        except (BoardError, OSError) as exc:
            lines.append(f"{head} - | - | - | - | - | not compared: "
                         f"{str(exc).replace('|', '/')} |")
            continue
        where.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(where.with_suffix(".md"), report.markdown)
        write_atomic(where.with_suffix(".json"), json.dumps(report.data, indent=2) + "\n")
        s = report.data["overall"]
        needed = (report.data["seeds_needed"].get("observed") or {}).get("items")
        ci = "-" if s["ci"] is None else f"[{s['ci'][0]:+.3f}, {s['ci'][1]:+.3f}]"
        diff = "-" if s["difference"] is None else f"{s['difference']:+.3f}"
        p = "-" if s["p"] is None else f"{s['p']:.3g}"
        lines.append(f"{head} {s['n']} | {diff} | {ci} | {p} | {needed or '-'} | "
                     f"{where.relative_to(out)}.md |")
    return lines


def _holds_work(cell_out: Path) -> bool:
    """Whether a cell's directory holds anything a board could read."""
    return cell_out.is_dir() and any(cell_out.iterdir())


def _model_dests(parser: argparse.ArgumentParser, command: str) -> list[str]:
    """The options of `command` that name a model (metavar MODEL, or --model)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [a.dest for a in sub.choices[command]._actions
            if a.metavar == "MODEL" or a.dest == "model"]


def _check_repeats(cell, parser: argparse.ArgumentParser, command: str, where: str) -> None:
    """A list in the file for a flag that takes one value would keep only its last item, not
    run each: a UserError naming the flag."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions = {o: a for a in sub.choices[command]._actions for o in a.option_strings}
    words = [w for w in cell.argv if w.startswith("--")]
    for word in dict.fromkeys(words):
        action = actions.get(word)
        many = isinstance(action, (argparse._AppendAction, argparse._ExtendAction)) or \
            getattr(action, "nargs", None) in ("+", "*")
        if words.count(word) > 1 and action is not None and not many:
            raise UserError(f"{where}: {word} takes one value, and the experiment gives it "
                            f"{words.count(word)} (a list); give one, or sweep it in "
                            "separate files")


def _check_cell(cell, cell_args, parser, recipe) -> None:
    """What the parser cannot see in a cell, before any cell runs: every model it names
    reaches a backend that exists (a misspelt one would fail only when its cell's turn
    comes), and the benchmark's own check (templates). A UserError naming the cell."""
    from sandbox.llm import LLMConfigError, make_backend, split_model
    from sandbox.llm.local import embedded_model_path

    from .common import resolve_model

    where = f"{cell.benchmark} {cell.name}"
    _check_repeats(cell, parser, recipe.command, where)
    for dest in _model_dests(parser, recipe.command):
        value = getattr(cell_args, dest, None)
        for ref in value if isinstance(value, list) else [value]:
            if not isinstance(ref, str):
                continue
            flag = f"--{dest.removesuffix('s').replace('_', '-')} {ref}"
            try:
                settings = resolve_model(cell_args, ref)  # an alias, or backend/model
            except UserError as exc:
                raise UserError(f"{where}: {flag}: {exc}") from exc
            try:
                backend, name = split_model(settings.model)
                if backend == "scripted":  # a test double is cheap to make: made, to check
                    make_backend(settings, check=False)
                elif backend == "local":  # found, not loaded (loading takes seconds)
                    embedded_model_path(name)
            except LLMConfigError as exc:
                raise UserError(f"{where}: {flag}: {exc}") from exc
    if recipe.check is not None:
        try:
            recipe.check(cell_args)
        except ValueError as exc:
            raise UserError(f"{where}: {exc}") from exc
