"""`sandbox score RUN_DIR...`: score finished STSS runs again, offline, from their logs."""

from __future__ import annotations

from pathlib import Path

from sandbox import terminal
from sandbox.errors import UserError

from .common import add_scoring_options, non_negative_int, print_score, scoring_options


def register(sub) -> None:
    p = sub.add_parser(
        "score", help="re-score finished STSS runs from their logs (no model needed)",
        description="Read each run directory's header and events, apply the STSS rules of its "
                    "task type, print the score and write score.json (ours) or "
                    "score.reference.json (the STSS authors' scorer's rules) with the evidence: "
                    "which agent, which event, which rule counted or rejected it.",
        epilog="example: sandbox score runs/demo")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--json", action="store_true", help="print score.json instead")
    p.add_argument("--evidence", type=non_negative_int, default=8, metavar="N",
                   help="evidence lines to print per run [default: %(default)s]")
    add_scoring_options(p)
    p.set_defaults(func=main)


def main(args) -> int:
    from evaluation.stss import ScoreError, write_score
    from sandbox.lock import hold_output
    from sandbox.log import RunFormatError

    console = terminal.console()
    scorings = scoring_options(args)
    for run_dir in args.runs:
        if Path(run_dir).is_dir():  # (a missing one is said by write_score)
            hold_output(run_dir)  # score.json is written beside the run: not while it runs
        for options in scorings:
            try:
                score = write_score(run_dir, options)
            except (RunFormatError, ScoreError) as exc:
                raise UserError(str(exc)) from exc
            if args.json:
                print(score.model_dump_json(indent=2))
                continue
            console.print(f"[bold]{run_dir}[/]: {score.template}, performer {score.performer} "
                          f"({score.architecture}), seed {score.seed}; written to "
                          f"{Path(run_dir) / options.file}", highlight=False)
            print_score(score, console, evidence=args.evidence)
    return 0
