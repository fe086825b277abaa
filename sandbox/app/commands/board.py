"""`sandbox board DIR... [the board's options]`: the board of any benchmark's directories.

What a directory holds is said by the file that marks it: a single-room benchmark's manifest
(`NAME.json`), a plug-in's own output (its `board_commands`: marker file -> board command), an
interview set's `interview-set.json`. The board is that benchmark's own board command
(`NAME-board`, or the plug-in's), run on the same words: every option of
that board works here, parsed and checked by its parser, and `sandbox board DIR --help` shows
them. Directories of two benchmarks are refused in one line naming each: one board ranks
configurations of one benchmark.

The benchmark boards stay commands of their own (a sweep and scripts call them); `sandbox
--help` lists them once, under this one.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from sandbox.errors import UserError

INTERVIEW_SET = "interview-set.json"  # evaluation/interview/board.py's MANIFEST


@dataclass(frozen=True)
class BoardCommand:
    """The board of the directories a marker file marks: its command, and what they are."""

    marker: str
    command: str
    what: str


def board_commands() -> list[BoardCommand]:
    """Every board the installed benchmarks give, by the file that marks its directories."""
    from ..plugins import plugins

    found = [BoardCommand(INTERVIEW_SET, "interview-board", "an interview set")]
    for plugin in plugins():
        for bench in plugin.benchmarks:
            found.append(BoardCommand(bench.manifest_file, f"{bench.name}-board",
                                      f"a directory of the {bench.title}"))
        for marker, command in plugin.board_commands.items():
            what = plugin.outputs.get(marker) or f"a directory of the {plugin.title.split(':')[0]}"
            found.append(BoardCommand(marker, command, what))
    return found


def board_of(path: Path, kinds: list[BoardCommand]) -> BoardCommand | None:
    """The board of directory `path`, by the first marker file it holds; None: none."""
    return next((kind for kind in kinds if (path / kind.marker).is_file()), None)


class _Words(argparse.ArgumentParser):
    """The board's own parser takes every word as it comes (`words`): the benchmark's board
    parses them, once it is known which. Alone, or with --help first, it is argparse's."""

    def parse_known_args(self, args=None, namespace=None):
        args = list(args or [])
        if not args or args[0] in ("-h", "--help"):
            return super().parse_known_args(args, namespace)
        namespace, _ = super().parse_known_args([], namespace)
        namespace.words = args
        return namespace, []


def register(sub) -> None:
    kinds = board_commands()
    commands = ", ".join(dict.fromkeys(k.command for k in kinds))
    listed = "\n".join(f"  {k.marker:<26} {k.what}: sandbox {k.command}" for k in kinds)
    p = sub.add_parser(
        "board", help=f"the board of any benchmark's directories (the same as {commands})",
        description="Print the board of DIR... (no model is called): the board of the "
                    "benchmark whose directories they are, each known by the file that marks "
                    "it, with every option of that benchmark's board (sandbox board DIR "
                    "--help lists them). Directories of two benchmarks are refused.",
        epilog=f"directories and their boards:\n{listed}\n\nexample: sandbox board "
               "runs/pp-smol runs/pp-other --plot board.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="sandbox board DIR... [the options of that benchmark's board]")
    p.__class__ = type("BoardWords", (_Words, type(p)), {})
    p.set_defaults(func=main, words=[])


def main(args: argparse.Namespace) -> int:
    from sandbox.app.cli import build_parser, parse_command, repeated_input

    words = args.words
    dirs = [w for w in words if not w.startswith("-") and Path(w).is_dir()]
    if not dirs:
        named = f": {' '.join(words)} names none" if words else ""
        raise UserError(f"give the directories to board (a benchmark's --out){named}")
    kinds = board_commands()
    found = {d: board_of(Path(d), kinds) for d in dirs}
    lost = [d for d, kind in found.items() if kind is None]
    if lost:
        markers = ", ".join(dict.fromkeys(k.marker for k in kinds))
        inside = sorted(str(p.parent) for k in kinds for p in Path(lost[0]).glob(f"*/{k.marker}"))
        hint = f"; it holds some: board those ({', '.join(inside[:3])}" \
               f"{', ...' if len(inside) > 3 else ''})" if inside else ""
        raise UserError(f"{lost[0]} is no benchmark's directory (it holds none of {markers})"
                        f"{hint}" + (f"; nor is {', '.join(lost[1:])}" if lost[1:] else ""))
    boards = {kind.command for kind in found.values()}
    if len(boards) > 1:
        each = "; ".join(f"{d} is {kind.what}, boarded by sandbox {kind.command}"
                         for d, kind in found.items())
        raise UserError(f"directories of {len(boards)} benchmarks: {each}; a board ranks "
                        "configurations of one benchmark: board each benchmark's apart")
    argv = [found[dirs[0]].command, *words]
    parser = build_parser()
    again = parse_command(parser, argv)
    repeated = repeated_input(parser, argv, again)
    if repeated:
        raise UserError(f"{repeated[0]}: {repeated[1]}")
    return again.func(again)
