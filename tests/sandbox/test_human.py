"""A person plays a resident (`sandbox run TEMPLATE --human NAME`): the person's points of
choice asked as forms (a script of answers, piped terminal input), the rest of the town on the
scripted model; the run scores, replays byte for byte, and goes on after the person left."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from agents.human import FORM_PURPOSES
from sandbox.app.cli import main
from sandbox.llm import LLMRequest, Message
from sandbox.llm.human import Field, Form, HumanBackend, PersonLeft, TerminalUI
from tasks.routing import HUMAN_PURPOSES

PERSON = "Maya Lindqvist"  # public_spring_tasting's performer
EPISODE = ["run", "public_spring_tasting", "--model", "scripted/town", "--embedder", "hashing",
           "--background", "2", "--same-day", "--start", "15:00", "--seed", "1", "--quiet"]
CAFE, LAWN = "town:Copper Kettle Cafe:dining room", "town:Harrow Park:lawn"
# Maya invites Julian in the park and hosts the tasting at the cafe: a whole short episode.
ANSWERS = [
    {"purpose": "plan.daily", "wake_up_hour": 6, "plan": "open the cafe; invite people to the "
     "spring tasting; host the spring tasting party at the cafe; close up; go to bed"},
    {"purpose": "plan.hourly", "hour_0": 6, "hour_1": 15, "hour_2": 17, "hour_3": 19,
     "hour_4": 21},
    {"purpose": "plan.steps", "place": CAFE, "what": "invite the guests in the cafe"},
    {"purpose": "plan.steps", "place": LAWN, "what": "invite people on the street"},
    {"purpose": "react.talk", "decision": "talk"},
    {"purpose": "converse.turn", "line": "Julian, I am hosting a spring tasting party at the "
     "cafe at 17:00 today. Will you come?"},
    {"purpose": "converse.turn", "line": "Wonderful, see you at five!", "end": "yes"},
    {"purpose": "plan.revise"},
    {"purpose": "plan.steps", "place": CAFE, "what": "host the spring tasting party"},
    {"purpose": "plan.steps", "place": CAFE, "what": "host the spring tasting party"},
    {"purpose": "plan.steps", "place": CAFE},
]
# The same answers typed into a terminal: a line per field, empty for the default.
TYPED = ["6", ANSWERS[0]["plan"], "6", "15", "17", "19", "21", "", "",
         CAFE, "invite the guests in the cafe", LAWN, "invite people on the street", "talk",
         ANSWERS[5]["line"], "", ANSWERS[6]["line"], "yes",
         "", "", "", "", "", "",  # plan.revise: four activities' hours, nothing added
         CAFE, "host the spring tasting party", CAFE, "host the spring tasting party", CAFE, ""]


def script(tmp_path: Path, answers: list[dict], name: str = "answers.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(answers))
    return f"script:{path}"


def played(out: Path, ui: str, *more: str) -> int:
    return main([*EPISODE, "--out", str(out), "--human", PERSON, "--human-ui", ui, *more])


def calls(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("human")
    out = tmp / "run"
    assert played(out, script(tmp, ANSWERS)) == 0
    return out


def test_a_person_plays_a_whole_task_and_the_run_is_scored(scripted_run):
    score = json.loads((scripted_run / "score.json").read_text())
    assert score["score"] == 1 and score["participants"] == ["Julian Reyes"]
    assert score["model"] == "human"  # a board's row: the person, not the town's model
    header = json.loads((scripted_run / "header.json").read_text())
    assert header["models"][PERSON] == "human"
    assert header["config"]["roles"]["human"] == PERSON
    said = [json.loads(line) for line in (scripted_run / "events.jsonl").read_text()
            .splitlines() if '"utterance"' in line]
    assert said[0]["agent"] == PERSON and said[0]["text"] == ANSWERS[5]["line"]


def test_the_person_answers_exactly_their_points_of_choice_logged_like_a_models(
        scripted_run):
    recorded = calls(scripted_run)
    theirs = [c for c in recorded if c["role"] == "human"]
    assert [c["tag"] for c in theirs] == [a["purpose"] for a in ANSWERS]
    assert {c["agent"] for c in theirs} == {PERSON} and {c["model"] for c in theirs} == {"human"}
    assert all(c["latency_s"] >= 0 and not c["faults"] for c in theirs)
    # Everything else of the resident (the task planner, memory, summaries) is the model's.
    model_tags = {c["tag"] for c in recorded if c["agent"] == PERSON and c["role"] != "human"}
    assert model_tags and not model_tags & HUMAN_PURPOSES
    assert {"tdp.general_plan", "converse.summary"} <= model_tags
    prompts = [json.loads(line) for line in (scripted_run / "prompts.jsonl").read_text()
               .splitlines()]
    talk = next(p for p in prompts if p["seq"] == theirs[4]["seq"])
    assert "Julian Reyes" in talk["messages"][0]["content"]  # the prompt the person was shown


def test_a_rerun_from_the_cache_is_byte_identical_and_asks_no_one(scripted_run, tmp_path):
    again = tmp_path / "again"
    assert main(["rerun", str(scripted_run), "--cache-only", "--out", str(again)]) == 0
    assert (again / "events.jsonl").read_bytes() == (scripted_run / "events.jsonl").read_bytes()
    assert all(c["cached"] for c in calls(again) if c["role"] == "human")


def test_piped_terminal_answers_play_the_same_episode(scripted_run, tmp_path, monkeypatch,
                                                      capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(TYPED) + "\n"))
    out = tmp_path / "typed"
    assert played(out, "terminal") == 0
    assert (out / "events.jsonl").read_bytes() == (scripted_run / "events.jsonl").read_bytes()
    shown = capsys.readouterr().out
    assert "You see Julian Reyes, taking a walk in the park. Talk now, or wait?" in shown
    assert "What do you say to Julian Reyes?" in shown


def test_a_person_who_leaves_leaves_a_run_the_same_command_goes_on_from(scripted_run,
                                                                         tmp_path, capsys):
    out = tmp_path / "left"
    assert played(out, script(tmp_path, ANSWERS[:5], "first.yaml")) == 1
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "interrupted" and "no answer left" in result["error"]
    assert "The same command goes on from there" in capsys.readouterr().err
    # The same command (its script now complete) goes on: the five answers from the cache.
    assert played(out, script(tmp_path, ANSWERS, "first.yaml")) == 0
    assert "their 5 answers so far come from its cache" in capsys.readouterr().out
    assert (out / "events.jsonl").read_bytes() == (scripted_run / "events.jsonl").read_bytes()
    assert sum(c["cached"] for c in calls(out) if c["role"] == "human") == 5


@pytest.mark.parametrize("argv, message", [
    (["--human", "Nobody Here"], "--human 'Nobody Here': no such resident in this episode; "
                                 "residents: Maya Lindqvist, "),
    (["--human", PERSON, "--human-ui", "script:/no/such.yaml"], "no such file"),
    (["--human", PERSON, "--human-ui", "phone"], "use one of window, terminal, script:FILE"),
    (["--human", PERSON, "--background-model", "scripted/default"],
     "--background-model and --performer-routing have no role here"),
    (["--human-ui", "terminal"], "give --human too"),
])
def test_bad_human_options_are_one_line_before_anything_runs(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    assert main([*EPISODE, "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (out / "events.jsonl").exists()


def test_a_suite_refuses_a_person(tmp_path, capsys):
    assert main(["stss", "--human", PERSON, "--model", "scripted/town",
                 "--out", str(tmp_path / "suite")]) == 2
    err = capsys.readouterr().err.strip()
    assert "one episode at a time" in err and "sandbox run TEMPLATE --human" in err
    assert not (tmp_path / "suite").exists()


def test_every_purpose_routed_to_a_person_has_a_form():
    assert HUMAN_PURPOSES == FORM_PURPOSES


class _Answers:
    """A UI that answers from a list and keeps what it was shown."""

    def __init__(self, *answers: dict):
        self.answers, self.shown = list(answers), []

    def ask(self, form: Form) -> dict:
        self.shown.append((form.title, form.error))
        if not self.answers:
            raise PersonLeft("no more")
        return self.answers.pop(0)


def test_an_answer_that_does_not_fit_is_asked_again_with_the_reason():
    from agents.human import decision_form
    from agents.planning import DailyPlan

    request = LLMRequest(messages=[Message(role="user", content="Plan. Answer as JSON: {}")],
                         tag="plan.daily", agent=PERSON, schema=DailyPlan,
                         fallback=DailyPlan(wake_up_hour=7, plan=["a", "b", "c"]))
    ui = _Answers({"plan": "only; two"}, {"plan": "open up; bake; close", "wake_up_hour": "5"})
    completion = HumanBackend(decision_form, ui).complete(request)
    assert json.loads(completion.text) == {"wake_up_hour": 5,
                                           "plan": ["open up", "bake", "close"]}
    assert "3 to 8 things" in ui.shown[1][1]  # the second time, the reason is shown
    form = decision_form(request)
    assert "JSON" not in "\n".join(form.context)  # the model's format is not the person's


def test_the_terminal_asks_a_choice_again_until_it_names_one():
    form = Form("react.talk", PERSON, "Talk?", [], [
        Field("decision", "talk or wait", "choice", ("talk", "wait"), "wait")],
        build=lambda v: v["decision"])
    out = io.StringIO()
    ui = TerminalUI(io.StringIO("maybe\n1\n"), out)
    assert form.answer(ui.ask(form)) == "talk"
    assert "'maybe' is not one of the choices" in out.getvalue()
    with pytest.raises(PersonLeft):
        TerminalUI(io.StringIO(""), io.StringIO()).ask(form)


def test_a_board_holds_a_persons_runs_as_their_own_row(scripted_run, tmp_path, capsys):
    suite = tmp_path / "suite"
    assert main(["stss", "--templates", "public_spring_tasting", "--arch", "ga_tdp",
                 "--seeds", "1", *EPISODE[EPISODE.index("--model"):EPISODE.index("--seed")],
                 "--out", str(suite)]) == 0
    capsys.readouterr()
    assert main(["stss-board", str(suite), str(scripted_run), "--json", str(tmp_path / "b.json")
                 ]) == 0
    rows = json.loads((tmp_path / "b.json").read_text())["rows"]
    assert [(r["model"], r["agent"], r["overall"]["n"]) for r in rows] == [
        ("human", "ga_tdp", 1), ("scripted/town", "ga_tdp", 1)]
    assert "| human | ga_tdp |" in capsys.readouterr().out


def test_a_person_plays_a_resident_of_a_town_day(tmp_path, capsys):
    town = ["run", "town_day", "--model", "scripted/town", "--embedder", "hashing", "--hours",
            "2", "--residents", "2", "--quiet", "--out", str(tmp_path / "day")]
    assert main([*town, "--human", "Nobody"]) == 2
    assert "residents: Agnes Whitfield, Amara Mensah" in capsys.readouterr().err
    plan = {"purpose": "plan.daily", "wake_up_hour": 7,
            "plan": "have breakfast; read the paper; walk in the park"}
    assert main([*town, "--human", "Agnes Whitfield", "--human-ui",
                 script(tmp_path, [plan])]) == 1  # left at the next decision, the schedule
    assert "Agnes Whitfield's plan.hourly" in capsys.readouterr().err
    made = [json.loads(line) for line in (tmp_path / "day" / "events.jsonl").read_text()
            .splitlines() if '"plan_made"' in line]
    assert any(m["agent"] == "Agnes Whitfield" and m["items"] == [
        "have breakfast", "read the paper", "walk in the park"] for m in made)


def test_without_a_display_the_window_is_refused_naming_the_terminal(tmp_path, capsys,
                                                                      monkeypatch):
    for name in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "run"
    assert main([*EPISODE, "--out", str(out), "--human", PERSON]) == 2
    err = capsys.readouterr().err.strip()
    assert "no display" in err and "use --human-ui terminal" in err
    assert len(err.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("size", ["a million answers", "twenty thousand short ones", "FIFO"])
def test_a_script_far_beyond_an_episode_is_refused_at_once(tmp_path, capsys, size):
    """A script of 10^6 answers was read whole and parsed in pure Python (minutes); a FIFO
    would block: each is one line before the episode starts."""
    import os
    import time

    path = tmp_path / "answers.yaml"
    if size == "FIFO":
        os.mkfifo(path)
    else:
        count = 10**6 if size.startswith("a million") else 20_000
        path.write_text("- {purpose: react.talk, decision: talk}\n" * count)
    out = tmp_path / "run"
    started = time.perf_counter()
    assert played(out, f"script:{path}") == 2
    assert time.perf_counter() - started < 20
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and ("more than" in line or "FIFO" in line)
    assert not (out / "events.jsonl").exists()


def test_a_one_answer_script_that_does_not_fit_names_answer_1(tmp_path, capsys):
    ui = script(tmp_path, [{"purpose": "plan.daily", "wake_up_hour": 6, "plan": "only; two"}])
    assert played(tmp_path / "run", ui) == 1
    err = capsys.readouterr().err
    assert "answers.yaml answer 1 does not fit" in err and "answer 2" not in err
    # The same script would stop there again: the person is told to fix it first.
    assert "Fix that answer; then the same command goes on" in err


def test_a_script_that_ran_out_is_told_the_same_command_goes_on(tmp_path, capsys):
    assert played(tmp_path / "run", script(tmp_path, ANSWERS[:1])) == 1
    err = capsys.readouterr().err
    assert "has no answer left" in err and "(it holds 1)" in err
    assert "The same command goes on" in err and "Fix that answer" not in err


def test_enter_on_every_form_at_a_1500_start_keeps_an_afternoon_that_can_happen(
        tmp_path, monkeypatch):
    """The terminal's defaults follow the episode's window: at a 15:00 start, Enter on every
    field keeps the person up from now until their bedtime. Before, the default schedule put
    them to bed three hours after a 05:00 wake-up, at 08:00: in bed all afternoon, the task
    lost."""
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 400))
    out = tmp_path / "enter"
    assert played(out, "terminal") == 0
    events = [json.loads(line) for line in (out / "events.jsonl").open()]
    [hourly, *_] = [e for e in events if e["kind"] == "plan_made" and e["level"] == "hourly"
                    and e["agent"] == PERSON]
    bed = next(item for item in hourly["items"] if "go to bed" in item)
    assert bed >= "21:00"  # her bedtime, not 08:00
    started = [e for e in events if e["kind"] == "action_started" and e["agent"] == PERSON]
    assert started and not any("sleep" in e["description"] or "bed" in e["description"]
                               for e in started if e["t"] < 4 * 3600)  # 15:00-19:00 awake


def test_the_readme_names_every_field_of_every_form_a_person_is_asked(tmp_path, monkeypatch):
    """A script's answers need each form's field names, once written only in this test's
    ANSWERS: the README's table names every purpose and every field the forms of a whole
    played episode asked for (hour_N as `hour_0`)."""
    import re

    from sandbox.llm.human import TerminalUI

    asked: dict[str, set[str]] = {}
    ask = TerminalUI.ask

    def recording(self, form):
        asked.setdefault(form.purpose, set()).update(
            re.sub(r"^hour_\d+$", "hour_0", f.name) for f in form.fields)
        return ask(self, form)

    monkeypatch.setattr(TerminalUI, "ask", recording)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(TYPED) + "\n"))
    assert played(tmp_path / "typed", "terminal") == 0
    assert set(asked) == FORM_PURPOSES  # the episode asked every form
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| purpose | fields |"):]
    table = table[:table.index("\n\n")] if "\n\n" in table else table
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        purposes, fields = line.split("|")[1:3]
        for purpose in re.findall(r"`([a-z.]+)`", purposes):
            rows[purpose] = set(re.findall(r"`([a-z_0-9]+)`", fields))
    missing = {p: sorted(names - rows.get(p, set())) for p, names in asked.items()
               if names - rows.get(p, set())}
    assert missing == {}
