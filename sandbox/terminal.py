"""The console every command prints through (credentials masked: sandbox/redact.py)."""
from __future__ import annotations

import os
import sys

from rich.console import Console

from .redact import RedactingStream

PIPED_WIDTH = 120


def console() -> Console:
    """A rich console for command output.

    Piped into a file (a long run's log), rich assumes 80 columns and cuts names in tables
    ('Okonk…'); there it gets 120 columns unless $COLUMNS says otherwise. A terminal keeps
    its own width."""
    out = RedactingStream(sys.stdout)
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console(file=out)
    return Console(file=out, width=PIPED_WIDTH)


def say_stopped(text: str) -> None:
    """Why a command stopped short (the person left, no call reached a model, a budget): one
    line on stderr, credentials masked, where a script or a user's `2>` finds it; stdout keeps
    the run's own output."""
    from .errors import one_line
    from .redact import redact

    print(one_line(redact(text)), file=sys.stderr, flush=True)


def _is_table_row(line: str) -> bool:
    return line.startswith("|") and line.rstrip().endswith("|")


def _cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in line.strip()[1:-1].split(" | ")]


def _table_blocks(lines: list[str]) -> list[tuple[bool, list[str]]]:
    """The text cut into (is a Markdown table, its lines) blocks, in order."""
    blocks: list[tuple[bool, list[str]]] = []
    i = 0
    while i < len(lines):
        starts = _is_table_row(lines[i]) and i + 1 < len(lines) and \
            set(lines[i + 1].strip()) <= set("|-: ") and "-" in lines[i + 1]
        if not starts:
            blocks.append((False, [lines[i]]))
            i += 1
            continue
        end = i + 2
        while end < len(lines) and _is_table_row(lines[end]):
            end += 1
        blocks.append((True, lines[i:end]))
        i = end
    return blocks


def print_markdown(text: str, con: Console | None = None) -> None:
    """Print a board's Markdown. Into a file or a pipe, as it is (the full table is what a log
    keeps); on a terminal narrower than a table, that table is laid out to fit, its cells
    wrapped, so no row runs off the screen (the Markdown file keeps the full one)."""
    from rich.table import Table
    from rich.text import Text

    con = con or console()
    if not con.is_terminal or all(len(line) <= con.width for line in text.splitlines()):
        con.file.write(text)
        con.file.flush()
        return
    for is_table, block in _table_blocks(text.splitlines()):
        if not is_table or max(map(len, block)) <= con.width:
            for line in block:
                con.print(Text(line), soft_wrap=True)
            continue
        table = Table(pad_edge=False)
        for header in _cells(block[0]):
            table.add_column(header, overflow="fold")
        for row in block[2:]:
            table.add_row(*map(Text, _cells(row)))
        con.print(table)
