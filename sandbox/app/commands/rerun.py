"""`sandbox rerun RUN`: the run's own command again, from the command line its header records
(a one-episode `sandbox run`), its answers from the run's cache."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from sandbox import terminal
from sandbox.errors import UserError
from sandbox.log import CACHE, RunFormatError, read_header

from .common import output_dir

# Options of the recorded command that the rerun decides itself: where it writes and how it
# uses the cache. (flag, takes a value)
DECIDED = {"--out": True, "--overwrite": False, "--cache": True, "--cache-only": False,
           "--no-cache": False}


def register(sub) -> None:
    p = sub.add_parser(
        "rerun", help="run a run again with its own command (from its header)",
        description="Repeat the command that made RUN (recorded in its header by `sandbox "
                    "run`) with every option it was given, into RUN again (--overwrite: the "
                    "answers already given come from RUN's cache, so it replays, or goes on "
                    "where a budget or a kill stopped it) or into --out NEW (RUN's cache "
                    "copied there first; RUN is not changed). --cache-only: a call the cache "
                    "does not hold stops the rerun instead of reaching the model.",
        epilog="example: sandbox rerun runs/demo --cache-only --out runs/demo-again")
    p.add_argument("run", type=Path, help="a run directory written by `sandbox run`")
    p.add_argument("--out", type=output_dir,
                   help="run into this new directory instead of RUN [default: RUN]")
    p.add_argument("--cache-only", action="store_true",
                   help="replay from the cache only; a call not in it stops the rerun")
    p.set_defaults(func=main)


def recorded_command(run: Path) -> list[str]:
    """The recorded `sandbox ...` words, or a UserError saying why there are none."""
    try:
        header = read_header(run)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    command = header.config.get("command")
    if not command or not isinstance(command, list):
        raise UserError(f"{run}: its header records no command (a run of a suite or a "
                        "benchmark, or one written before commands were recorded); run the "
                        "suite's or benchmark's command again instead: it resumes")
    return [str(word) for word in command]


def without_decided(words: list[str]) -> list[str]:
    """The command's words without the options the rerun decides (`--out X`, `--out=X`, ...)."""
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        flag = word.split("=", 1)[0]
        if flag in DECIDED:
            skip = DECIDED[flag] and "=" not in word
            continue
        kept.append(word)
    return kept


def main(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from sandbox.app.cli import ArgumentsError, build_parser, did_you_mean

    command = recorded_command(args.run)
    if command[:2] != ["sandbox", "run"]:
        raise UserError(f"{args.run}: recorded command {' '.join(command[:2])!r} is not a "
                        "`sandbox run`")
    target = args.out or args.run
    if args.out is not None:
        if (args.out / "header.json").exists():
            raise UserError(f"--out {args.out}: holds a run already; give a new directory")
        args.out.mkdir(parents=True, exist_ok=True)
        if (args.run / CACHE).is_file():
            shutil.copyfile(args.run / CACHE, args.out / CACHE)
    argv = [*without_decided(command[1:]), "--out", str(target), "--overwrite",
            *(["--cache-only"] if args.cache_only else [])]
    shown = escape(f"sandbox {' '.join(argv)}")  # a recorded word may hold [brackets]
    terminal.console().print(f"[dim]{shown}[/]", highlight=False, soft_wrap=True)
    parser = build_parser()
    try:
        again = parser.parse_args(argv)
    except ArgumentsError as exc:  # an option this version no longer has
        prog, message = did_you_mean(parser, argv, exc)
        raise UserError(f"the recorded command does not parse now: {prog}: {message}") from exc
    again.argv = argv
    return again.func(again)
