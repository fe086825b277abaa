"""A command line as a run records it (a run's `command`, a benchmark item's
`benchmark_command`, a suite episode's, a sweep cell's): credentials masked
(sandbox/redact.py) and every path it names made absolute, so that `sandbox rerun` and the
command a header shows work from any directory, not only from the one the user typed it in.

Which words are paths is what the parser declares: an option or positional of a path kind
(sandbox/app/options.py: a models, items, settings or config file, a prompts directory, --out,
a cache) and a person's `script:FILE`. Every other word is kept as typed, a reference to a
file among them (a task template, an architecture or a world given as a path): the run's
config and events name that file as typed, so a rerun given another spelling of it would not
be the same run (`sandbox fork` compares them byte for byte); the header records the directory
the command was typed in (`command_dir`), and a rerun or a fork runs from there
(`rerunning.run_recorded`).
"""

from __future__ import annotations

import argparse
import os

from sandbox.redact import redact_command

from .options import kind_of

PATH_KINDS = {"input-file", "input-dir", "input-path", "output-dir", "output-file",
              "cache-file"}


def recorded(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`argv` as every recorded command holds it: paths absolute, credentials masked."""
    return redact_command(absolute_paths(parser, argv))


def absolute_paths(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`argv` (a `sandbox` command line, already parsed without error) with each path word
    absolute, from the current directory."""
    out = list(argv)
    sub = _subcommand(parser, out)
    if sub is None:
        return out
    start = out.index(sub[0]) + 1
    actions = sub[1]._actions
    options = {s: a for a in actions for s in a.option_strings}
    positionals = [a for a in actions if not a.option_strings]
    loose: list[int] = []  # where the positional words are
    i = start
    while i < len(out):
        word = out[i]
        if word == "--":
            loose += range(i + 1, len(out))
            break
        flag, eq, value = word.partition("=")
        action = _option(options, flag) if word.startswith("-") else None
        if action is None:
            if not word.startswith("-"):
                loose.append(i)
            i += 1
            continue
        if action.nargs == 0:
            i += 1
        elif eq:
            out[i] = f"{flag}={_absolute(action, value)}"
            i += 1
        elif i + 1 < len(out):
            out[i + 1] = _absolute(action, out[i + 1])
            i += 2
        else:
            i += 1
    for action in positionals:  # in order, as argparse gives them their words
        if not loose:
            break
        many = action.nargs in ("+", "*", argparse.REMAINDER)
        taken, loose = (loose, []) if many else (loose[:1], loose[1:])
        for j in taken:
            out[j] = _absolute(action, out[j])
    return out


def _option(options: dict[str, argparse.Action], flag: str) -> argparse.Action | None:
    """The option `flag` names: itself, or the one it begins (argparse takes `--set` for
    `--settings` when no other option begins so)."""
    if flag in options:
        return options[flag]
    found = {a for s, a in options.items() if flag.startswith("--") and s.startswith(flag)}
    return found.pop() if len(found) == 1 else None


def _subcommand(parser: argparse.ArgumentParser, argv: list[str]):
    """(its name as typed, its parser) of the subcommand `argv` names, or None."""
    choices = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
                   None)
    if choices is None:
        return None
    word = next((w for w in argv if w in choices.choices), None)
    return None if word is None else (word, choices.choices[word])


def _absolute(action: argparse.Action, text: str) -> str:
    kind = kind_of(action)
    if kind in PATH_KINDS:
        return _path(text)
    if kind == "human-ui" and text.startswith("script:"):
        return "script:" + _path(text.removeprefix("script:"))
    return text


def _path(text: str) -> str:
    """The absolute path of `text` from the current directory (not resolved through
    symlinks: the path the user chose)."""
    return os.path.abspath(text) if text else text
