"""The data a report page is built from (viewer/web): what a reader sees of a run, and what a
page meant to be shared never holds."""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.judgments import Judgment, TurnVerdict, save_judgment
from sandbox.redact import remember
from tests.viewer.runs import ADA_ARRIVAL, ADA_PATH, ADA_START, town_events, write_run
from viewer.web import Scrubber, Section, markdown_html, run_data, write_site


def test_a_town_run_gives_its_map_its_walks_and_what_was_said(town_run):
    data = run_data(town_run, Scrubber())
    assert not data["damaged"] and data["state"] == "finished"
    replay = data["replay"]
    assert replay["map"]["width"] == 30 and len(replay["map"]["rows"]) == 12
    ada = next(a for a in replay["agents"] if a["name"] == "Ada Stone")
    # placed in her kitchen, then her walk: every tile, 2 s each, from the time she set off
    placed, walk = ada["legs"]
    assert placed == [0, 0, 0, [3, 2]]
    t0, seconds_per_tile, last, path = walk
    assert (t0, seconds_per_tile, last) == (ADA_START, 2.0, len(ADA_PATH) - 1)
    assert list(zip(path[::2], path[1::2], strict=True)) == ADA_PATH
    assert t0 + last * seconds_per_tile == ADA_ARRIVAL
    assert [s[1:3] for s in replay["speech"]] == [
        ["Ada Stone", "Morning Ben! Are you coming to the party on Friday?"],
        ["Ben Ortiz", "Wouldn't miss it. I'll bring the coffee."]]
    (conversation,) = data["conversations"]
    assert conversation["participants"] == ["Ada Stone", "Ben Ortiz"]
    assert [t["speaker"] for t in conversation["turns"]] == ["Ada Stone", "Ben Ortiz"]
    assert conversation["turns"][0]["clock"] == "Mon 08:02:00"  # the 8:00 start + 120 s


def test_each_judges_verdict_sits_beside_the_turn_it_judged(tmp_path):
    run = write_run(tmp_path / "room", town_events()[7:11], world=None,
                    config={"conversation": "c1"})
    save_judgment(run, Judgment(judge="roleplay", model="scripted/j", status="ok", turns=[
        TurnVerdict(turn=1, scores={"fluency": 4.0}, flags={"is_refusal": False},
                    notes={"fluency": "reads well"})]))
    save_judgment(run, Judgment(judge="roleplay", model="scripted/k", status="fallback",
                                faults=["no JSON"]))
    data = run_data(run, Scrubber())
    first, second = data["conversations"][0]["turns"]
    assert first["verdicts"] == []
    (verdict,) = second["verdicts"]
    assert verdict["model"] == "scripted/j" and verdict["scores"] == {"fluency": 4.0}
    assert verdict["notes"] == {"fluency": "reads well"} and verdict["usable"]
    assert [j["status"] for j in data["judgments"]] == ["ok", "fallback"]
    assert data["judgments"][1]["faults"] == ["no JSON"]
    assert data["replay"] is None  # no walks, no map


def test_a_damaged_run_is_described_not_dropped(tmp_path):
    cut = write_run(tmp_path / "cut", town_events())
    with (cut / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "utterance", "t": 9')  # a line cut by a kill
    (cut / "result.json").unlink()
    data = run_data(cut, Scrubber())
    assert data["damaged"] and data["state"] == "unfinished"
    assert any("truncated last line" in p for p in data["problems"])
    assert data["conversations"]  # what could be read is still there

    headless = tmp_path / "headless"
    headless.mkdir()
    (headless / "events.jsonl").write_text("{}\n", encoding="utf-8")
    data = run_data(headless, Scrubber())
    assert data["damaged"] and data["state"] == "missing"
    assert "no header.json" in " ".join(data["problems"])


def test_paths_of_this_machine_and_keys_are_scrubbed(tmp_path):
    remember("sk-live-0123456789")
    scrub = Scrubber({tmp_path / "suite": "suite"})
    assert scrub.text(f"{tmp_path}/suite/ga/s0/events.jsonl") == "suite/ga/s0/events.jsonl"
    assert scrub.text("read /srv/data/private/items.json, and/or 1/2") == \
        "read …/items.json, and/or 1/2"
    assert scrub.text("http://me:pw12345678@host/v1 said sk-live-0123456789") == \
        "http://***@host/v1 said ***"
    assert scrub.data({"api_key": "abc", "token": "", "out": [str(tmp_path / "suite")]}) == \
        {"api_key": "***", "token": "", "out": ["suite"]}
    assert Scrubber(keep_paths=True).text("/srv/data/x.json") == "/srv/data/x.json"


def test_a_report_made_from_the_root_directory_still_shortens_paths(monkeypatch):
    monkeypatch.chdir("/")
    assert Scrubber().text("see /srv/data/x.json") == "see …/x.json"


def test_a_board_keeps_its_numbers_and_escapes_what_a_label_holds():
    html = markdown_html("| Model | Score |\n|---|--:|\n| <b>x</b> \\| y | 3.75 |\n\n- n: 8")
    assert '<table class="board sortable">' in html
    assert "<td class=\"\">&lt;b&gt;x&lt;/b&gt; | y</td>" in html
    assert '<td class="r">3.75</td>' in html and "<li>n: 8</li>" in html


def test_a_site_loads_each_item_from_its_own_file(tmp_path, town_run):
    out = tmp_path / "site"
    stats = write_site(out, [Section("runs", "town", items=[town_run])], Scrubber(),
                       title="town </script>")
    assert (out / "index.html").read_text().count("town &lt;/script&gt;") == 2
    site = (out / "data" / "site.js").read_text()
    assert site.startswith("REPORT.site(") and "<\\/script>" in site
    rows = json.loads(site[len("REPORT.site("):-3])["sections"][0]["items"]
    assert rows[0]["id"] == "town_run" and rows[0]["turns"] == 2 and rows[0]["replay"]
    item = (out / "data" / "items" / "0.js").read_text()
    assert item.startswith("REPORT.item(0,") and "Morning Ben!" in item
    assert "Morning Ben!" not in site  # transcripts load when an item is opened
    assert stats.items == 1 and stats.first_load_bytes < stats.bytes
    assert {p.name for p in (out / "assets").iterdir()} == {"report.js", "report.css"}


def test_nothing_absolute_is_left_in_a_site(tmp_path, town_run):
    out = tmp_path / "site"
    write_site(out, [Section("runs", str(town_run), items=[town_run])],
               Scrubber({town_run: "town_run"}), title="t", command=f"sandbox report {town_run}")
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".js", ".html", ".json"):
            text = path.read_text(encoding="utf-8")
            assert str(tmp_path) not in text and str(Path.home()) + "/" not in text, path


def test_a_forks_page_gives_the_forks_own_command_not_its_parents(tmp_path):
    from sandbox.app.rerunning import Fork, recorded_forks

    parent = ["sandbox", "run", "town_day", "--model", "scripted/town", "--out", "runs/day"]
    fork = Fork(parent="runs/day", at=3600, time="09:00",
                architectures={"Ada Stone": "ga_no_reflection"},
                command=["sandbox", "fork", "runs/day", "--at", "09:00", "--agent-arch",
                         "Ada Stone=ga_no_reflection", "--out", "runs/day-fork"])
    run = write_run(tmp_path / "day-fork", town_events(),
                    config={"command": parent, **recorded_forks([fork])})
    data = run_data(run, Scrubber())
    assert data["command"] == ("sandbox fork runs/day --at 09:00 --agent-arch "
                               "'Ada Stone=ga_no_reflection' --out runs/day-fork")
    assert data["command_how"].startswith("a fork of runs/day at 09:00")


def test_a_benchmark_items_page_gives_the_command_that_remakes_it(tmp_path):
    made_by = ["sandbox", "pingpong", "--player", "scripted/pingpong", "--settings",
               "settings.json", "--out", "runs/board"]
    run = write_run(tmp_path / "item", town_events()[7:11], world=None,
                    config={"benchmark_command": made_by})
    data = run_data(run, Scrubber())
    assert data["command"] == " ".join(made_by)
    assert "sandbox rerun ITEM" in data["command_how"]
    assert data["reads"] == [{"file": "settings.json", "as": "--settings"}]


def test_a_persons_script_of_answers_is_named_as_a_file_the_site_does_not_hold(tmp_path):
    command = ["sandbox", "run", "town_day", "--human", "Ada Stone", "--human-ui",
               f"script:{tmp_path}/answers.yaml", "--models=models.yaml", "--out", "runs/me"]
    run = write_run(tmp_path / "me", town_events(), config={"command": command})
    data = run_data(run, Scrubber({tmp_path: "here"}))
    assert data["reads"] == [
        {"file": "here/answers.yaml", "as": "--human-ui: a person's script of answers"},
        {"file": "models.yaml", "as": "--models"}]


def test_the_judgments_table_carries_the_scores_of_its_verdicts_on_the_turns(tmp_path):
    run = write_run(tmp_path / "room", town_events()[7:11], world=None)
    save_judgment(run, Judgment(judge="roleplay", model="scripted/j", status="ok", turns=[
        TurnVerdict(turn=0, scores={"fluency": 4.0}, flags={"is_refusal": False}),
        TurnVerdict(turn=1, scores={"fluency": 3.0, "in_character": 5.0},
                    flags={"is_refusal": True})]))
    (judgment,) = run_data(run, Scrubber())["judgments"]
    assert judgment["scores"] == {}  # this judge scores turns only
    assert judgment["turn_scores"] == {"fluency": {"mean": 3.5, "n": 2},
                                       "in_character": {"mean": 5.0, "n": 1}}
    assert judgment["turn_flags"] == {"is_refusal": {"raised": 1, "n": 2}}


def test_a_page_names_models_as_the_run_resolved_them_two_aliases_of_one_id_apart():
    """The calls of two aliases of one model id (two endpoints) are two models on the page,
    each "alias (model id)"; a bare model keeps its id."""
    from types import SimpleNamespace

    from viewer.web.rundata import _calls

    def call(model, endpoint):
        return SimpleNamespace(role="judge", model=model, endpoint=endpoint, tag="pingpong",
                               prompt_tokens=10, completion_tokens=2, cached=False, retries=0,
                               faults=[])

    data = _calls([call("openai/smol", "A"), call("openai/smol", "B"), call("openai/smol", "B"),
                   call("scripted/pingpong", None)])
    assert data["models"] == ["A (openai/smol)", "B (openai/smol)", "scripted/pingpong"]
    assert {(r["model"], r["calls"]) for r in data["by_tag"]} == {
        ("A (openai/smol)", 1), ("B (openai/smol)", 2), ("scripted/pingpong", 1)}
