"""`sandbox stss-harvest`: the language-level scenarios of STSS runs or suites, as a set file.
`sandbox stss-lang`: play a scenario set with each --arch, judge it, print the paper's Table 3.
`sandbox stss-lang-board`: the Table 3 board of finished directories (no model is called).
"""

from __future__ import annotations

from pathlib import Path

from sandbox import terminal
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.lock import hold_output

from .benchmark import (
    EMBEDDED,
    budget_run_options,
    judge_models,
    model_pool,
    play,
    print_stopped,
    report_line,
    write_board,
)
from .common import (
    add_budget_options,
    add_model_access_options,
    add_parallel_options,
    non_negative_int,
    output_dir,
    output_file,
    parallel_options,
    positive_int,
    use_prompts,
)

EXAMPLE = ("sandbox stss-lang --arch ga --arch ga_tdp --model local/smollm2-135m "
           "--partner-model local/smollm2-135m --judge local/smollm2-135m --every 67 "
           "--out runs/lang-smol   (the built-in set, 2 of its 134 scenarios per --arch)")


def register(sub) -> None:
    h = sub.add_parser(
        "stss-harvest", help="harvest language-level scenarios from STSS runs",
        description="Read STSS run directories (or suites holding them) and write every "
                    "conversation the performer had as a scenario: both characters' memories "
                    "as of its start, the task, TDP plans. At most two per task and pair of "
                    "characters; appointment tasks keep only performer-target talks. Reads "
                    "the logs only.",
        epilog="example: sandbox stss --model local/smollm2-135m --out runs/suite && "
               "sandbox stss-harvest runs/suite --out runs/suite-scenarios.json")
    h.add_argument("sources", nargs="+", type=Path, metavar="RUN_OR_SUITE")
    h.add_argument("--out", type=output_file, required=True, help="the scenario set file to write")
    h.add_argument("--per-pair", type=positive_int, default=2,
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
    p.add_argument("set", nargs="?", type=Path,
                   help="a scenario set (sandbox stss-harvest) [default: the built-in set, "
                        "harvested from scripted runs of the 30 templates]")
    p.add_argument("--arch", action="append", dest="archs", metavar="ARCH",
                   help="the performer's architecture; repeat [default: ga and ga_tdp]")
    p.add_argument("--model", default=EMBEDDED, help="the performer's model [default: %(default)s]")
    p.add_argument("--partner-model", default=None,
                   help="the partner's model [default: --model]")
    p.add_argument("--judge", action="append", dest="judges", metavar="MODEL",
                   help=f"a judge model; repeat for several [default: {EMBEDDED}]")
    p.add_argument("--embedder", choices=["minilm", "hashing"],
                   help="memory embedder [default: the harvested run's]")
    p.add_argument("--out", type=output_dir, required=True, help="the results directory")
    p.add_argument("--every", type=positive_int, default=1, metavar="K",
                   help="keep about one of K scenarios (a quick run) [default: %(default)s]")
    p.add_argument("--seed", type=non_negative_int, default=0, help="[default: %(default)s]")
    p.add_argument("--rejudge", action="store_true", help="ask the judges again")
    add_board_options(p)
    add_model_access_options(p.add_argument_group("model access"))
    add_budget_options(p, suite=True, episode="scenario (a conversation and its judges)")
    add_parallel_options(p)
    p.set_defaults(func=run_main, resumable=True)

    b = sub.add_parser(
        "stss-lang-board", help="the Table 3 board of STSS language-level directories",
        description="Table 3 from saved judgments (no model is called): SR and GCSR, micro "
                    "and macro, conversation and summary, n and 95%% bootstrap intervals, the "
                    "per-type comparison with the action level, calls and tokens per role.",
        epilog="example: sandbox stss-lang-board runs/lang-smol --plot table3.png")
    b.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    b.add_argument("--judge", action="append", dest="judges", metavar="MODEL",
                   help="only these judges' verdicts [default: all]")
    b.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed")
    add_board_options(b)
    b.set_defaults(func=board_main)


def add_board_options(p) -> None:
    p.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples "
                                                               "[default: %(default)s]")
    p.add_argument("--markdown", type=output_file, help="also write the table to this file")
    p.add_argument("--json", type=output_file, help="write the board as JSON to this file")
    p.add_argument("--plot", type=output_file, metavar="PNG", help="draw the GCSR with intervals")


def harvest_main(args) -> int:
    from tasks.stss_lang import NotAnSTSSRun, harvest, save_set

    try:
        found = harvest(args.sources, per_pair=args.per_pair)
    except NotAnSTSSRun as exc:
        raise UserError(str(exc)) from exc
    hold_output(args.out, file=True)
    save_set(found, args.out)
    tasks = len({s.task.id for s in found.scenarios})
    terminal.console().print(f"{len(found.scenarios)} scenarios of {tasks} tasks from "
                             f"{len(found.harvested_from)} runs: {args.out}", highlight=False)
    return 0


def run_main(args) -> int:
    from agents.architecture import load_architecture
    from sandbox.app.suites.stss_lang import STSS_LANG, board
    from tasks.kit import IdCollision

    console = terminal.console()
    archs = args.archs or ["ga", "ga_tdp"]
    for arch in archs:
        try:
            load_architecture(arch)
        except FileFormatError as exc:
            raise UserError(str(exc)) from exc
    if len(set(archs)) != len(archs):
        raise UserError("the same --arch is given twice")
    judges = judge_models(args)
    parallel = parallel_options(args)
    use_prompts(args)
    try:
        items = STSS_LANG.load_items(args.set, {})
    except (FileFormatError, IdCollision) as exc:
        raise UserError(str(exc)) from exc
    models = {"performer": args.model, "partner": args.partner_model or args.model}
    sampling = {r.name: r.sampling for r in STSS_LANG.roles}
    pool = model_pool(args, [*models.values(), *judges])
    selected = len(items.select(args.every))
    run_budget = budget_run_options(args, parallel)  # one budget for every --arch
    hold_output(args.out)  # refused at once while another command writes into it
    failed = unfinished = 0
    for arch in archs:
        out = args.out / Path(arch).stem
        console.print(f"[dim]stss-lang {arch}: {selected} of {len(items)} scenarios, performer "
                      f"{models['performer']}, partner {models['partner']}, judges "
                      f"{', '.join(judges)}, into {out}[/]", highlight=False)
        report = play(STSS_LANG, out, items, pool, console=console, description=arch,
                      total=selected, transient=True, models=models, sampling=sampling,
                      judges=judges, label=f"{models['performer']} {Path(arch).stem}",
                      every=args.every, seed=args.seed,
                      options={"arch": arch, "embedder": args.embedder}, rejudge=args.rejudge,
                      parallel=parallel, **run_budget)
        if report is None:
            return 1
        console.print(f"{arch}: {report_line('conversations', report)}; "
                      f"{report.wall_time_s:.1f} s", highlight=False)
        for item, error in report.failures:
            console.print(f"[red]failed:[/] {item}: {error}", highlight=False)
        failed += len(report.failures)
        unfinished += sum(print_stopped(console, report, "conversation(s)"))
    write_board(board([args.out / Path(a).stem for a in archs], judges=judges,
                      seed=args.seed, resamples=args.resamples), args)
    if failed:
        console.print(f"{failed} scenario(s) failed and are left out; run the same command "
                      "again to retry them")
    return 1 if failed or unfinished else 0


def board_main(args) -> int:
    from evaluation.kit import BoardError
    from sandbox.app.suites.stss_lang import board

    try:
        report = board(args.dirs, judges=args.judges, seed=args.seed, resamples=args.resamples)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    write_board(report, args)
    return 0
