"""A report site: static files that open from disk, with no server and no network.

    SITE/index.html            the page (the app shell: every view is drawn by report.js)
    SITE/assets/               report.js, report.css, the boards' plots
    SITE/data/site.js          the boards, and one row per item (run) of every section
    SITE/data/items/N.js       one item's transcript, verdicts, score evidence, calls, replay
    SITE/data/files/N/         files a section links (a sweep's comparison, .md and .json)

Data files are scripts that hand their object to the page (`REPORT.site(...)`,
`REPORT.item(N, ...)`), because a page opened from a file may load scripts but not read
files; an item's file loads when the item is opened, so a page over a large suite loads the
rows only.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from statistics import fmean
from typing import Any

from sandbox.storage import write_atomic

from .markdown import markdown_html
from .rundata import run_data
from .scrub import Scrubber

ASSETS = ("report.js", "report.css")


@dataclass
class Section:
    """One reported directory (or a board found inside one): what the overview shows of it.

    Args:
        title: the heading (a benchmark's title, "run", "runs").
        where: the directory as the page names it (already scrubbed or to be scrubbed).
        items: its run directories, in the order listed.
        board: the board's Markdown, as the terminal prints it ("" for none).
        board_data: the board's JSON data (a link to it is offered).
        plot: a PNG of the board's plot, copied into the site.
        text: other Markdown to show (a sweep's summary).
        notes: why there is no board, or what the board command said.
        parent: the index of the section this one was found in (a sweep's board).
        files: text files shown by a link (copied into data/files/N/, scrubbed).
        source: the path its directory's summary names it by (linked to this section).
    """

    title: str
    where: str
    items: list[Path] = field(default_factory=list)
    board: str = ""
    board_data: dict[str, Any] | None = None
    plot: Path | None = None
    text: str = ""
    notes: list[str] = field(default_factory=list)
    parent: int | None = None
    item_root: Path | None = None  # item ids are paths relative to this
    # Files copied into the site as they are (scrubbed) and linked: a sweep's comparison.
    files: list[Path] = field(default_factory=list)
    source: str = ""  # the path its directory names it by (a summary's table): linked there


@dataclass
class SiteStats:
    """What was written: files and bytes, the shell's and data's share, items."""

    files: int = 0
    bytes: int = 0
    first_load_bytes: int = 0  # index.html + assets + data/site.js: what opening the page reads
    items: int = 0
    damaged: int = 0


def _script(call: str, *args: Any) -> str:
    # "</" escaped so a transcript line cannot end the script element it is loaded in.
    body = ", ".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in args)
    body = body.replace("</", "<\\/")
    return f"{call}({body});\n"


def _row(n: int, item_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """An item's row in the overview: its state and headline numbers."""
    score = next((s.get("score") for s in data.get("scores", []) if "score" in s), None)
    judged = [v for c in data.get("conversations", []) for t in c["turns"]
              for verdict in t["verdicts"] if verdict.get("usable")
              for v in verdict["scores"].values()]
    calls = (data.get("calls") or {}).get("total") or {}
    return {"n": n, "id": item_id, "state": data["state"], "damaged": data.get("damaged", False),
            "problems": len(data.get("problems", [])),
            "scenario": data.get("scenario", ""), "seed": data.get("seed"),
            "score": score, "judged": round(fmean(judged), 3) if judged else None,
            "turns": sum(len(c["turns"]) for c in data.get("conversations", [])),
            "calls": calls.get("calls"),
            "tokens": (calls.get("prompt_tokens", 0) + calls.get("completion_tokens", 0))
            if calls else None,
            "replay": data.get("replay") is not None}


# What a report site holds at its top (write_site, and the command's report.json): a directory
# of anything else is not a site, and a report is not written into it.
SITE_NAMES = re.compile(r"index\.html|assets|data|report\.json")


def write_site(out: Path, sections: list[Section], scrub: Scrubber, *, title: str,
               command: str = "") -> SiteStats:
    """Write the site for `sections` into `out` (created; files of an earlier report there are
    replaced). Every run is read once, its page data written as it is read."""
    out = Path(out)
    (out / "data" / "items").mkdir(parents=True, exist_ok=True)
    (out / "assets").mkdir(exist_ok=True)
    for old in (out / "data" / "items").glob("*.js"):  # an earlier report's items
        old.unlink()
    shutil.rmtree(out / "data" / "files", ignore_errors=True)  # and its copied files
    stats = SiteStats()
    for name in ASSETS:
        write_atomic(out / "assets" / name, files(__package__).joinpath("assets", name)
                     .read_text(encoding="utf-8"))
    site_sections = []
    n = 0
    for index, section in enumerate(sections):
        rows = []
        for run_dir in section.items:
            root = section.item_root or run_dir.parent
            item_id = run_dir.relative_to(root).as_posix() if run_dir != root else run_dir.name
            data = run_data(run_dir, scrub)
            data.update(id=item_id, section=index, where=scrub.text(str(run_dir)))
            write_atomic(out / "data" / "items" / f"{n}.js", _script("REPORT.item", n, data))
            rows.append(_row(n, item_id, data))
            stats.items += 1
            stats.damaged += int(data.get("damaged", False))
            n += 1
        plot = None
        if section.plot is not None and section.plot.is_file():
            plot = f"assets/plot-{index}.png"
            shutil.copyfile(section.plot, out / plot)
        board_json = None
        if section.board_data is not None:
            board_json = f"data/board-{index}.json"
            write_atomic(out / board_json, json.dumps(scrub.data(section.board_data), indent=1,
                                                      ensure_ascii=False) + "\n")
        copied = []
        for path in section.files:
            target = out / "data" / "files" / str(index) / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, scrub.text(path.read_text(encoding="utf-8")))
            copied.append({"name": path.name, "href": target.relative_to(out).as_posix()})
        site_sections.append({
            "title": scrub.text(section.title), "where": scrub.text(section.where),
            "board": markdown_html(scrub.text(section.board)) if section.board else "",
            "text": markdown_html(scrub.text(section.text)) if section.text else "",
            "plot": plot, "board_json": board_json, "parent": section.parent,
            "notes": [scrub.text(note) for note in section.notes], "items": rows,
            "files": copied, "source": scrub.text(section.source)})
    site = {"title": scrub.text(title), "command": scrub.text(command),
            "sections": site_sections, "items": n}
    write_atomic(out / "data" / "site.js", _script("REPORT.site", site))
    write_atomic(out / "index.html", files(__package__).joinpath("assets", "index.html")
                 .read_text(encoding="utf-8").replace("{{title}}", _html_text(site["title"])))
    for path in out.rglob("*"):
        if path.is_file():
            stats.files += 1
            stats.bytes += path.stat().st_size
    stats.first_load_bytes = sum((out / p).stat().st_size for p in
                                 ("index.html", "data/site.js",
                                  *(f"assets/{a}" for a in ASSETS)))
    return stats


def _html_text(text: str) -> str:
    import html

    return html.escape(text)
