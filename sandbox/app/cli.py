"""The `sandbox` command: one entry point, one module per subcommand.

Each module in COMMANDS defines `register(subparsers)`, which adds its parser and sets
`func(args) -> int`; then every installed benchmark plug-in (sandbox/app/plugins.py) adds the
commands made from its declaration. This is the composition root: the only place that may
import every package. Errors a user can fix (bad file, bad model string, unreachable endpoint)
print one line and exit with code 2, before any episode starts. Around every command:
credentials masked in everything printed or logged (sandbox/redact.py), and the output locks
the command takes released when it ends (sandbox/lock.py).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from sandbox import lock
from sandbox.errors import UserError, one_line
from sandbox.files import FileFormatError
from sandbox.llm.base import LLMConfigError
from sandbox.redact import redact, redact_logs, remember_environment

from .recorded import recorded

COMMANDS = [
    "sandbox.app.commands.run",
    "sandbox.app.commands.log",
    "sandbox.app.commands.world",
    "sandbox.app.commands.replay",
    "sandbox.app.commands.listing",
    "sandbox.app.commands.sweep",
    "sandbox.app.commands.rerun",
    "sandbox.app.commands.interview",
    "sandbox.app.commands.fork",
    "sandbox.app.commands.report",
    "sandbox.app.commands.compare",
    "sandbox.app.commands.board",
    "sandbox.app.commands.export",
    "sandbox.app.commands.weights",
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
    parser.set_defaults(plugin_commands=add_plugin_commands(sub))
    return parser


def add_plugin_commands(sub) -> dict[str, list[str]]:
    """The commands of every installed benchmark: made from each single-room declaration, then
    the plug-in's own. A plug-in that did not load is said on stderr (its commands are
    missing; `sandbox list benchmarks` shows why), and two that claim one command name stop.
    Returns each plug-in's commands."""
    from .commands.benchmark import register_benchmark
    from .plugins import installed

    added: dict[str, list[str]] = {}
    for found in installed():
        if found.plugin is None:
            print(f"sandbox: warning: benchmark plug-in {found.entry} ({found.dist}) did not "
                  f"load, its commands are missing: {found.error}", file=sys.stderr)
            continue
        before = set(sub.choices)
        try:
            for bench in found.plugin.benchmarks:
                register_benchmark(sub, bench)
            if found.plugin.commands is not None:
                found.plugin.commands(sub)
        except argparse.ArgumentError as exc:
            raise SystemExit(f"sandbox: benchmark plug-in {found.entry} ({found.dist}): {exc}; "
                             "uninstall one of the two packages") from exc
        added[found.entry] = [name for name in sub.choices if name not in before]
    return added


def _subcommand(parser: argparse.ArgumentParser, argv: list[str]):
    """The subcommand's parser `argv` names, or None."""
    choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return next((choices.choices[word] for word in argv if word in choices.choices), None)


def did_you_mean(parser: argparse.ArgumentParser, argv: list[str], exc: ArgumentsError
                 ) -> tuple[str, str]:
    """(prog, message) for an argument error: an unknown option is said by the subcommand it
    was given to, with the nearest options it has; an unknown choice with the nearest ones."""
    import difflib
    import re

    message, prog = str(exc), exc.prog
    if message.startswith("unrecognized arguments: "):
        sub = _subcommand(parser, argv) or parser
        prog = sub.prog
        options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
        hints = []
        for word in message.removeprefix("unrecognized arguments: ").split():
            if word.startswith("-"):
                close = difflib.get_close_matches(word.split("=")[0], options, n=2)
                hints += [f"{word}: did you mean {' or '.join(close)}?"] if close else []
        message = "; ".join([message, *hints])
    elif found := re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message):
        given, known = found.group(1), re.findall(r"'([^']*)'", found.group(2))
        close = difflib.get_close_matches(given, known, n=3)
        if close:
            message += f"; did you mean {' or '.join(close)}?"
    return prog, message


def repeated_input(parser: argparse.ArgumentParser, argv: list[str], args
                   ) -> tuple[str, str] | None:
    """(prog, message) when one input directory or file is given twice to an argument that
    takes several (a board of DIR DIR would rank a configuration against itself)."""
    from .options import kind_of

    sub = _subcommand(parser, argv)
    for action in sub._actions if sub is not None else []:
        values = getattr(args, action.dest, None)
        if not isinstance(values, list) or kind_of(action) not in ("input-dir", "input-path",
                                                                  "input-file"):
            continue
        seen: dict[Path, object] = {}
        for value in values:
            key = Path(value).resolve()
            if key in seen:
                also = f" (as {seen[key]})" if str(seen[key]) != str(value) else ""
                what = "directory" if Path(value).is_dir() else "file"
                return sub.prog, (f"argument {argparse._get_action_name(action)}: {value} is "
                                  f"given twice{also}: each {what} once")
            seen[key] = value
    return None


def parse_command(parser: argparse.ArgumentParser, argv: list[str], context: str = ""):
    """`argv` parsed as the command line would, for a command that runs another (a sweep's
    cells, a rerun): the arguments, `argv` recorded in them; a bad one is a UserError in one
    line (`context` before it), with the nearest names."""
    try:
        args = parser.parse_args(argv)
    except ArgumentsError as exc:
        prog, message = did_you_mean(parser, argv, exc)
        raise UserError(f"{context}{prog}: {message}") from exc
    args.argv = recorded(parser, argv)  # as every run it makes records it
    return args


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except ArgumentsError as exc:
        prog, message = did_you_mean(parser, argv, exc)
        # A refused value is echoed: a URL with a bad scheme still holds its password.
        print(f"{prog}: error: {one_line(redact(message))} (see: {prog} --help)",
              file=sys.stderr)
        return 2
    repeated = repeated_input(parser, argv, args)
    if repeated:
        prog, message = repeated
        print(f"{prog}: error: {one_line(redact(message))}", file=sys.stderr)
        return 2
    # A one-episode command records it (sandbox rerun repeats it), a benchmark in each item's
    # header: credentials masked and paths made absolute here (a rerun from any directory
    # finds its files), the one place every recorded command comes from.
    args.argv = recorded(parser, argv)
    # Progress of a long run must reach a log file or `| tee` as it happens, not at exit.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR,
                        format="%(levelname)s %(name)s: %(message)s")
    remember_environment(getattr(args, "base_url", None))
    redact_logs()
    from sandbox.prompts import read_afresh  # jinja2 only when a command runs, not for --help

    read_afresh()  # the prompt files as they are now: read once in this command
    try:
        with lock.session(), _settings(args):
            check_environment()
            return args.func(args)
    except (UserError, FileFormatError, LLMConfigError) as exc:  # a bad input or setting
        print(f"sandbox {args.command}: error: {one_line(redact(str(exc)))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine, not the input: a disk that filled, a mount gone
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"sandbox {args.command}: error: {one_line(where + (exc.strerror or str(exc)))}; "
              "what was written before is kept", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        hint = ""
        if args.command == "run":  # the run's cache holds every answer given so far
            hint = ("; `sandbox rerun RUN` goes on from the run's last checkpoint (or run the "
                    "same command with --overwrite): answers already given come from the "
                    "run's cache, so it fast-forwards to where it stopped")
        elif getattr(args, "resumable", False):  # suites and benchmarks
            hint = "; run the same command again to resume: finished episodes are skipped"
        print(f"sandbox {args.command}: interrupted; what was written is kept{hint}",
              file=sys.stderr)
        return 130


@contextmanager
def _setting(name: str, value: str | None):
    """The environment variable `name` set to `value` while the command runs, when an option
    gave one: every check and run reads it, as do the local Ray workers the command starts."""
    if value is None:
        yield
        return
    was = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if was is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = was


def _settings(args):
    """--max-sim-hours ($SANDBOX_MAX_SIM_HOURS) and --schedule ($SANDBOX_SCHEDULE), for the
    command."""
    from contextlib import ExitStack

    stack = ExitStack()
    hours, schedule = getattr(args, "max_sim_hours", None), getattr(args, "schedule", None)
    if hours is not None:
        from sandbox.simtime import MAX_SIM_HOURS_ENV

        stack.enter_context(_setting(MAX_SIM_HOURS_ENV, repr(hours)))
    if schedule is not None:
        from sandbox.engine import SCHEDULE_ENV

        stack.enter_context(_setting(SCHEDULE_ENV, schedule))
    return stack


def check_environment() -> None:
    """Every SANDBOX_ variable (sandbox/app/environment.py), checked before anything runs: a
    UserError saying the first bad one (and how many more there are)."""
    from .environment import environment_problems

    problems = environment_problems()
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UserError(problems[0] + more)


if __name__ == "__main__":
    sys.exit(main())
