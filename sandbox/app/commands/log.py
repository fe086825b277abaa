"""`sandbox log RUN_DIR`: summarise a run from its directory alone."""

from __future__ import annotations

import difflib
import json
import sys

from sandbox.errors import UserError
from sandbox.log import RunFormatError, load_run
from sandbox.summary import print_summary, summarize


def register(sub) -> None:
    p = sub.add_parser("log", help="summarise a run directory",
                       description="Print what happened in a run: events by kind, LLM calls by "
                                   "purpose (tokens, cache hits, retries, faults), LLM calls "
                                   "per agent per game day by module (the first part of the "
                                   "purpose tag), simulated and wall time, and any unreadable "
                                   "log lines.",
                       epilog="example: sandbox run single_room --model scripted/default --out "
                              "runs/demo && sandbox log runs/demo --events utterance")
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
        wanted = _check_kinds(args.events, {event.kind for event in run.events})
        counts = dict.fromkeys(wanted, 0)
        for event in run.events:
            if event.kind in counts:
                counts[event.kind] += 1
                print(event.model_dump_json() if args.json else _event_line(event))
        for kind, n in counts.items():
            if not n:  # said, so an empty answer is not mistaken for a typo or a bug
                print(f"sandbox log: no {kind} event in {args.run_dir}", file=sys.stderr)
        return 0
    summary = summarize(run)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0


def _check_kinds(kinds: list[str], in_run: set[str]) -> list[str]:
    """The kinds asked for, each one a kind some package defines or the run holds; a UserError
    naming the nearest ones otherwise."""
    from sandbox.events import EVENT_TYPES, load_event_plugins

    load_event_plugins()
    known = sorted(set(EVENT_TYPES) | in_run)
    for kind in kinds:
        if kind not in known:
            close = difflib.get_close_matches(kind, known, n=3)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            raise UserError(f"--events {kind}: no such event kind; {hint}known kinds: "
                            f"{', '.join(known)}")
    return list(dict.fromkeys(kinds))


def _event_line(event) -> str:
    """"t=40.0 User user_request_written: turn=2, strategy=improvement, ..." """
    data = event.model_dump(exclude={"kind", "t", "agent"})
    fields = ", ".join(f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}"
                       for key, value in data.items())
    return f"t={event.t:g} {event.agent or '-'} {event.kind}: {fields}"
