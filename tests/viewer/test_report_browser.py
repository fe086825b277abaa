"""`sandbox report`'s site in a real browser (headless Chromium over its DevTools protocol):
the board renders with the terminal's numbers, an item's transcript opens with each judge's
verdict beside its turn, a damaged run is marked, the replay's slider moves an agent, and the
console shows no error. Screenshots of each kind of page land in the test's tmp directory.

Skipped when no Chromium is installed (`apt-get install chromium`; .ci/run installs it)."""

from __future__ import annotations

import base64
import json
import re

import pytest

from sandbox.app.cli import main
from tests.evaluation.test_pingpong_board_accounting import SETTINGS  # a small PingPong set
from tests.viewer.browser import Browser

BROWSER = Browser.find()
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium found (apt-get install chromium): the report's "
                            "pages are checked in a real browser")



@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A scripted town run and a scripted board with one run cut short, reported as one site;
    the board as the terminal printed it."""
    root = tmp_path_factory.mktemp("report")
    run = root / "town"
    assert main(["run", "public_spring_tasting", "--model", "scripted/town", "--embedder",
                 "hashing", "--background", "2", "--same-day", "--start", "15:00",
                 "--out", str(run)]) == 0
    settings = root / "settings.json"
    settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
    board = root / "board"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--settings",
                 str(settings), "--out", str(board)]) == 0
    cut = sorted((board / "runs").iterdir())[-1]
    events = cut / "events.jsonl"
    events.write_text(events.read_text()[:-30], encoding="utf-8")
    headless = sorted((board / "runs").iterdir())[0]
    (headless / "header.json").unlink()
    assert main(["pingpong-board", str(board), "--markdown", str(root / "board.md")]) == 0
    site = root / "site"
    assert main(["report", str(run), str(board), "--out", str(site)]) == 0
    shots = root / "screenshots"
    shots.mkdir()
    return {"site": site, "board_md": (root / "board.md").read_text(), "cut": cut.name,
            "headless": headless.name,
            "shots": shots, "root": root}


@pytest.fixture(scope="module")
def page(made):
    with Browser.launch(BROWSER, made["root"] / "profile") as browser:
        yield browser


def text_of(page, selector: str) -> list[str]:
    return page.eval(f"Array.from(document.querySelectorAll({json.dumps(selector)}))"
                     ".map(e => e.textContent.trim())")


def test_the_board_renders_with_the_terminals_numbers_and_loads_fast(page, made):
    page.open(made["site"] / "index.html")
    page.wait_for("document.querySelector('.boardmd table')")
    loaded = page.eval("performance.getEntriesByType('navigation')[0].loadEventEnd")
    assert loaded < 2000, f"the page took {loaded:.0f} ms to load"
    row = next(line for line in made["board_md"].splitlines() if line.startswith("| 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    shown = page.eval("Array.from(document.querySelector('.boardmd table tbody tr').cells)"
                      ".map(c => c.textContent)")
    assert shown == cells
    assert page.eval("document.querySelector('img.plot').naturalWidth") > 0
    page.screenshot(made["shots"] / "overview.png")
    assert page.errors == []


def test_a_damaged_run_is_marked_in_its_row_and_on_its_page(page, made):
    page.open(made["site"] / "index.html")
    damaged = text_of(page, "tr.damaged td:nth-child(2)")
    assert damaged == [f"runs/{made['headless']}", f"runs/{made['cut']}"]
    assert text_of(page, "tr.damaged .badge") == ["missing", "unfinished"]
    page.eval("document.querySelector('tr.damaged a').click()")
    page.wait_for("document.querySelector('ul.problems')")
    assert "no header.json" in " ".join(text_of(page, "ul.problems li"))
    page.screenshot(made["shots"] / "item-damaged.png", full_page=False)
    assert page.errors == []


def test_sorting_a_column_orders_its_rows(page, made):
    page.open(made["site"] / "index.html")
    column = "#section-1 table.items tbody td:nth-child(7)"
    page.eval("document.querySelectorAll('table.items')[1].querySelectorAll('th')[6].click()")
    calls = text_of(page, column)
    assert calls[-1] == "-"  # the run without a header has no count: last either way
    assert [int(c) for c in calls[:-1]] == sorted(int(c) for c in calls[:-1])
    page.eval("document.querySelectorAll('table.items')[1].querySelectorAll('th')[6].click()")
    calls = text_of(page, column)
    assert calls[-1] == "-"
    assert [int(c) for c in calls[:-1]] == sorted((int(c) for c in calls[:-1]), reverse=True)


def test_an_items_transcript_opens_with_verdicts_beside_the_turns(page, made):
    page.open(made["site"] / "index.html")
    first = "document.querySelector('#section-1 table.items tr:not(.damaged) a')"
    link = page.eval(f"{first}.textContent")
    page.eval(f"{first}.click()")
    page.wait_for(f"document.querySelector('h1') && document.querySelector('h1')"
                  f".textContent.startsWith({json.dumps(link)})")
    turns = page.wait_for("document.querySelectorAll('.turn').length")
    assert turns >= 4
    verdicts = text_of(page, ".turn .verdicts .verdict")
    assert verdicts and all("scripted/pingpong" in v and "in character" in v for v in verdicts)
    assert text_of(page, ".verdict .note")  # the judge's reasons
    assert text_of(page, "table.calls tbody tr")  # calls and tokens
    # the judge scores turns: its row says what its verdicts carry, not "-"
    scores = page.eval("document.querySelector('table.judgments tbody td:nth-child(4)')"
                       ".textContent")
    assert re.search(r"in_character \d+(\.\d+)? \(mean of \d+ turns?\)", scores), scores
    # the command that remakes the item: the benchmark's, and how
    assert text_of(page, "pre.command")[0].startswith("sandbox pingpong ")
    assert "sandbox rerun ITEM" in text_of(page, "p.how")[0]
    assert "settings.json" in " ".join(text_of(page, ".reads li"))  # not in the site
    page.screenshot(made["shots"] / "item-dialogue.png")
    assert page.errors == []


def test_the_replay_slider_moves_an_agent_and_shows_speech(page, made):
    page.open(made["site"] / "index.html")
    page.eval("location.hash = '#/item/0'")
    page.wait_for("document.querySelector('canvas.map')")
    page.wait_for("REPORT.replayState() && REPORT.replayState().spots")

    def at(t: float) -> dict:
        page.eval(f"(() => {{ const s = document.querySelector('.replay input[type=range]');"
                  f" s.value = {t}; s.dispatchEvent(new Event('input')); }})()")
        return page.eval("REPORT.replayState()")

    before, after = at(1800)["spots"], at(7200)["spots"]
    assert before.keys() == after.keys() and len(before) == 3
    assert any(before[name] != after[name] for name in before), "nobody moved"
    said = page.eval("document.querySelector('.said div').dataset.t")
    state = at(float(said) + 1)
    assert state["spoken"], "a line said a second ago is shown"
    assert text_of(page, ".said .now")
    # the clock and the lines said carry the day: "Sat 22 Apr 15:00:00", not "15:00:00"
    day = r"[A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2} \d\d:\d\d:\d\d"
    assert re.fullmatch(day, text_of(page, ".replay .clock")[0])
    assert all(re.match(day, line) for line in text_of(page, ".said div"))
    page.screenshot(made["shots"] / "item-town.png")
    canvas = page.eval("document.querySelector('canvas.map').toDataURL()")
    (made["shots"] / "replay.png").write_bytes(base64.b64decode(canvas.split(",")[1]))
    assert page.errors == []
    print(f"screenshots: {made['shots']}")


@pytest.fixture(scope="module")
def sweep_site(tmp_path_factory):
    """A sweep of two benchmarks by two models (tests/sandbox/test_sweep.py's), reported."""
    from tests.sandbox.test_sweep import experiment

    root = tmp_path_factory.mktemp("sweep")
    assert main(["sweep", experiment(root)]) == 0
    assert main(["report", str(root / "exp"), "--out", str(root / "site")]) == 0
    return root / "site"


def test_a_sweeps_report_opens_with_contents_titled_by_benchmark_and_configuration(
        page, sweep_site, made):
    page.open(sweep_site / "index.html")
    page.wait_for("document.querySelector('nav.toc')")
    entries = text_of(page, "nav.toc > ul > li > a")
    assert entries == ["Sweep of experiment.yaml"]
    below = text_of(page, "nav.toc li li > a")
    assert "PingPong role-play benchmark: plain, verbose" in below
    assert "Comparison on refutebench: plain vs verbose" in below
    assert "directory" not in " ".join(text_of(page, "h2"))
    # the summary names each comparison's file: a link to it, and its files are in the site
    link = "Array.from(document.querySelectorAll('.text td a'))" \
           ".find(a => a.textContent === 'comparisons/pingpong/plain__vs__verbose.md')"
    target = page.eval(f"{link}.getAttribute('href')").lstrip("#")
    section = page.eval(f"document.getElementById({json.dumps(target)}).textContent")
    assert "Comparison on pingpong: plain vs verbose" in section
    hrefs = page.eval(f"Array.from(document.querySelectorAll('#{target} .files a'))"
                      ".map(a => a.getAttribute('href'))")
    assert [h.rsplit("/", 1)[1] for h in hrefs] == ["plain__vs__verbose.md",
                                                     "plain__vs__verbose.json"]
    assert all((sweep_site / h).is_file() for h in hrefs)
    page.screenshot(made["shots"] / "sweep.png")
    assert page.errors == []
