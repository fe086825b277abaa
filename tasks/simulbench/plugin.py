"""SimulBench declared as a benchmark plug-in (entry point `sandbox.benchmarks: simulbench`): two
kit benchmarks and the steps between them.

    COLLECT      `sandbox simulbench-collect`: task x 3 dialogues of a user agent and a
                 simulator (4 turns each), each judged for its first challenging turn
    extract      `sandbox simulbench-extract`: the collected dialogues and their challenge
                 judgments -> test scripts in the published format
    SIMULBENCH   `sandbox simulbench`: every script answered by the model under test, rated
                 1-10 by each judge; `sandbox simulbench-board` compares configurations
    pairwise     `sandbox simulbench-pairwise`: answer directories compared two by two (every
                 pair, or each against a reference) by a judge in both orders (Table 1)

The command line makes `sandbox NAME` and `sandbox NAME-board` from each declaration; the two
steps between are this plug-in's own commands. Reading the directories, the boards and the
pairwise judging are evaluation/simulbench's.

Like every benchmark's plugin module, this is the benchmark's composition root: the one module
of tasks/simulbench that may name its scorers (evaluation/simulbench) and the app's plug-in API.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from evaluation.kit import JUDGE_FORMATS
from evaluation.simulbench import (
    CHALLENGE_JUDGE,
    SCORE_JUDGE,
    answers_report,
    challenge_judge,
    collection_report,
    score_judge,
)
from sandbox.app.commands.benchmark import EMBEDDED, model_pool
from sandbox.app.commands.common import (
    add_model_access_options,
    output_dir,
    output_file,
    use_prompts,
)
from sandbox.app.options import MAX_TOKENS, InputDir, InputFile, Model
from sandbox.app.plugins import Benchmark, Board, Items, Judging, Option, Plugin, Sweep
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from tasks.kit import Role, Sampling

from . import (
    JUDGE_SAMPLING,
    SIMULATOR_SAMPLING,
    SUBSETS,
    USER_SAMPLING,
    collection_items,
    load_scripts,
    load_tasks,
    script_items,
)
from .scenario import SIMULATOR_TAG, AnswerScenario, CollectScenario
from .user_agent import USER_TAG

CHALLENGE_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=200)


def judge_format(what: str) -> dict[str, Option]:
    return {"judge_format": Option(
        "text", f"how the {what} answers: text (the paper's: reasons, then the verdict in "
        "double brackets) or json (a schema-bound JSON object, which a local model's grammar "
        "cannot leave: for small judges that never write the brackets)", JUDGE_FORMATS)}


# -- stage 1: collection -------------------------------------------------------------------------
TURN_LABELS = ("ours", "original")


def _collect_items(path: Path | None, options: dict[str, Any]):
    if options.get("turn_labels", "ours") not in TURN_LABELS:
        raise FileFormatError("--turn-labels", f"{options['turn_labels']!r} is neither 'ours' "
                                               "nor 'original'")
    return collection_items(load_tasks(path), source=str(path or ""))


COLLECT = Benchmark(
    name="simulbench-collect", title="SimulBench dialogue collection",
    roles=[Role("user", USER_SAMPLING, USER_TAG, "the user agent's model", "per request"),
           Role("simulator", SIMULATOR_SAMPLING, SIMULATOR_TAG,
                "the simulator that answers the user agent", "per answer")],
    under_test="simulator",
    items=Items(_collect_items, flag="tasks", noun="dialogues",
                help="simulation tasks: our YAML or the public simulbench_tasks.jsonl "
                     "[default: our 40 tasks]"),
    scenario=lambda item, item_id, cast, options: CollectScenario(
        item[0], item[1], cast, turn_labels=options.get("turn_labels", "ours")),
    judging=Judging([CHALLENGE_JUDGE], CHALLENGE_SAMPLING,
                    options=judge_format("challenging-turn judge"),
                    choose=lambda chosen: [challenge_judge(chosen["judge_format"])]),
    board=Board(collection_report,
                example="sandbox simulbench-collect-board runs/sb-collect"),
    options={"turn_labels": Option("ours", "how the challenge judge numbers turns: ours (1..4, "
                                           "answer 0..4) or original (shown 0..3, answer asked "
                                           "in 1..8 with 0 for none; above 4 is re-asked)",
                                    choices=TURN_LABELS)},
    noun="dialogues",
    example="sandbox simulbench-collect --user local/smollm2-135m --simulator "
            "local/smollm2-135m --judge local/smollm2-135m --judge-format json --every 40 "
            "--user-max-tokens 60 --simulator-max-tokens 80 --out runs/sb-collect; then sandbox "
            "simulbench-extract runs/sb-collect --out runs/scripts.jsonl",
    rates=Path(__file__).with_name("collect_rates.json"))


# -- stages 3-4: answering and the 1-10 judge ----------------------------------------------------
def _script_items(path: Path | None, options: dict[str, Any]):
    if path is None:
        raise FileFormatError("--scripts", "give a test-script file: the published "
                                           "simulbench_all.jsonl or one written by "
                                           "`sandbox simulbench-extract`")
    subset = options.get("subset", "all")
    if subset not in SUBSETS:  # before any file is read: the option is what is wrong
        raise FileFormatError("--subset", f"unknown subset {subset!r}; one of "
                                          f"{', '.join(SUBSETS)}")
    tasks = load_tasks(options["tasks"]) if options.get("tasks") else None
    return script_items(load_scripts(path, tasks), source=str(path), subset=subset)


SIMULBENCH = Benchmark(
    name="simulbench", title="SimulBench simulation benchmark",
    roles=[Role("simulator", SIMULATOR_SAMPLING, SIMULATOR_TAG, "the model under test",
                "per answer")],
    under_test="simulator",
    items=Items(_script_items, flag="scripts", noun="scripts",
                help="test scripts in the published format (simulbench_all.jsonl, or written "
                     "by `sandbox simulbench-extract`); required"),
    scenario=lambda script, item_id, cast, options: AnswerScenario(script, cast),
    judging=Judging([SCORE_JUDGE], JUDGE_SAMPLING, options=judge_format("1-10 judge"),
                    choose=lambda chosen: [score_judge(chosen["judge_format"])]),
    board=Board(answers_report, options={"tasks": {
        "default": None, "type": InputFile(),
        "help": "a task file giving each script's request_type for the by-request-type "
                "table [default: the one each directory was run with, and our tasks]"}},
        example="sandbox simulbench-board runs/sb-smol runs/sb-other --plot board.png"),
    options={"subset": Option("all", "which scripts: all, hard, lastonly, firstchan, "
                                     "subseqchan, stateful, stateless", choices=SUBSETS),
             "tasks": Option("", "a task file; every script's source_id must name one of its "
                                 "tasks", type=InputFile())},
    noun="answers",
    example="sandbox simulbench --scripts runs/scripts.jsonl --simulator local/smollm2-135m "
            "--judge local/smollm2-135m --judge-format json --simulator-max-tokens 80 "
            "--judge-max-tokens 120 --every 2 --out runs/sb-smol (or --scripts "
            "simulbench_all.jsonl --subset hard for the published set)",
    rates=Path(__file__).with_name("rates.json"))


# -- the commands between: extraction and the pairwise comparison --------------------------------
def register(sub) -> None:
    """`sandbox simulbench-extract` and `sandbox simulbench-pairwise` (the kit makes
    `simulbench-collect`, `simulbench` and their boards from the declarations)."""
    e = sub.add_parser(
        "simulbench-extract", help="cut SimulBench test scripts from collected dialogues",
        description="Read a `sandbox simulbench-collect` directory and write its test scripts "
                    "in the published format: a dialogue whose judge found no challenging turn "
                    "gives one LastOnly script (its history without the last answer); one "
                    "challenging at turn t gives a FirstChan script ending on turn t's request "
                    "and a SubseqChan script for each later turn. No model is called.",
        epilog="example: sandbox simulbench-extract runs/sb-collect --out runs/scripts.jsonl")
    e.add_argument("dir", type=InputDir(), help="a simulbench-collect --out directory")
    e.add_argument("--out", type=output_file, required=True,
                   help="the script file to write (.jsonl)")
    e.add_argument("--judge", type=Model(), metavar="MODEL",
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
               f"{EMBEDDED} --judge-format json --out runs/sb-pairs (or runs/sb-a runs/sb-b "
               "--reference runs/sb-ref)")
    p.add_argument("dirs", nargs="+", type=InputDir(), metavar="DIR",
                   help="answer directories written by `sandbox simulbench --out`")
    p.add_argument("--reference", type=InputDir(), metavar="DIR",
                   help="compare each DIR with this answer directory (DIR's model first) "
                        "instead of every pair of the DIRs")
    p.add_argument("--judge", type=Model(), default=EMBEDDED, metavar="MODEL",
                   help="the judge model [default: %(default)s]")
    p.add_argument("--judge-format", choices=JUDGE_FORMATS, default="text",
                   help="text (the paper's [[A]], [[B]] or [[C]]) or json (a schema-bound "
                        "verdict, for small judges) [default: %(default)s]")
    p.add_argument("--out", type=output_dir, required=True, help="where verdicts are kept")
    p.add_argument("--judge-max-tokens", type=MAX_TOKENS, default=1024,
                   help="[default: %(default)s]")
    p.add_argument("--json", type=output_file, help="also write the table as JSON")
    add_model_access_options(p.add_argument_group("model access"))
    p.set_defaults(func=pairwise_main, resumable=True)


def extract_main(args: argparse.Namespace) -> int:
    from evaluation.kit import BoardError
    from evaluation.simulbench.collection import category_counts, extract_dir, strategy_counts
    from sandbox import terminal
    from sandbox.lock import hold_output

    hold_output(args.out, file=True)
    try:
        scripts, summary = extract_dir(args.dir, args.out, args.judge)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    count = category_counts(scripts)
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
    from evaluation.simulbench.pairwise import (
        PairwiseMismatch,
        pairwise_data,
        pairwise_markdown,
        plan_pairs,
        run_pairwise,
    )
    from sandbox import terminal
    from sandbox.lock import hold_output

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
        reports = run_pairwise(pairs, args.out, args.judge, pool.llm, sampling,
                               args.judge_format,
                               on_progress=lambda item: console.print(f"[dim]{item}[/]"))
    except (BoardError, PairwiseMismatch) as exc:
        raise UserError(str(exc)) from exc
    pairs_said = "1 pair" if len(reports) == 1 else f"{len(reports)} pairs"
    console.print(f"{pairs_said}: verdicts made {sum(r.made for r in reports)}, kept "
                  f"{sum(r.skipped for r in reports)}; "
                  f"{sum(r.missing for r in reports)} scripts answered in only one directory "
                  "of a pair are left out")
    print(pairwise_markdown(reports, args.judge_format), end="")
    unavailable = sum(r.unavailable for r in reports)
    if unavailable:
        from sandbox.terminal import say_stopped

        say_stopped(f"unavailable: {unavailable} verdict(s) reached no model (the endpoint "
                    "refused every call or could not be reached); fix the endpoint or key and "
                    "run the same command again to ask them")
    if args.json:
        from sandbox.storage import write_atomic

        hold_output(args.json, file=True)
        write_atomic(args.json, json.dumps(pairwise_data(reports, args.judge_format), indent=2)
                     + "\n")
    return 1 if unavailable else 0


PLUGIN = Plugin("simulbench", "SimulBench: a model as a text simulator, its answers to "
                "collected dialogues rated 1-10 and compared two by two",
                benchmarks=[COLLECT, SIMULBENCH], commands=register,
                # a sweep's cell answers the scripts its flags name (`scripts: FILE`)
                sweep=Sweep("simulbench", "--simulator", "simulbench-board",
                            seed_flag="--seed"))

__all__ = ["COLLECT", "PLUGIN", "SIMULBENCH"]
