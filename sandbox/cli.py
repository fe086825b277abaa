"""The `sandbox` command: one entry point, one module per subcommand.

Each module in COMMANDS defines `register(subparsers)`, which adds its parser and sets
`func(args) -> int`. This file is the composition root: the only place that may import every
package. Errors a user can fix (bad file, bad model string, unreachable endpoint) print one line
and exit with code 2, before any episode starts.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from .errors import UserError, one_line

COMMANDS = [
    "sandbox.commands.run",
    "sandbox.commands.log",
    "sandbox.commands.world",
    "sandbox.commands.replay",
    "sandbox.commands.pingpong",
    "sandbox.commands.refutebench",
    "sandbox.commands.score",
    "sandbox.commands.stss",
    "sandbox.commands.stss_lang",
    "sandbox.commands.simulbench",
]


class ArgumentsError(Exception):
    """A command line argparse refused: said in one line by `main`, not 15 lines of usage."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog = prog


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument ends in one line naming it, the usage hint at its end
    (the subcommands' parsers are of this class too)."""

    def error(self, message: str):
        raise ArgumentsError(self.prog, message)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="sandbox",
        description="A multi-agent sandbox that measures the social intelligence of LLM agents "
                    "by what they do. Run an episode, read its log, score and replay it.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log retries and repairs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except ArgumentsError as exc:
        print(f"{exc.prog}: error: {one_line(str(exc))} (see: {exc.prog} --help)",
              file=sys.stderr)
        return 2
    # Progress of a long run must reach a log file or `| tee` as it happens, not at exit.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except UserError as exc:
        print(f"sandbox {args.command}: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine, not the input: a disk that filled, a mount gone
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"sandbox {args.command}: error: {one_line(where + (exc.strerror or str(exc)))}; "
              "what was written before is kept", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        hint = ""
        if args.command == "run":  # the run's cache holds every answer given so far
            hint = ("; run the same command with --overwrite to continue: answers already "
                    "given come from the run's cache, so it fast-forwards to where it stopped")
        elif args.command == "stss" or getattr(args, "resumable", False):  # the benchmarks
            hint = "; run the same command again to resume: finished episodes are skipped"
        print(f"sandbox {args.command}: interrupted; what was written is kept{hint}",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
