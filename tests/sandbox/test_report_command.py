"""`sandbox report DIR... --out SITE` as a user runs it: boards with the terminal's numbers,
every item listed (a damaged one marked), nothing private in the files (scripted models)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sandbox.app.cli import main
from tests.evaluation.test_pingpong_board_accounting import SETTINGS  # a small PingPong set
from tests.sandbox.test_sweep import experiment
from viewer.web import Scrubber

KEY = "sk-report-test-0123456789"


def board_dir(tmp_path: Path, out: Path, player: str = "scripted/pingpong") -> Path:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
    assert main(["pingpong", "--player", player, "--interrogator", "scripted/pingpong",
                 "--judge", "scripted/pingpong", "--settings", str(settings),
                 "--out", str(out)]) == 0
    return out


def site_data(site: Path) -> dict:
    text = (site / "data" / "site.js").read_text(encoding="utf-8")
    return json.loads(text[len("REPORT.site("):-3])


def item_data(site: Path, n: int) -> dict:
    text = (site / "data" / "items" / f"{n}.js").read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1:-3])


def first_row(markdown: str) -> list[str]:
    rows = [line for line in markdown.splitlines() if line.startswith("| 1 |")]
    return [c.strip() for c in rows[0].strip("|").split("|")]


@pytest.fixture
def board(tmp_path, capsys):
    out = board_dir(tmp_path, tmp_path / "board")
    capsys.readouterr()
    return out


def test_a_board_has_the_terminals_numbers_and_every_item(tmp_path, board, capsys):
    assert main(["pingpong-board", str(board), "--json", str(tmp_path / "board.json")]) == 0
    terminal = capsys.readouterr().out
    site = tmp_path / "site"
    assert main(["report", str(board), "--out", str(site)]) == 0
    said = capsys.readouterr().out
    assert "4 item(s) (0 damaged) in 1 section(s)" in said and "index.html" in said
    (section,) = site_data(site)["sections"]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", section["board"])
    row = first_row(terminal)
    assert cells[:len(row)] == [c.replace("&", "&amp;") for c in row]
    shown = json.loads((site / section["board_json"]).read_text())
    printed = json.loads((tmp_path / "board.json").read_text())
    assert shown == Scrubber({board: "board"}).data(printed)  # the same, its paths relative
    assert (site / section["plot"]).read_bytes()[:4] == b"\x89PNG"
    assert [r["id"] for r in section["items"]] == sorted(
        f"runs/{p.name}" for p in (board / "runs").iterdir())
    item = item_data(site, 0)
    judged = [t for c in item["conversations"] for t in c["turns"] if t["verdicts"]]
    assert judged and all(v["notes"] for t in judged for v in t["verdicts"])
    assert {r["role"] for r in item["calls"]["by_tag"]} == {"player", "interrogator", "judge"}


def test_a_damaged_run_is_shown_damaged_never_dropped(tmp_path, board, capsys):
    runs = sorted((board / "runs").iterdir())
    events = runs[0] / "events.jsonl"
    events.write_text(events.read_text()[:-40], encoding="utf-8")  # cut inside the last line
    (runs[1] / "header.json").unlink()
    site = tmp_path / "site"
    assert main(["report", str(board), "--out", str(site)]) == 0
    assert "4 item(s) (2 damaged)" in capsys.readouterr().out
    rows = {r["id"]: r for r in site_data(site)["sections"][0]["items"]}
    assert rows[f"runs/{runs[0].name}"]["damaged"] and rows[f"runs/{runs[1].name}"]["damaged"]
    assert rows[f"runs/{runs[1].name}"]["state"] == "missing"
    assert not rows[f"runs/{runs[2].name}"]["damaged"]


def test_no_key_and_no_path_of_this_machine_in_the_site(tmp_path, board, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    run = sorted((board / "runs").iterdir())[0]
    header = json.loads((run / "header.json").read_text())
    header["config"]["endpoint"] = f"http://user:{KEY}@example.test/v1"
    header["backend"] = {"api_key": "another-secret-value", "cwd": str(tmp_path)}
    (run / "header.json").write_text(json.dumps(header))
    site = tmp_path / "site"
    assert main(["report", str(board), "--out", str(site)]) == 0
    for path in site.rglob("*"):
        if path.is_file() and path.suffix != ".png":
            text = path.read_text(encoding="utf-8")
            assert KEY not in text and "another-secret-value" not in text, path
            assert str(tmp_path) not in text, path
    capsys.readouterr()
    kept = tmp_path / "kept"
    assert main(["report", str(board), "--out", str(kept), "--paths"]) == 0
    assert str(board) in (kept / "data" / "site.js").read_text()


def test_a_directory_of_boards_gets_one_board_over_them_linked_to_its_summary(tmp_path,
                                                                              capsys):
    sweep = tmp_path / "sweep"
    board_dir(tmp_path, sweep / "roleplay" / "a")
    board_dir(tmp_path, sweep / "roleplay" / "b", player="scripted/pingpong-verbose")
    (sweep / "summary.md").write_text("# Experiment\n\n| cell | state |\n|---|---|\n| a | ok |\n")
    shutil.copytree(sweep / "roleplay" / "a" / "runs", sweep / "loose")  # runs on their own
    capsys.readouterr()
    assert main(["report", str(sweep), "--out", str(tmp_path / "site")]) == 0
    sections = site_data(tmp_path / "site")["sections"]
    top = sections[0]
    assert top["where"] == "sweep" and "<h3>Experiment</h3>" in top["text"]
    boards = [s for s in sections if s["board"]]
    (both,) = boards
    assert len(re.findall(r"<tr><td[^>]*>\d</td>", both["board"])) == 2  # a row per cell
    # titled by benchmark and configuration; sweep/roleplay holds nothing of its own: no
    # section of its own, the board is the sweep's
    assert both["title"] == "PingPong role-play benchmark: a, b"
    assert len(both["items"]) == 8 and sections[both["parent"]]["where"] == "sweep"
    assert "directory" not in [s["title"] for s in sections]
    loose = next(s for s in sections if s["where"] == "sweep/loose")
    assert len(loose["items"]) == 4


def test_a_sweeps_summary_links_its_boards_with_the_sweeps_numbers(tmp_path, capsys):
    assert main(["sweep", experiment(tmp_path)]) == 0
    out = tmp_path / "exp"
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "site")]) == 0
    sections = site_data(tmp_path / "site")["sections"]
    assert "<h2>" in sections[0]["text"] or "<h3>" in sections[0]["text"]  # summary.md
    boards = {s["title"]: s for s in sections if s["board"]}
    assert len(boards) == 2
    for bench, section in zip(("pingpong", "refutebench"), sorted(boards), strict=True):
        printed = (out / bench / "board.md").read_text()
        first = next(line for line in printed.splitlines() if line.startswith("| 1 |")
                     or line.startswith("| plain |"))
        cells = [c.strip() for c in first.strip("|").split("|")]
        rows = [re.findall(r"<td[^>]*>(.*?)</td>", row)
                for row in re.findall(r"<tr>(.*?)</tr>", boards[section]["board"])]
        assert [c.replace("&", "&amp;") for c in cells] in rows, section
        assert sections[boards[section]["parent"]]["where"] == "exp"
        assert {r["id"].split("/")[0] for r in boards[section]["items"]} == \
            {"plain", "verbose"}
    # each comparison the sweep wrote: a section under the sweep, its files in the site
    compared = {s["source"]: s for s in sections if s["source"]}
    assert sorted(compared) == ["comparisons/pingpong/plain__vs__verbose.md",
                                "comparisons/refutebench/plain__vs__verbose.md"]
    for source, section in compared.items():
        assert section["parent"] == 0 and "B - A" in section["text"]
        assert [f["name"] for f in section["files"]] == ["plain__vs__verbose.md",
                                                         "plain__vs__verbose.json"]
        copied = tmp_path / "site" / section["files"][0]["href"]
        # as written, this machine's paths made relative
        assert copied.read_text() == (out / source).read_text().replace(f"{out}", "exp")


def test_a_site_inside_what_it_reports_is_refused(tmp_path, board, capsys):
    assert main(["report", str(board), "--out", str(board / "site")]) == 2
    assert "is inside" in capsys.readouterr().err
    assert not (board / "site").exists()


@pytest.mark.parametrize("holds", ["nothing", "files of the user's"])
def test_a_directory_with_nothing_to_report_is_refused(tmp_path, capsys, holds):
    """A site of 0 items once came out of an empty or mistyped directory, with exit 0."""
    given = tmp_path / "given"
    (given / "sub").mkdir(parents=True)
    if holds != "nothing":
        (given / "notes.txt").write_text("mine")
        (given / "sub" / "data.json").write_text("{}")
    site = tmp_path / "site"
    assert main(["report", str(given), "--out", str(site)]) == 2
    [err] = capsys.readouterr().err.strip().splitlines()
    assert "nothing to report" in err and not site.exists()
