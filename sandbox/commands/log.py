"""`sandbox log RUN_DIR`: summarise a run from its directory alone."""

from __future__ import annotations

import json

from sandbox.errors import UserError
from sandbox.log import RunFormatError, load_run
from sandbox.summary import print_summary, summarize


def register(sub) -> None:
    p = sub.add_parser("log", help="summarise a run directory",
                       description="Print what happened in a run: events by kind, LLM calls by "
                                   "purpose (tokens, cache hits, retries, faults), LLM calls "
                                   "per agent per game day by module (the first part of the "
                                   "purpose tag), simulated and wall time, and any unreadable "
                                   "log lines.")
    p.add_argument("run_dir", help="a run directory written by `sandbox run`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=main)


def main(args) -> int:
    try:
        run = load_run(args.run_dir)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    summary = summarize(run)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0
