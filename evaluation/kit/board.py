"""Boards: one table over several benchmark directories (Markdown and JSON), the calls and
tokens each role spent, and a PNG plot of each configuration's score with its interval.

A benchmark decides its columns and rows (its metrics); the kit renders them the same way for
every benchmark and reads what every run directory has (manifest, run directories, calls).
"""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sandbox.errors import one_line
from sandbox.files import FileFormatError, json_line, read_text
from sandbox.llm import CallRecord
from sandbox.log import read_calls
from sandbox.storage import write_atomic

RUNS = "runs"


@dataclass
class BoardReport:
    """What a benchmark's board says of its directories: the table (Markdown, with its notes),
    the same as JSON-able data, and the plot's points (a Plot)."""

    markdown: str
    data: dict[str, Any]
    plot: Any

    def __post_init__(self) -> None:
        # Labels, model and item ids are a user's text: each line shows its control characters
        # as escapes, so a label cannot repaint the terminal or break the Markdown.
        self.markdown = "\n".join(one_line(line) for line in self.markdown.split("\n"))


class BoardError(Exception):
    """A directory that is not a benchmark directory of the kind asked for."""


@dataclass
class BenchDir:
    """A benchmark directory as a board sees it: its manifest, the items its latest run
    selected (`selected`, whether their run directories are there or not) and those that are
    there (`runs`); others, left by an earlier selection, are counted, not read."""

    path: Path
    manifest: dict[str, Any]
    runs: list[Path]
    left_out: int
    selected: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.manifest.get("label") or self.path.name

    @property
    def judges(self) -> list[str]:
        """The judges the manifest records (every run owes a judgment of each), each as its
        judgments name it ("alias (model id)" for an alias; `judge_names`)."""
        names = self.manifest.get("judge_names") or {}
        return [names.get(j, j) for j in self.manifest.get("judges") or []]


def manifest_data(path: Path) -> Any:
    """A benchmark directory's manifest as data, read through the guarded reader (a FIFO or a
    huge file refused, FileFormatError naming it); a JSONDecodeError when it is not JSON (or
    holds NaN)."""
    return json_line(read_text(path))


def read_bench_dir(path: Path | str, manifest_name: str, command: str,
                   title: str = "") -> BenchDir:
    """BoardError when `path` has no readable manifest (`command` says how to make one)."""
    path = Path(path)
    manifest_path = path / manifest_name
    if not manifest_path.is_file():
        what = title or command.split()[1]
        raise BoardError(f"{path} is not a {what} benchmark directory (no {manifest_name}; "
                         f"write one with `{command} --out DIR`)")
    try:
        manifest = manifest_data(manifest_path)
    except json.JSONDecodeError as exc:
        raise BoardError(f"{manifest_path}: not JSON ({exc.msg})") from exc
    except FileFormatError as exc:
        raise BoardError(str(exc)) from None
    except ValueError as exc:  # NaN, an integer of 5,000 digits
        raise BoardError(f"{manifest_path}: not JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise BoardError(f"{manifest_path}: not a manifest (expected a JSON object)")
    expected = Path(manifest_name).stem  # a kit benchmark's manifest is <benchmark>.json
    if manifest.get("benchmark") != expected:
        found = manifest.get("benchmark")
        what = f"a {found} manifest" if isinstance(found, str) else \
            "no benchmark's manifest (a board's JSON?)"
        raise BoardError(f"{manifest_path}: {what}, not the {expected} manifest `{command} "
                         "--out` writes")
    runs_dir = path / RUNS
    found = sorted(p for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.is_dir() else []
    # A manifest written before selections were recorded selects what is there.
    selected = list(manifest.get("selected") or [p.name for p in found])
    wanted = set(selected)
    chosen = [p for p in found if p.name in wanted]
    return BenchDir(path=path, manifest=manifest, runs=chosen, left_out=len(found) - len(chosen),
                    selected=selected)


def check_judges(benches: Sequence[BenchDir], judges: Sequence[str] | None) -> None:
    """A --judge filter naming a judge no directory's manifest records is a BoardError listing
    the judges present (a typo would otherwise give a board of empty rows)."""
    if not judges:
        return
    present = list(dict.fromkeys(j for bench in benches for j in bench.judges))
    unknown = [j for j in judges if j not in present]
    if unknown:
        where = "this directory" if len(benches) == 1 else "these directories"
        raise BoardError(f"no judge {', '.join(unknown)} in {where}; judges present: "
                         f"{', '.join(present) or 'none'}")


def check_dirs(benches: Sequence[BenchDir]) -> None:
    """One directory given twice (by any path to it) is a BoardError: each of its items would
    be counted twice, and the interval narrowed as if the data were twice as large."""
    seen: dict[Path, Path] = {}
    for bench in benches:
        real = bench.path.resolve()
        if real in seen:
            same = "" if seen[real] == bench.path else f" (as {seen[real]})"
            raise BoardError(f"{bench.path} is given twice{same}: each directory once")
        seen[real] = bench.path


def told_apart(labels: Sequence[str], paths: Sequence[Path | str]) -> list[str]:
    """Each row's label, with its directory where two rows share one: "label (a/run)", the
    fewest trailing parts of the path that differ from the others' ("run" alone when the
    names differ)."""
    out = list(labels)
    for label in set(labels):
        rows = [i for i, other in enumerate(labels) if other == label]
        if len(rows) < 2:
            continue
        parts = [Path(paths[i]).resolve().parts for i in rows]
        for depth in range(1, max(len(p) for p in parts) + 1):
            tails = ["/".join(p[-depth:]) for p in parts]
            if len(set(tails)) == len(tails):
                break
        for i, tail in zip(rows, tails, strict=True):
            out[i] = f"{label} ({tail})"
    return out


class RoleUsage(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, record: CallRecord) -> None:
        self.calls += 1
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens


def role_usage(run_dirs: Sequence[Path], roles_by_tag: Mapping[str, str],
               uncounted: list[str] | None = None) -> dict[str, RoleUsage]:
    """Calls and tokens per role, from the runs' calls.jsonl (judges' calls included).
    A call whose tag names no role counts under its tag. What could not be read (a missing
    file, a line cut by a kill) is added to `uncounted`."""
    usage: dict[str, RoleUsage] = {role: RoleUsage() for role in dict.fromkeys(
        roles_by_tag.values())}
    for run_dir in run_dirs:
        records, problems = read_calls(run_dir)
        if uncounted is not None:
            uncounted += problems
        for record in records:
            role = roles_by_tag.get(record.tag, record.tag)
            usage.setdefault(role, RoleUsage()).add(record)
    return usage


@dataclass
class Column:
    """A board column: the row field it shows, its header, and how numbers are written."""

    key: str
    header: str
    digits: int | None = 2  # None: the value as text
    align: str = "--:"

    def cell(self, row: Mapping[str, Any]) -> str:
        value = row.get(self.key)
        if value is None:
            return "-"
        if self.digits is not None and isinstance(value, int | float) \
                and not isinstance(value, bool):
            return f"{value:.{self.digits}f}"
        # A label, a model id, an item id came from a user: a cell shows its control
        # characters as escapes, so the table keeps its rows and cannot repaint a terminal.
        return one_line(str(value)).replace("|", "\\|")


def markdown_table(columns: Sequence[Column], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A GitHub Markdown table, one line per row."""
    lines = ["| " + " | ".join(c.header for c in columns) + " |",
             "|" + "|".join(c.align for c in columns) + "|"]
    lines += ["| " + " | ".join(c.cell(row) for c in columns) + " |" for row in rows]
    return lines


def usage_table(usage_by_label: Mapping[str, Mapping[str, RoleUsage]],
                uncounted: Sequence[str] = ()) -> list[str]:
    """Calls and tokens of every role of every configuration; under it, the calls it could
    not count (role_usage), if any."""
    columns = [Column("label", "Configuration", None, "---"), Column("role", "Role", None, "---"),
               Column("calls", "Calls", None), Column("prompt_tokens", "Tokens in", None),
               Column("completion_tokens", "Tokens out", None)]
    rows = [{"label": label, "role": role, **use.model_dump()}
            for label, roles in usage_by_label.items() for role, use in roles.items()]
    return markdown_table(columns, rows) + uncounted_note(uncounted)


def uncounted_note(uncounted: Sequence[str], shown: int = 5) -> list[str]:
    """The lines under a usage table naming what it could not count (none: nothing)."""
    if not uncounted:
        return []
    more = f"; {len(uncounted) - shown} more in the board's JSON" if len(uncounted) > shown \
        else ""
    return ["", f"Not counted above ({len(uncounted)} unreadable): " +
            "; ".join(one_line(u) for u in uncounted[:shown]) + more]


@dataclass
class PlotPoint:
    label: str
    score: float | None
    ci: tuple[float, float] | None = None
    n: int | None = None  # the items the score is over, shown beside the label


@dataclass
class Plot:
    """What the PNG shows: every configuration's score and its interval, best on top."""

    title: str
    axis: str
    points: list[PlotPoint] = field(default_factory=list)
    # The score's whole range (e.g. 1-5), so one point or close points are not drawn on an
    # axis zoomed to a few hundredths; widened if a point or interval falls outside it.
    scale: tuple[float, float] | None = None
    # How the intervals were made, under the plot: a reader must not guess what the bars are.
    interval: str = "bars: 95% bootstrap interval over the items (percentile)"
    # What the board says beside its numbers ("nothing happened in 12 of 15 episodes"): a
    # plot travels without its board, so it carries them, printed under it.
    notes: list[str] = field(default_factory=list)
    # Models that are test doubles (scripted backends): the plot says so in its title.
    test_double: list[str] = field(default_factory=list)
    reference: float | None = None  # a value drawn as a dashed line (0 for a difference)


SCRIPTED = "scripted/"


def test_doubles(models) -> list[str]:
    """The models of `models` that are scripted test doubles, each once, in order: a board's
    numbers from them check the pipeline, not a model, and must say so."""
    return list(dict.fromkeys(m for m in models if isinstance(m, str)
                              and m.startswith(SCRIPTED)))


def x_range(plot: Plot) -> tuple[float, float]:
    """The x axis: the plot's scale, widened to every point and interval, with a small margin."""
    ends = [v for p in plot.points if p.score is not None for v in (p.score, *(p.ci or ()))]
    lo = min([plot.scale[0], *ends]) if plot.scale else min(ends, default=0.0)
    hi = max([plot.scale[1], *ends]) if plot.scale else max(ends, default=1.0)
    pad = (hi - lo) * 0.04 or 0.5
    return lo - pad, hi + pad


def _wrapped(paragraphs: list[str], width: int) -> str:
    return "\n".join(line for text in paragraphs
                     for line in textwrap.wrap(text, width, break_on_hyphens=False))


def _fit_width(fig, text, paragraphs: list[str]) -> None:
    """Wrap `paragraphs` into the `text` artist at the longest line length that keeps it
    inside the figure (a long model name is broken inside the word only when it must be)."""
    renderer = fig.canvas.get_renderer()
    limit = fig.bbox.width - 4
    width = max((len(p) for p in paragraphs), default=1)
    while True:
        text.set_text(_wrapped(paragraphs, width))
        box = text.get_window_extent(renderer)
        if (box.x0 >= 2 and box.x1 <= limit) or width <= 12:
            return
        width -= 2 if width < 40 else max(2, width // 10)


def plot_png(plot: Plot, path: Path | str) -> Path:
    """Draw `plot` as a PNG (matplotlib, headless). Configurations without a score are listed
    with no point."""
    import matplotlib

    matplotlib.use("Agg")  # no screen here, nor in CI
    import matplotlib.pyplot as plt

    points = list(reversed(plot.points))  # best on top
    notes = [n if len(n) <= 110 else n[:107] + "..." for n in plot.notes[:6]]
    if len(plot.notes) > 6:
        notes.append(f"... {len(plot.notes) - 6} more note(s) in the board")
    tall = 1.2 + 0.45 * max(len(points), 1) + 0.16 * len(notes)
    fig, ax = plt.subplots(figsize=(7.5, tall), dpi=120)
    for y, point in enumerate(points):
        if point.score is None:
            continue
        if point.ci is not None:
            ax.plot(point.ci, [y, y], color="#4a6fa5", linewidth=2.5, solid_capstyle="butt")
        ax.plot([point.score], [y], "o", color="#1d3557", markersize=7)
        ax.annotate(f"{point.score:.2f}", (point.score, y), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=8)
    ax.set_yticks(range(len(points)),
                  [p.label if p.n is None else f"{p.label} (n={p.n})" for p in points])
    ax.set_ylim(-0.7, len(points) - 0.3)
    if plot.scale is not None:
        ax.set_xlim(*x_range(plot))
    xlabel = ax.set_xlabel(plot.axis)
    if plot.reference is not None:
        ax.axvline(plot.reference, color="#888", linestyle="--", linewidth=1)
    title = [plot.title]
    if plot.test_double:
        title.append(f"TEST DOUBLE ({', '.join(plot.test_double)}): checks the pipeline, not "
                     "a model")
    heading = ax.set_title(_wrapped(title, 70), fontsize=11,
                           color="#a4161a" if plot.test_double else "black")
    ax.grid(axis="x", alpha=0.3)
    if plot.interval and any(p.ci is not None for p in points):
        fig.text(0.99, 0.01, plot.interval, ha="right", va="bottom", fontsize=7, color="#555")
    line = 0.16 / tall  # a note's height, as a fraction of the figure
    bottom = 0.04 + line * len(notes)
    for i, note in enumerate(notes):
        fig.text(0.01, bottom - (i + 1) * line, note, ha="left", va="bottom", fontsize=7,
                 color="#7a3b00")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    # Long model names: the title and the axis label are wrapped until they fit the figure
    # (centred over the axes, they ran past its edges and were cut), then laid out again.
    for _ in range(2):
        _fit_width(fig, heading, title)
        _fit_width(fig, xlabel, [plot.axis])
        fig.tight_layout(rect=(0, bottom, 1, 1))
    path = Path(path)
    image = io.BytesIO()
    fig.savefig(image, format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    write_atomic(path, image.getvalue())
    return path
