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
    p.add_argument("--events", action="append", metavar="KIND",
                   help="instead, print every event of this kind, one a line (repeat for "
                        "several kinds; e.g. --events utterance, or a kind a benchmark logs "
                        "such as user_request_written); with --json, as JSON lines")
    p.set_defaults(func=main)


def main(args) -> int:
    try:
        run = load_run(args.run_dir)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    if args.events:
        wanted = set(args.events)
        for event in run.events:
            if event.kind in wanted:
                print(event.model_dump_json() if args.json else _event_line(event))
        return 0
    summary = summarize(run)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0


def _event_line(event) -> str:
    """"t=40.0 User user_request_written: turn=2, strategy=improvement, ..." """
    data = event.model_dump(exclude={"kind", "t", "agent"})
    fields = ", ".join(f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}"
                       for key, value in data.items())
    return f"t={event.t:g} {event.agent or '-'} {event.kind}: {fields}"
