"""`sandbox rerun RUN`: the run's own command again, from the command line its header records
(a one-episode `sandbox run`), its answers from the run's cache; a fork's changes made again at
its fork points (sandbox/app/rerunning.py); a benchmark item's dialogue and judges made again
by its benchmark's command (commands/benchmark.py, `rerun_item`)."""

from __future__ import annotations

import argparse
import math
import shutil

from sandbox.app.options import InputDir
from sandbox.checkpoint import Checkpoint
from sandbox.errors import UserError
from sandbox.log import CACHE, HEADER, RunFormatError, RunHeader, read_header
from sandbox.outdirs import OutputTaken, refuse_inputs

from ..rerunning import (
    benchmark_command,
    copy_cache,
    fork_chain,
    fork_pauses,
    from_checkpoint,
    recorded_command,
    recorded_forks,
    run_recorded,
    same_scenario,
    travelled,
)
from .common import add_schedule_option, claim_run_directory, output_dir


def register(sub) -> None:
    p = sub.add_parser(
        "rerun", help="run a run again with its own command (from its header)",
        description="Repeat the command that made RUN (recorded in its header by `sandbox "
                    "run`) with every option it was given, into RUN again (--overwrite: the "
                    "answers already given come from RUN's cache, so it replays, or goes on "
                    "where a budget or a kill stopped it, from RUN's last checkpoint when "
                    "it wrote any) or into --out NEW (all of it, RUN's cache "
                    "copied there first; RUN is not changed). A fork (`sandbox fork`) is run "
                    "again with its changes made at its fork point. A single-room benchmark's "
                    "item (a dialogue, BENCH/runs/ITEM; a sweep cell's too) is made again "
                    "alone by the benchmark command it records, its judges too. --cache-only: "
                    "a call the "
                    "cache does not hold stops the rerun instead of reaching the model (and no "
                    "key is needed).",
        epilog="example: sandbox rerun runs/demo --cache-only --out runs/demo-again")
    p.add_argument("run", type=InputDir(), help="a run directory written by `sandbox run`, "
                                                "or a benchmark item's (BENCH/runs/ITEM)")
    p.add_argument("--out", type=output_dir,
                   help="run into this new directory instead of RUN [default: RUN]")
    p.add_argument("--cache-only", action="store_true",
                   help="replay from the cache only; a call not in it stops the rerun")
    p.add_argument("--from-start", action="store_true",
                   help="into RUN too, run from the start, not from RUN's last checkpoint")
    add_schedule_option(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    # absolute: the run is made again from the directory its command was typed in
    args.run = args.run.absolute()
    args.out = args.out.absolute() if args.out is not None else None
    try:
        header = read_header(args.run)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    made_by = benchmark_command(header)
    if made_by is not None:  # a benchmark item's dialogue, remade with its judges
        return _item(args, header, made_by)
    command = recorded_command(args.run)
    if command[:2] != ["sandbox", "run"]:
        raise UserError(f"{args.run}: recorded command {' '.join(command[:2])!r} is not a "
                        "`sandbox run`")
    chain = fork_chain(header, args.run)
    fresh = _prepare_out(args)

    recorded = header.config

    def attempt(start: Checkpoint | None) -> int:
        return run_recorded(command, args.out or args.run, cache_only=args.cache_only,
                            pauses=fork_pauses(chain),
                            recorded=recorded_forks(chain) if chain else None, start=start,
                            check=same_scenario(args.run, recorded),
                            directory=recorded.get("command_dir"))

    if args.out is not None or args.from_start:  # a run made again, to compare: all of it
        if args.out is None:
            return attempt(None)
        return _undone_if_refused(args, fresh, lambda: attempt(None))
    return from_checkpoint(args.run, math.inf, attempt)  # a resume: from the last checkpoint


def _item(args: argparse.Namespace, header: RunHeader, made_by: list[str]) -> int:
    """A benchmark item's dialogue and judges made again (into RUN, or all of it into --out
    NEW from a copy of RUN's cache), by the benchmark command that made it."""
    from .benchmark import rerun_item

    fresh = _prepare_out(args)
    return _undone_if_refused(args, fresh, lambda: rerun_item(
        args.run, header.config, made_by, travelled(made_by, header), args.out or args.run,
        args.cache_only))


def _prepare_out(args: argparse.Namespace) -> bool:
    """--out NEW claimed and started with RUN's cache (args.out set to None when NEW is RUN
    itself: the resume it would be without --out); whether NEW was new."""
    if args.out is not None and args.out.resolve() == args.run.resolve():
        args.out = None
    if args.out is None:
        return False
    # The rerun overwrites OUT: only a new or empty directory, or a run, may be one (never
    # the user's own files, nor a directory inside RUN); checked before the cache is copied.
    try:
        refuse_inputs(args.out, [args.run], "a rerun")
    except OutputTaken as exc:
        raise UserError(str(exc)) from None
    fresh = not args.out.exists()
    claim_run_directory(args.out)
    copy_cache(args.run, args.out)
    return fresh


def _undone_if_refused(args: argparse.Namespace, fresh: bool, attempt) -> int:
    """`attempt()`; when it is refused before anything ran (a file the command reads changed,
    an option this version lacks), the cache copied into --out goes too, and OUT if it was
    new."""
    if args.out is None:
        return attempt()
    try:
        return attempt()
    except UserError:
        if not (args.out / HEADER).exists():
            if fresh:
                shutil.rmtree(args.out, ignore_errors=True)
            else:
                (args.out / CACHE).unlink(missing_ok=True)
        raise
