"""SimulBench's commands:

    sandbox simulbench-collect    user agent x simulator dialogues, each judged for its first
                                  challenging turn (a kit benchmark; -board shows the counts)
    sandbox simulbench-extract    collected dialogues -> test scripts in the published format
    sandbox simulbench            every script answered by the model under test, rated 1-10
    sandbox simulbench-board      the table over answer directories (All, Hard, categories, ...)
    sandbox simulbench-pairwise   two answer directories compared in both orders
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sandbox.app.commands.benchmark import EMBEDDED, model_pool, register_benchmark
from sandbox.app.commands.common import add_model_access_options, use_prompts
from sandbox.errors import UserError

from .common import output_dir, output_file, positive_int

SMOL = "local/smollm2-135m"


def register(sub) -> None:
    from evaluation.kit import JUDGE_FORMATS
    from sandbox.app.suites.simulbench import COLLECT, SIMULBENCH

    register_benchmark(sub, COLLECT)
    register_benchmark(sub, SIMULBENCH)

    e = sub.add_parser(
        "simulbench-extract", help="cut SimulBench test scripts from collected dialogues",
        description="Read a `sandbox simulbench-collect` directory and write its test scripts "
                    "in the published format: a dialogue whose judge found no challenging turn "
                    "gives one LastOnly script (its history without the last answer); one "
                    "challenging at turn t gives a FirstChan script ending on turn t's request "
                    "and a SubseqChan script for each later turn. No model is called.",
        epilog="example: sandbox simulbench-extract runs/sb-collect --out runs/scripts.jsonl")
    e.add_argument("dir", type=Path, help="a simulbench-collect --out directory")
    e.add_argument("--out", type=output_file, required=True,
                   help="the script file to write (.jsonl)")
    e.add_argument("--judge", metavar="MODEL",
                   help="use this judge model's verdicts [default: the first usable one]")
    e.set_defaults(func=extract_main)

    p = sub.add_parser(
        "simulbench-pairwise", help="compare SimulBench answer directories two by two",
        description="For every script both directories of a pair answered, a judge compares "
                    "the two answers twice with the order swapped. The first model wins a "
                    "script only when both orders prefer it; any other combination is a tie. "
                    "Two directories make one pair; with more, every pair in the order given "
                    "(the earlier one first), or each against --reference. Prints the paper's "
                    "Table 1 shape: per pair and subset the win, tie and lose rates of the "
                    "first model, their difference and the share of order-inconsistent "
                    "verdicts (A/A or B/B). Saved verdicts are kept.",
        epilog=f"example: sandbox simulbench-pairwise runs/sb-a runs/sb-b runs/sb-c --judge "
               f"{SMOL} --judge-format json --out runs/sb-pairs (or runs/sb-a runs/sb-b "
               "--reference runs/sb-ref)")
    p.add_argument("dirs", nargs="+", type=Path, metavar="DIR",
                   help="answer directories written by `sandbox simulbench --out`")
    p.add_argument("--reference", type=Path, metavar="DIR",
                   help="compare each DIR with this answer directory (DIR's model first) "
                        "instead of every pair of the DIRs")
    p.add_argument("--judge", default=EMBEDDED, metavar="MODEL",
                   help="the judge model [default: %(default)s]")
    p.add_argument("--judge-format", choices=JUDGE_FORMATS, default="text",
                   help="text (the paper's [[A]], [[B]] or [[C]]) or json (a schema-bound "
                        "verdict, for small judges) [default: %(default)s]")
    p.add_argument("--out", type=output_dir, required=True, help="where verdicts are kept")
    p.add_argument("--judge-max-tokens", type=positive_int, default=1024,
                   help="[default: %(default)s]")
    p.add_argument("--json", type=output_file, help="also write the table as JSON")
    add_model_access_options(p.add_argument_group("model access"))
    p.set_defaults(func=pairwise_main, resumable=True)


def extract_main(args: argparse.Namespace) -> int:
    from evaluation.kit import BoardError
    from sandbox import terminal
    from sandbox.app.suites.simulbench import extract_dir, strategy_counts
    from sandbox.lock import hold_output

    hold_output(args.out, file=True)
    try:
        scripts, summary = extract_dir(args.dir, args.out, args.judge)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    count = {c: sum(s.category == c for s in scripts)
             for c in ("lastonly", "firstchan", "subseqchan")}
    console = terminal.console()
    console.print(f"{len(scripts)} scripts from {len(summary.dialogues)} dialogues into "
                  f"{args.out}: LastOnly {count['lastonly']}, FirstChan {count['firstchan']}, "
                  f"SubseqChan {count['subseqchan']}; {summary.fallbacks} judge fallbacks "
                  "taken as no challenge", highlight=False)
    console.print(f"user agent's strategies: {strategy_counts(summary.strategies)}",
                  highlight=False)
    if summary.left_out or summary.ledger.judgments["stale"] \
            or summary.ledger.judgments["unreadable"]:
        console.print(f"[yellow]left out[/] (run simulbench-collect again to finish them): "
                      f"{summary.ledger.summary()}", highlight=False, soft_wrap=True)
        for line in summary.ledger.markdown()[1:]:
            console.print(line, highlight=False, soft_wrap=True)
    console.print(f"next: sandbox simulbench --scripts {args.out} --simulator MODEL --judge "
                  "MODEL --out DIR", highlight=False)
    return 0


def pairwise_main(args: argparse.Namespace) -> int:
    from evaluation.kit import BoardError
    from evaluation.simulbench.pairwise import pairwise_data, pairwise_markdown
    from sandbox import terminal
    from sandbox.app.suites.benchmark import BenchmarkMismatch
    from sandbox.app.suites.simulbench import plan_pairs, run_pairwise
    from sandbox.lock import hold_output
    from tasks.kit import Sampling

    use_prompts(args)
    if args.reference is None and len(args.dirs) < 2:
        raise UserError("give two answer directories or more, or one with --reference")
    given = [*args.dirs, *([args.reference] if args.reference else [])]
    if len({path.resolve() for path in given}) < len(given):
        raise UserError("the same answer directory is given twice")
    pairs = plan_pairs(args.dirs, args.reference)
    pool = model_pool(args, [args.judge])
    try:
        sampling = Sampling(temperature=0.0, top_p=1.0, max_tokens=args.judge_max_tokens)
    except ValueError as exc:
        raise UserError(f"--judge-max-tokens: {exc}") from exc
    console = terminal.console()
    hold_output(args.out)  # the verdicts' directory: one writer
    try:
        reports = run_pairwise(pairs, args.out, args.judge, pool, sampling, args.judge_format,
                               on_progress=lambda item: console.print(f"[dim]{item}[/]"))
    except (BoardError, BenchmarkMismatch) as exc:
        raise UserError(str(exc)) from exc
    pairs_said = "1 pair" if len(reports) == 1 else f"{len(reports)} pairs"
    console.print(f"{pairs_said}: verdicts made {sum(r.made for r in reports)}, kept "
                  f"{sum(r.skipped for r in reports)}; "
                  f"{sum(r.missing for r in reports)} scripts answered in only one directory "
                  "of a pair are left out")
    print(pairwise_markdown(reports, args.judge_format), end="")
    unavailable = sum(r.unavailable for r in reports)
    if unavailable:
        console.print(f"[red]unavailable:[/] {unavailable} verdict(s) reached no model (the "
                      "endpoint refused every call or could not be reached); fix the endpoint "
                      "or key and run the same command again to ask them", soft_wrap=True)
    if args.json:
        from sandbox.storage import write_atomic

        hold_output(args.json, file=True)
        write_atomic(args.json, json.dumps(pairwise_data(reports, args.judge_format), indent=2)
                     + "\n")
    return 1 if unavailable else 0
