"""`sandbox report DIR... --out SITE`: what the directories hold, as one static site that opens
from disk (viewer/web). Any output of this project: a run, a benchmark's directory (its board,
as its own board command prints it, and every item), a directory of such (a sweep: its summary,
one board per kind of directory over all of them, every item).

Which board a directory gets is the installed benchmarks' say (sandbox/app/plugins.py): a
single-room benchmark's by its manifest, another's by the marker files its plug-in boards.
"""

from __future__ import annotations

import argparse
import shlex
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.options import InputDir, Label
from sandbox.errors import UserError
from sandbox.lock import hold_output
from sandbox.log import CALLS, EVENTS, HEADER, RESULT
from sandbox.outdirs import add_marker, claim
from sandbox.storage import write_atomic

from .common import claim_directory, output_dir
from .sweep import COMPARISONS

SITE_FILE = "report.json"  # marks a report site: no other command writes into one
RUN_FILES = (HEADER, EVENTS, RESULT, CALLS)  # any of them makes a run directory, damaged or not
SUMMARY = "summary.md"  # a sweep's
DIRECTORY = "directory"  # the title of a directory's section until it is known what it holds


@dataclass
class BoardKind:
    """A kind of directory that has a board: its title and how to make the board of several."""

    key: str
    title: str
    build: Callable[[Sequence[Path]], object]  # -> evaluation.kit.BoardReport


def register(sub) -> None:
    add_marker(SITE_FILE, "a report site (sandbox report)")
    p = sub.add_parser(
        "report", help="a static web site of runs, suites, boards or a sweep, to share",
        description="Write one self-contained site for DIR... (runs, a suite, any benchmark's "
                    "directory, a sweep) into SITE: the boards as the terminal prints them with "
                    "their plots and accounting, every item's transcript with each judge's "
                    "verdict beside the turn, its score's rule and evidence, its calls and "
                    "tokens, a map replay of a town run, and the command that reproduces it. "
                    "Open SITE/index.html from disk: no server, no network. No API key is "
                    "written, nor an absolute path of this machine unless --paths.",
        epilog="example: sandbox report runs/demo runs/suite runs/board --out site")
    p.add_argument("dirs", nargs="+", type=InputDir(), metavar="DIR",
                   help="a run, a benchmark directory, a suite or a sweep")
    p.add_argument("--out", type=output_dir, required=True, metavar="SITE",
                   help="the site's directory (an earlier report there is replaced)")
    p.add_argument("--title", type=Label("a title", most=300),
                   help="the site's title [default: the directories' names]")
    p.add_argument("--paths", action="store_true",
                   help="keep absolute paths as they are (they name this machine's folders)")
    p.set_defaults(func=main)


def board_kinds() -> list[tuple[str, BoardKind]]:
    """(marker file, kind) of every board the installed benchmarks give."""
    from ..plugins import plugins
    from ..suites.benchmark import board_report

    kinds = []
    for plugin in plugins():
        for bench in plugin.benchmarks:
            kinds.append((bench.manifest_file, BoardKind(
                bench.name, bench.title,
                lambda dirs, bench=bench: board_report(bench, list(dirs)))))
        for marker, build in plugin.boards.items():
            kinds.append((marker, BoardKind(f"{plugin.name}:{marker}", plugin.title, build)))
    return kinds


def kind_of(path: Path, kinds: list[tuple[str, BoardKind]]) -> BoardKind | None:
    return next((kind for marker, kind in kinds if (path / marker).is_file()), None)


def run_dirs(path: Path) -> list[Path]:
    """Every run directory at or below `path`: any that holds one of a run's files, so a run
    with its header gone is still found (and shown damaged)."""
    found = {p.parent for name in RUN_FILES for p in path.rglob(name)}
    if any((path / name).is_file() for name in RUN_FILES):
        found.add(path)
    # A run's own subfolders (checkpoints, judgments) hold no run.
    return sorted(p for p in found if not any(q in p.parents for q in found))


def holds_results(path: Path, kinds) -> bool:
    """Whether `path` is, or holds somewhere below it, a run or a board's directory (or a
    sweep's summary): what `sections` makes a page of."""
    if any((path / f).is_file() for f in RUN_FILES) or kind_of(path, kinds) is not None \
            or (path / SUMMARY).is_file():
        return True
    return bool(run_dirs(path)) or any(kind_of(p, kinds) for p in path.rglob("*")
                                       if p.is_dir())


def sections(path: Path, kinds, parent: int | None, out: list, name: str, plots: Path) -> None:
    """Add what `path` holds to `out`: a run, a board with its items, or (a directory of such)
    its summary and one board per kind of directory below it."""
    from viewer.web import Section

    if any((path / f).is_file() for f in RUN_FILES):
        out.append(Section("run", name, items=[path], item_root=path.parent, parent=parent))
        return
    kind = kind_of(path, kinds)
    if kind is not None:
        out.append(board_section(kind, [path], name, parent, plots))
        return
    children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and p.name != COMPARISONS)
    here = len(out)
    summary = path / SUMMARY
    text = summary.read_text(encoding="utf-8") if summary.is_file() else ""
    out.append(Section(DIRECTORY, name, parent=parent, text=text))
    groups: dict[str, tuple[BoardKind, list[Path]]] = {}
    loose: list[Path] = []
    for child in children:
        child_kind = kind_of(child, kinds)
        if child_kind is not None:
            groups.setdefault(child_kind.key, (child_kind, []))[1].append(child)
        elif any((child / f).is_file() for f in RUN_FILES):
            loose.append(child)
        elif run_dirs(child) or any(kind_of(p, kinds) for p in child.rglob("*")
                                    if p.is_dir()):
            sections(child, kinds, here, out, f"{name}/{child.name}", plots)
    for kind, dirs in groups.values():
        out.append(board_section(kind, dirs, name, here, plots, root=path))
    out += comparison_sections(path / COMPARISONS, name, here)
    out[here].items = loose
    out[here].item_root = path
    out[here].title = directory_title(path, text, loose)
    if not loose and not out[here].text and len(out) == here + 1:
        out[here].notes.append(f"{name}: no run, board or benchmark directory found here")


def directory_title(path: Path, summary: str, loose: list[Path]) -> str:
    """A directory's section is named for what it is: a sweep by its summary's heading, runs
    found loose by that; one that only holds boards keeps the placeholder (`prune` drops it)."""
    heading = next((line[2:].strip() for line in summary.splitlines()
                    if line.startswith("# ")), "")
    if heading:
        return heading
    if summary or (path / "sweep.json").is_file():
        return "sweep"
    return "runs" if loose else DIRECTORY


def comparison_sections(folder: Path, name: str, parent: int) -> list:
    """A sweep's comparisons (`sandbox sweep`: COMPARISONS/BENCHMARK/A__vs__B.md and .json),
    one section each: the Markdown shown, both files in the site and linked."""
    from viewer.web import Section

    found = []
    for md in sorted(folder.glob("*/*.md")) if folder.is_dir() else []:
        a, _, b = md.stem.partition("__vs__")
        source = md.relative_to(folder.parent).as_posix()
        found.append(Section(f"Comparison on {md.parent.name}: {a} vs {b}" if b else md.stem,
                             f"{name}/{source}", parent=parent,
                             text=md.read_text(encoding="utf-8"), source=source,
                             files=[f for f in (md, md.with_suffix(".json")) if f.is_file()]))
    return found


def prune(found: list) -> list:
    """Leave out the sections of directories that hold nothing of their own (no summary, no
    loose run, no note): their boards go up to the section above, so a sweep's page is not a
    list of empty "directory" headings. Parents are renumbered."""
    keep: list[int] = []
    up: dict[int, int | None] = {}
    for i, section in enumerate(found):
        parent = section.parent
        while parent is not None and parent in up:
            parent = up[parent]
        section.parent = parent
        if section.title == DIRECTORY and not (section.items or section.text or section.notes):
            up[i] = parent
        else:
            keep.append(i)
    index = {old: new for new, old in enumerate(keep)}
    for i in keep:
        parent = found[i].parent
        found[i].parent = None if parent is None else index[parent]
    return [found[i] for i in keep]


def board_section(kind: BoardKind, dirs: list[Path], name: str, parent: int | None,
                  plots: Path, root: Path | None = None):
    """The board of `dirs` (as its board command prints it) and their items; a board that
    cannot be made is a note, and the items are still listed."""
    from evaluation.kit import BoardError, plot_png
    from viewer.web import Section

    # A board over several configurations (a sweep's cells) is titled by them too.
    title = kind.title if root is None else f"{kind.title}: {', '.join(d.name for d in dirs)}"
    section = Section(title, name, parent=parent, item_root=root or dirs[0],
                      items=[p for d in dirs for p in run_dirs(d)])
    try:
        report = kind.build(dirs)
    except (BoardError, UserError, OSError, ValueError) as exc:
        section.notes.append(f"no board: {exc}")
        return section
    section.board, section.board_data = report.markdown, report.data
    if report.plot is not None and report.plot.points:
        section.plot = plot_png(report.plot, plots / f"plot-{len(list(plots.iterdir()))}.png")
    return section


def main(args: argparse.Namespace) -> int:
    from sandbox import terminal
    from viewer.web import SITE_NAMES, Scrubber, write_site

    started = time.perf_counter()
    for path in args.dirs:
        if not path.is_dir():
            raise UserError(f"{path}: no such directory")
    out = args.out.resolve()
    for path in args.dirs:
        if out == path.resolve() or path.resolve() in out.parents:
            raise UserError(f"--out {args.out} is inside {path}, which it reports on; write "
                            "the site elsewhere")
    kinds = board_kinds()
    for path in args.dirs:  # a site of 0 items once came out of a mistyped directory, exit 0
        if not holds_results(path, kinds):
            raise UserError(f"{path}: no run, board or benchmark directory found in it; "
                            "nothing to report")
    claim(args.out, SITE_FILE, "a report site")
    claim_directory(args.out, SITE_NAMES, "a report site")
    hold_output(args.out)
    # A directory is called by its name, or with --paths where it is.
    names = [str(path.resolve()) if args.paths else path.resolve().name or str(path)
             for path in args.dirs]
    scrub = Scrubber({path: name for path, name in zip(args.dirs, names, strict=True)},
                     keep_paths=args.paths)
    argv = getattr(args, "argv", None) or []  # masked (app/cli.py)
    command = shlex.join(["sandbox", *argv]) if argv[:1] == ["report"] else ""
    found: list = []
    with tempfile.TemporaryDirectory(prefix="sandbox-report-") as plots:
        for path, name in zip(args.dirs, names, strict=True):
            sections(path, kinds, None, found, name, Path(plots))
        found = prune(found)
        stats = write_site(args.out, found, scrub, title=args.title or ", ".join(names),
                           command=command)
    write_atomic(args.out / SITE_FILE, '{"report": "sandbox report"}\n')
    terminal.console().print(
        f"{stats.items} item(s) ({stats.damaged} damaged) in {len(found)} section(s); "
        f"{stats.files} files, {stats.bytes / 1e6:.1f} MB ({stats.first_load_bytes / 1e3:.0f} "
        f"KB read on opening); {time.perf_counter() - started:.1f} s\n"
        f"open {args.out / 'index.html'}", highlight=False, soft_wrap=True)
    return 0
