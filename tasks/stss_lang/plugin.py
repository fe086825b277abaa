"""The STSS language level declared as a benchmark plug-in (entry point `sandbox.benchmarks:
stss-lang`): a harvested scenario set played by a performer (the model and architecture under
test) and a partner (a vanilla generative agent), judged on the conversation and on the
partner's summary. One benchmark directory per architecture:

    OUT/<arch>/stss_lang.json, OUT/<arch>/runs/<scenario id>/...

Its commands are its own (one run plays every --arch), built on the kit's:
`sandbox stss-harvest`: the language-level scenarios of STSS runs or suites, as a set file.
`sandbox stss-lang`: play a scenario set with each --arch, judge it, print the paper's Table 3.
`sandbox stss-lang-board`: the Table 3 board of finished directories (no model is called).

Like every benchmark's plugin module, this is the benchmark's composition root: the one module
of tasks/stss_lang that may name its scorers (evaluation/stss_lang) and the app's plug-in API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluation.stss_lang import JUDGE_SAMPLING, JUDGES
from evaluation.stss_lang.usage import table3_report
from sandbox import terminal
from sandbox.app.commands.benchmark import (
    EMBEDDED,
    add_board_outputs,
    judge_models,
    made_by,
    model_pool,
    print_stopped,
    report_line,
    run_limits,
    run_with_progress,
    write_board,
)
from sandbox.app.commands.common import (
    add_budget_options,
    add_model_access_options,
    add_parallel_options,
    architecture_ref,
    output_dir,
    output_file,
    parallel_options,
    use_prompts,
)
from sandbox.app.options import EVERY, RESAMPLES, SEED, Count, InputDir, InputFile, Model, Reference
from sandbox.app.plugins import Benchmark, Board, Items, Judging, Option, Plugin, Sweep
from sandbox.errors import UserError, one_line
from sandbox.files import FileFormatError
from sandbox.lock import hold_output

from . import BENCHMARK, PARTNER, PERFORMER, StssLangScenario, scenario_items


def _scenario(item, item_id: str, cast, options: dict[str, Any]) -> StssLangScenario:
    return StssLangScenario(item, cast, architecture=options["arch"],
                            embedder=options.get("embedder"))


STSS_LANG = Benchmark(
    name=BENCHMARK, title="STSS language level", roles=[PERFORMER, PARTNER],
    under_test="performer",
    items=Items(lambda path, options: scenario_items(path), flag="set", noun="scenarios",
                help="a scenario set (sandbox stss-harvest)"),
    scenario=_scenario, judging=Judging(JUDGES, JUDGE_SAMPLING), board=Board(table3_report),
    options={"arch": Option("ga", "the performer's architecture",
                            type=Reference("an architecture")),
             "embedder": Option(None, "memory embedder [default: the one of the harvested "
                                      "run]", choices=("minilm", "hashing"))},
    noun="conversations", rates=Path(__file__).with_name("rates.json"))

EXAMPLE = ("sandbox stss-lang --arch ga --arch ga_tdp --model local/smollm2-135m "
           "--partner-model local/smollm2-135m --judge local/smollm2-135m --every 67 "
           "--out runs/lang-smol   (the built-in set, 2 of its 134 scenarios per --arch)")


def register(sub) -> None:
    """`sandbox stss-harvest`, `sandbox stss-lang`, `sandbox stss-lang-board`."""
    h = sub.add_parser(
        "stss-harvest", help="harvest language-level scenarios from STSS runs",
        description="Read STSS run directories (or suites holding them) and write every "
                    "conversation the performer had as a scenario: both characters' memories "
                    "as of its start, the task, TDP plans. At most two per task and pair of "
                    "characters; appointment tasks keep only performer-target talks. Reads "
                    "the logs only.",
        epilog="example: sandbox stss --templates public_spring_tasting --model scripted/town "
               "--embedder hashing --out runs/suite && sandbox stss-harvest runs/suite --out "
               "runs/scenarios.json")
    h.add_argument("sources", nargs="+", type=InputDir(), metavar="RUN_OR_SUITE")
    h.add_argument("--out", type=output_file, required=True, help="the scenario set file to write")
    # a pair of characters talks a few times in a run; 1,000 scenarios of one pair is a typo
    h.add_argument("--per-pair", type=Count(1, 1_000), default=2,
                   help="scenarios per task and pair of characters [default: %(default)s]")
    h.set_defaults(func=harvest_main)

    p = sub.add_parser(
        "stss-lang", help="run the STSS language level (Table 3) on a scenario set",
        description="Replay every scenario of SET: the performer speaks with --arch on "
                    "--model, the partner is a vanilla generative agent on --partner-model, "
                    "both from their frozen memories (at most 8 utterances); the partner "
                    "summarises; --judge answers the goal conditions on the conversation and "
                    "on the summary. One directory per architecture under --out; finished "
                    "scenarios and saved judgments are skipped (resume), --rejudge asks again.",
        epilog=f"example: {EXAMPLE}")
    p.add_argument("set", nargs="?", type=InputFile(),
                   help="a scenario set (sandbox stss-harvest) [default: the built-in set, "
                        "harvested from scripted runs of the 30 templates]")
    p.add_argument("--arch", action="append", dest="archs", type=architecture_ref,
                   metavar="ARCH",
                   help="the performer's architecture; repeat [default: ga and ga_tdp]")
    p.add_argument("--model", type=Model(), default=EMBEDDED,
                   help="the performer's model [default: %(default)s]")
    p.add_argument("--partner-model", type=Model(), default=None,
                   help="the partner's model [default: --model]")
    p.add_argument("--judge", action="append", dest="judges", type=Model(), metavar="MODEL",
                   help=f"a judge model; repeat for several [default: {EMBEDDED}]")
    p.add_argument("--embedder", choices=["minilm", "hashing"],
                   help="memory embedder [default: the harvested run's]")
    p.add_argument("--out", type=output_dir, required=True, help="the results directory")
    p.add_argument("--every", type=EVERY, default=1, metavar="K",
                   help="keep about one of K scenarios (a quick run) [default: %(default)s]")
    p.add_argument("--seed", type=SEED, default=0, help="[default: %(default)s]")
    p.add_argument("--rejudge", action="store_true", help="ask the judges again")
    p.add_argument("--dry-run", action="store_true",
                   help="say how many conversations each --arch would run (finished ones "
                        "skipped) and their calls, tokens, wall time and money per role, from "
                        "its directory's finished ones, else the rates kept with the "
                        "benchmark; run and write nothing")
    add_board_options(p)
    add_model_access_options(p.add_argument_group("model access"))
    add_budget_options(p, suite=True, episode="scenario", what="a conversation and its judges")
    add_parallel_options(p)
    p.set_defaults(func=run_main, resumable=True, remake=remade)

    b = sub.add_parser(
        "stss-lang-board",  # listed under `sandbox board` (sandbox/app/commands/board.py)
        description="Table 3 from saved judgments (no model is called): SR and GCSR, micro "
                    "and macro, conversation and summary, n and 95% bootstrap intervals, the "
                    "per-type comparison with the action level, calls and tokens per role.",
        epilog="example: sandbox stss-lang-board runs/lang-smol --plot table3.png")
    b.add_argument("dirs", nargs="+", type=InputDir(), metavar="DIR")
    b.add_argument("--judge", action="append", dest="judges", type=Model(), metavar="MODEL",
                   help="only these judges' verdicts [default: all]")
    b.add_argument("--seed", type=SEED, default=0, help="bootstrap seed")
    add_board_options(b)
    b.set_defaults(func=board_main)


def add_board_options(p) -> None:
    p.add_argument("--resamples", type=RESAMPLES, default=1000, help="bootstrap resamples "
                                                               "[default: %(default)s]")
    add_board_outputs(p, "draw the GCSR with intervals")


def harvest_main(args) -> int:
    from tasks.stss_lang import NotAnSTSSRun, harvest, save_set

    try:
        found = harvest(args.sources, per_pair=args.per_pair)
    except NotAnSTSSRun as exc:
        raise UserError(str(exc)) from exc
    if not found.scenarios:  # an empty set would only fail the stss-lang run that reads it
        why = "; ".join(one_line(p) for p in found.problems[:3]) or \
            "no conversation between a performer and another resident"
        raise UserError(f"no scenarios in {', '.join(map(str, args.sources))} "
                        f"({len(found.harvested_from)} runs read: {why}); nothing written to "
                        f"{args.out}")
    hold_output(args.out, file=True)
    save_set(found, args.out)
    tasks = len({s.task.id for s in found.scenarios})
    console = terminal.console()
    console.print(f"{len(found.scenarios)} scenarios of {tasks} tasks from "
                  f"{len(found.harvested_from)} runs: {args.out}", highlight=False)
    if found.problems:  # kept in the set's file too (`problems`)
        console.print(f"[yellow]not read ({len(found.problems)}):[/] " +
                      "; ".join(one_line(p) for p in found.problems[:5]) +
                      (f"; {len(found.problems) - 5} more in {args.out}"
                       if len(found.problems) > 5 else ""), highlight=False)
    return 0


def _set_and_roles(args):
    """The scenario set (a UserError when it does not load), each role's model and sampling."""
    from tasks.kit import ItemIdError

    try:
        items = STSS_LANG.items.load(args.set, {})
    except (FileFormatError, ItemIdError) as exc:
        raise UserError(str(exc)) from exc
    models = {"performer": args.model, "partner": args.partner_model or args.model}
    return items, models, {r.name: r.sampling for r in STSS_LANG.roles}


def _archs(args) -> list[str]:
    """The architectures asked for, each one that loads, none twice (a UserError)."""
    from agents.architecture import load_architecture

    archs = args.archs or ["ga", "ga_tdp"]
    for arch in archs:
        try:
            load_architecture(arch)
        except FileFormatError as exc:
            raise UserError(str(exc)) from exc
    if len(set(archs)) != len(archs):
        raise UserError("the same --arch is given twice")
    return archs


def dry_run(args) -> int:
    """`sandbox stss-lang --dry-run`: per --arch, the conversations it would run (finished ones
    skipped) and what they would spend per role and model (sandbox/app/commands/benchmark.py
    kit_estimate: the directory's finished ones, else the kept rates); writes nothing and
    refuses what the run refuses."""
    import argparse

    from sandbox.app.commands.benchmark import foretell
    from sandbox.app.commands.common import access_settings, models_file
    from sandbox.app.suites.benchmark import (
        BenchmarkMismatch,
        Configuration,
        ModelPool,
        open_manifest,
        wanted_manifest,
    )

    archs = _archs(args)
    judges = judge_models(args)
    items, models, sampling = _set_and_roles(args)
    pool = ModelPool(access_settings(args), models_file(args))  # names only: nothing built
    selected = [item_id for item_id, _ in items.select(args.every)]
    for arch in archs:
        out = args.out / Path(arch).stem
        options = {"arch": arch, "embedder": args.embedder}
        config = Configuration(models, sampling, judges,
                               label=f"{models['performer']} {Path(arch).stem}",
                               every=args.every, seed=args.seed, options=options)
        try:  # what the run refuses (another configuration in its directory), so does this
            open_manifest(STSS_LANG, out, wanted_manifest(STSS_LANG, items, config, pool),
                          args.rejudge, write=False)
        except BenchmarkMismatch as exc:
            raise UserError(str(exc)) from exc
        _done, estimate = foretell(STSS_LANG, argparse.Namespace(**{**vars(args), "out": out}),
                                   selected, options, models, judges)
        terminal.console().print(f"[bold]{arch}[/]", highlight=False)
        terminal.print_markdown(estimate.markdown("conversation"))
    return 0


def run_main(args) -> int:
    import argparse

    from evaluation.stss_lang.usage import table3_board
    from sandbox.app.commands.benchmark import close_estimate, foretell
    from sandbox.app.suites.benchmark import Configuration

    if getattr(args, "dry_run", False):
        return dry_run(args)
    console = terminal.console()
    archs = _archs(args)
    judges = judge_models(args)
    parallel = parallel_options(args)
    use_prompts(args)
    items, models, sampling = _set_and_roles(args)
    pool = model_pool(args, [*models.values(), *judges], models)
    selected = len(items.select(args.every))
    limits = run_limits(args, parallel)  # one budget for every --arch
    hold_output(args.out)  # refused at once while another command writes into it
    failed = unfinished = 0
    for arch in archs:
        out = args.out / Path(arch).stem
        console.print(f"[dim]stss-lang {arch}: {selected} of {len(items)} scenarios, performer "
                      f"{models['performer']}, partner {models['partner']}, judges "
                      f"{', '.join(judges)}, into {out}[/]", highlight=False)
        options = {"arch": arch, "embedder": args.embedder}
        config = Configuration(models, sampling, judges,
                               label=f"{models['performer']} {Path(arch).stem}",
                               every=args.every, seed=args.seed, options=options)
        # taken before it runs: the run closes with it beside what it spent
        arch_args = argparse.Namespace(**{**vars(args), "out": out})
        ids = [i for i, _ in items.select(args.every)]
        done, foretold = foretell(STSS_LANG, arch_args, ids, options, models, judges)
        report = run_with_progress(STSS_LANG, out, items, pool, config, console=console,
                                   description=arch, total=selected, transient=True,
                                   rejudge=args.rejudge, parallel=parallel, limits=limits,
                                   command=made_by(args))
        if report is None:
            return 1
        console.print(f"{arch}: {report_line('conversations', report)}; "
                      f"{report.wall_time_s:.1f} s", highlight=False)
        for item, error in report.failures:
            terminal.say_stopped(f"failed: {item}: {error}")
        close_estimate(console, STSS_LANG, arch_args, ids, done, foretold, report, models,
                       judges)
        failed += len(report.failures)
        unfinished += sum(print_stopped(report, "conversation(s)"))
    write_board(table3_board([args.out / Path(a).stem for a in archs], judges=judges,
                      seed=args.seed, resamples=args.resamples), args)
    if failed:
        terminal.say_stopped(f"{failed} scenario(s) failed and are left out; run the same "
                             "command again to retry them")
    return 1 if failed or unfinished else 0


def remade(args, run: Path):
    """What `sandbox rerun ITEM` remakes a conversation of this command with (RUN is
    OUT/ARCH/runs/ITEM): the benchmark, the set, the models' pool and ARCH's configuration."""
    from sandbox.app.suites.benchmark import Configuration

    arch = next((a for a in _archs(args) if Path(a).stem == run.parent.parent.name), None)
    if arch is None:
        raise UserError(f"{run}: not under the directory of one of the recorded command's "
                        f"architectures ({', '.join(_archs(args))})")
    judges = judge_models(args)
    use_prompts(args)
    items, models, sampling = _set_and_roles(args)
    pool = model_pool(args, [*models.values(), *judges], models)
    config = Configuration(models, sampling, judges,
                           label=f"{models['performer']} {Path(arch).stem}", every=args.every,
                           seed=args.seed, options={"arch": arch, "embedder": args.embedder})
    return STSS_LANG, items, pool, config


def board_main(args) -> int:
    from evaluation.kit import BoardError
    from evaluation.stss_lang.usage import table3_board

    try:
        report = table3_board(args.dirs, judges=args.judges, seed=args.seed,
                              resamples=args.resamples)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    write_board(report, args)
    return 0


PLUGIN = Plugin("stss-lang", "STSS language level: goal conditions judged on a conversation "
                "and on the partner's summary (Table 3)", commands=register,
                sweep=Sweep("stss-lang", "--model", "stss-lang-board", arch_flag="--arch",
                            label_flag=None, seed_flag="--seed"),
                board_commands={STSS_LANG.manifest_file: "stss-lang-board"})
