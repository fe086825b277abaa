"""`sandbox log RUN_DIR`: summarise a run from its directory alone; given a directory of run
directories (a suite, a benchmark directory), one line per run found below it."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

from sandbox.app.options import Count, InputDir, Words
from sandbox.errors import UserError
from sandbox.files import FileFormatError, input_lines, json_line, read_text
from sandbox.log import CALLS, EVENTS, HEADER, RESULT, RunFormatError, RunResult, load_run
from sandbox.summary import answered_by, print_summary, summarize


def register(sub) -> None:
    p = sub.add_parser("log", help="summarise a run directory",
                       description="Print what happened in a run: events by kind, LLM calls by "
                                   "purpose (tokens, cache hits, retries, faults), LLM calls "
                                   "per agent per game day by module (the first part of the "
                                   "purpose tag), simulated and wall time, and any unreadable "
                                   "log lines.",
                       epilog="example: sandbox run single_room --model scripted/default --out "
                              "runs/demo && sandbox log runs/demo --events utterance")
    p.add_argument("run_dir", type=InputDir(),
                   help="a run directory written by `sandbox run`; or a directory "
                        "of run directories (a suite's, a benchmark's): one line "
                        "per run (status, events, calls, warnings)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--events", action="append", type=Words("an event kind"), metavar="KIND",
                   help="instead, print every event of this kind, one a line (repeat for "
                        "several kinds; e.g. --events utterance, or a kind a benchmark logs "
                        "such as user_request_written); with --json, as JSON lines")
    # a call's number: a run of 10^12 calls would take millennia
    p.add_argument("--calls", nargs="*", type=Count(0, 10**12), metavar="SEQ",
                   help="instead, print each LLM call (or only those numbered SEQ): its "
                        "purpose, agent, role, model and endpoint, the messages it sent and "
                        "the answer that came back (from the run's prompts.jsonl); with "
                        "--json, as JSON lines")
    p.set_defaults(func=main)


def print_calls(run, wanted: list[int], as_json: bool) -> int:
    """`sandbox log RUN --calls [SEQ...]`: every call with its prompt and answer."""
    from sandbox.log import RunFormatError, read_prompts

    try:
        prompts, problems = read_prompts(run.dir)
    except RunFormatError as exc:  # a directory, a FIFO, a device, a file over the bound
        raise UserError(str(exc)) from None
    chosen = [c for c in run.calls if not wanted or c.seq in wanted]
    missing = sorted(set(wanted) - {c.seq for c in chosen})
    if missing:
        raise UserError(f"--calls: no call numbered {', '.join(map(str, missing))} in "
                        f"{run.dir} (it made {len(run.calls)}, numbered 0-{len(run.calls) - 1})")
    for call in chosen:
        prompt = prompts.get(call.seq)
        if as_json:
            print(json.dumps({**call.model_dump(exclude_none=True),
                              **(prompt.model_dump(exclude={"seq"}) if prompt else {})}))
            continue
        who = answered_by(call)
        when = f"t={call.t:g} " if call.t is not None else ""
        print(f"--- call {call.seq}: {when}{call.tag} {call.agent or '-'} ({who}), "
              f"{call.prompt_tokens} + {call.completion_tokens} tokens"
              f"{', cached' if call.cached else ''}"
              f"{', faults: ' + ', '.join(call.faults) if call.faults else ''}")
        if prompt is None:
            print("(its prompt was not kept)")
            continue
        for message in prompt.messages:
            print(f"[{message.get('role', '?')}]\n{message.get('content', '')}")
        print(f"[answer]\n{prompt.answer}")
    for problem in problems:
        print(f"sandbox log: {problem}", file=sys.stderr)
    return 0


def main(args) -> int:
    path = Path(args.run_dir)
    if path.is_dir() and not (path / HEADER).exists() and (runs := run_dirs_below(path)):
        return summarise_runs(path, runs, args)
    try:
        run = load_run(args.run_dir)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    if args.calls is not None:
        return print_calls(run, args.calls, args.json)
    if args.events:
        wanted = _check_kinds(args.events, {event.kind for event in run.events})
        counts = dict.fromkeys(wanted, 0)
        for event in run.events:
            if event.kind in counts:
                counts[event.kind] += 1
                print(event.model_dump_json() if args.json
                      else _event_line(event, run.header.start_time))
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


def _event_line(event, start) -> str:
    """"06:00:40 (t=40) User user_request_written: turn=2, strategy=improvement, ...": the
    simulated clock a user reads, and the seconds a moment option (--at 40) takes."""
    from sandbox.simtime import clock_text

    data = event.model_dump(exclude={"kind", "t", "agent"})
    fields = ", ".join(f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}"
                       for key, value in data.items())
    return (f"{clock_text(start, event.t)} (t={event.t:g}) {event.agent or '-'} "
            f"{event.kind}: {fields}")


def run_dirs_below(path: Path) -> list[Path]:
    """The run directories under `path` (those holding a header.json), in path order."""
    return sorted(header.parent for header in path.rglob(HEADER) if header.parent != path)


def _lines(path: Path) -> int:
    """Whole lines of a JSONL file (a line cut by a kill does not count)."""
    if not path.is_file():
        return 0
    try:
        return sum(1 for _, line in input_lines(path) if line.endswith(b"\n") and line.strip())
    except FileFormatError as exc:
        raise UserError(str(exc)) from None


def run_line(run_dir: Path) -> dict:
    """What one run's result.json says (status, events, calls, warnings, error); without one,
    its logs' lines counted."""
    result = None
    status = "unfinished (no result.json)"
    if (run_dir / RESULT).is_file():
        try:
            result = RunResult.model_validate(json_line(read_text(run_dir / RESULT)))
            status = result.status
        except (ValueError, FileFormatError):
            status = "unknown (result.json unreadable)"
    warnings = list(result.warnings) if result else []
    if result and result.degraded:
        warnings.append(f"degraded: {result.fallback_fraction:.0%} of its calls fell back")
    return {"run": str(run_dir), "status": status,
            "events": result.events if result else _lines(run_dir / EVENTS),
            "calls": result.llm_calls if result else _lines(run_dir / CALLS),
            "warnings": warnings, "error": result.error if result else None}


def summarise_runs(path: Path, runs: list[Path], args) -> int:
    """`sandbox log DIR` of a directory of runs: one line per run, then the count by status."""
    if args.events:
        raise UserError(f"--events reads one run: {path} holds {len(runs)} run directories "
                        f"(e.g. {runs[0]})")
    lines = [run_line(run) for run in runs]
    if args.json:
        print(json.dumps(lines, indent=2))
        return 0
    for line in lines:
        said = f"{Path(line['run']).relative_to(path)}: {line['status']}, {line['events']} " \
               f"events, {line['calls']} calls"
        if line["error"]:
            said += f"; error: {line['error']}"
        if line["warnings"]:
            said += f"; warnings: {'; '.join(line['warnings'])}"
        print(said)
    statuses: dict[str, int] = {}
    for line in lines:
        statuses[line["status"]] = statuses.get(line["status"], 0) + 1
    print(f"{len(lines)} runs in {path}: "
          + ", ".join(f"{n} {status}" for status, n in statuses.items())
          + f"; one run in full: sandbox log {runs[0]}")
    return 0
