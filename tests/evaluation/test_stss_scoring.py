"""STSS scorers on golden logs written by hand: the score follows from the rules alone."""

from __future__ import annotations

import json

import pytest

from evaluation.stss import ScoreError, ScoringOptions, activities, score_run, write_score
from sandbox.log import load_run
from tasks.stss import TaskStep, TaskType
from tests.evaluation.stss_logs import Log, at, task

CAFE = "town:Copper Kettle Cafe:dining room"
PARK = "town:Harrow Park:lawn"
POND = "town:Harrow Park:pond garden"
PARTY = TaskStep(keyword="party", alternatives=["tasting"], location="town:Copper Kettle Cafe")


def party_log(tmp_path):
    t = task(TaskType.public_activity, [PARTY], background=["Ann", "Bob", "Cat", "Dan", "Eve"],
             expected=3, window=("17:00", "19:00"))
    return (Log(tmp_path / "party", t)
            .act("Perry", "16:00", "19:00", "hosting the party", CAFE)
            .act("Ann", "17:05", "18:00", "attending the party", CAFE)
            .act("Bob", "19:10", "20:00", "attending the party", CAFE)  # after the window
            .act("Cat", "17:30", "18:30", "going to the party", PARK)  # wrong place
            .act("Dan", "17:20", "17:40", "buying coffee", CAFE)  # passer-by
            .act("Eve", "16:50", "17:30", "tasting the spring menu", CAFE)  # early, stays
            .talk("Perry", "Ann", "12:00").talk("Perry", "Bob", "12:30")
            .talk("Perry", "Cat", "17:30")  # after the party began: not before the event
            .close())


def by(score, agent):
    return [e for e in score.evidence if e.agent == agent]


def test_public_activity_counts_keyword_time_and_place(tmp_path):
    score = score_run(load_run(party_log(tmp_path)))
    assert score.participants == ["Ann", "Eve"]
    assert score.score == pytest.approx(2 / 3)
    assert score.conversation_ratio == pytest.approx(2 / 3)
    assert score.talked_with == ["Ann", "Bob"]
    assert by(score, "Ann")[0].verdict == "counted"
    assert [(e.rule, e.verdict) for e in by(score, "Bob") if e.rule != "talked"] == \
        [("window", "rejected")]
    assert "after the window" in by(score, "Bob")[0].reason
    assert [(e.rule, e.verdict) for e in by(score, "Cat") if e.rule != "talked"] == \
        [("place", "rejected")]
    assert [(e.rule, e.verdict) for e in by(score, "Dan")] == [("keyword", "rejected")]
    assert "matches none of party, tasting" in by(score, "Dan")[0].reason


def test_the_papers_start_only_window_drops_an_early_arrival(tmp_path):
    score = score_run(load_run(party_log(tmp_path)), ScoringOptions(window="start"))
    assert score.participants == ["Ann"]
    assert score.score == pytest.approx(1 / 3)
    assert "before the window opened" in by(score, "Eve")[0].reason


def test_score_json_names_agent_event_and_rule_and_rescoring_is_stable(tmp_path):
    run_dir = party_log(tmp_path)
    first = write_score(run_dir)
    saved = json.loads((run_dir / "score.json").read_text())
    assert saved["score"] == first.score
    counted = next(e for e in saved["evidence"] if e["agent"] == "Ann")
    event = load_run(run_dir).events[counted["event"]]
    assert event.kind == "action_started" and event.agent == "Ann"
    assert write_score(run_dir).model_dump() == first.model_dump()


def test_online_activity_counts_anywhere_but_only_in_the_window(tmp_path):
    chess = TaskStep(keyword="chess")
    t = task(TaskType.online_activity, [chess], background=["Ann", "Bob", "Cat", "Dan"],
             expected=2, window=("20:00", "21:30"))
    run_dir = (Log(tmp_path / "online", t)
               .act("Ann", "20:10", "21:00", "playing online chess", "town:Voss House:bedroom")
               .act("Bob", "20:30", "21:00", "playing chess on the laptop", CAFE)
               .act("Cat", "21:40", "22:00", "playing chess", CAFE)
               .act("Dan", "20:00", "21:00", "reading a novel", CAFE)
               .close("22:00"))
    score = score_run(load_run(run_dir))
    assert score.participants == ["Ann", "Bob"] and score.score == 1.0
    assert by(score, "Cat")[0].rule == "window"
    assert by(score, "Dan")[0].reason.startswith("no action matched")


JOG = TaskStep(keyword="jog", alternatives=["running"], location="town:Harrow Park")


def test_inviting_companions_counts_who_is_there_with_the_performer(tmp_path):
    t = task(TaskType.inviting_companions, [JOG], expected=2,
             background=["Ann", "Bob", "Cat", "Dan", "Eli", "Fay"])
    run_dir = (Log(tmp_path / "jog", t)
               .act("Perry", "07:00", "08:00", "jogging round the park", PARK)
               .act("Ann", "07:10", "07:50", "jogging with Perry", PARK)
               .act("Bob", "07:20", "07:40", "running by the pond", POND)
               .act("Cat", "09:00", "09:30", "jogging", PARK)  # after the performer left
               .act("Dan", "07:15", "07:45", "jogging", "town:streets:Main Street")
               .close("12:00"))
    score = score_run(load_run(run_dir))
    assert score.participants == ["Ann", "Bob"] and score.score == 1.0
    assert "07:20" in score.rule
    assert next(e for e in by(score, "Cat") if e.rule == "together").verdict == "rejected"
    assert by(score, "Dan")[0].rule == "place"


def test_inviting_companions_scores_zero_when_the_performer_is_not_there(tmp_path):
    t = task(TaskType.inviting_companions, [JOG], expected=2, background=["Ann", "Bob"])
    run_dir = (Log(tmp_path / "absent", t)
               .act("Perry", "07:00", "08:00", "jogging", "town:streets:College Road")
               .act("Ann", "07:10", "07:50", "jogging", PARK)
               .act("Bob", "07:20", "07:40", "jogging", PARK)
               .close("12:00"))
    score = score_run(load_run(run_dir))
    assert score.score == 0.0 and score.participants == []
    assert any(e.rule == "performer" and e.verdict == "rejected" for e in score.evidence)


def test_inviting_companions_counts_only_the_event_day(tmp_path):
    # The templates say "at {place} at the same time on {date}": a jog the day before is not it.
    t = task(TaskType.inviting_companions, [JOG], expected=2, background=["Ann", "Bob", "Cat"])
    run_dir = (Log(tmp_path / "eve", t)
               .act("Perry", "2024-02-13 07:00", "2024-02-13 08:00", "jogging", PARK)
               .act("Ann", "2024-02-13 07:10", "2024-02-13 07:50", "jogging", PARK)
               .act("Bob", "2024-02-13 07:20", "2024-02-13 07:40", "jogging", PARK)
               .act("Perry", "10:00", "11:00", "jogging in the park", PARK)
               .act("Cat", "10:15", "10:45", "jogging", PARK)
               .close("12:00"))
    score = score_run(load_run(run_dir))
    assert score.participants == ["Cat"] and score.score == 0.5
    assert "2024-02-14 10:15" in score.rule
    for agent in ("Ann", "Bob"):
        assert [(e.rule, e.verdict) for e in by(score, agent)] == [("day", "rejected")]
        assert "not on the event day 2024-02-14" in by(score, agent)[0].reason


def test_inviting_companions_the_day_before_alone_scores_zero(tmp_path):
    t = task(TaskType.inviting_companions, [JOG], expected=1, background=["Ann"])
    run_dir = (Log(tmp_path / "eve_only", t)
               .act("Perry", "2024-02-13 07:00", "2024-02-13 08:00", "jogging", PARK)
               .act("Ann", "2024-02-13 07:10", "2024-02-13 07:50", "jogging", PARK)
               .close("12:00"))
    score = score_run(load_run(run_dir))
    assert score.score == 0.0 and score.participants == []
    assert any(e.rule == "performer" and e.verdict == "rejected" for e in score.evidence)


LESSON = TaskStep(keyword="piano lesson", alternatives=["lesson"])


@pytest.mark.parametrize("target_place, target_time, expected", [
    (CAFE, ("15:00", "16:00"), 1.0),  # same time, same arena
    ("town:Copper Kettle Cafe:kitchen", ("15:00", "16:00"), 0.5),  # same time, other arena
    (CAFE, ("16:30", "17:00"), 0.0),  # same place, never at the same time
])
def test_appointment_is_one_half_or_zero(tmp_path, target_place, target_time, expected):
    t = task(TaskType.appointment, [LESSON], expected=1, background=["Bea", "Ann"],
             target="Bea", performer="Lily")
    run_dir = (Log(tmp_path / "appo", t)
               .act("Lily", "15:00", "16:00", "having a piano lesson", CAFE)
               .act("Bea", *target_time, "giving Lily a piano lesson", target_place)
               .act("Ann", "15:00", "16:00", "taking a piano lesson", CAFE)  # not the target
               .talk("Lily", "Bea", "12:00")
               .close())
    score = score_run(load_run(run_dir))
    assert score.score == expected
    assert score.conversation_ratio == 1.0  # the target was talked with


def test_appointment_conversations_count_only_with_the_target(tmp_path):
    t = task(TaskType.appointment, [LESSON], expected=1, background=["Bea", "Ann"],
             target="Bea", performer="Lily")
    run_dir = Log(tmp_path / "appo", t).talk("Lily", "Ann", "12:00").close()
    score = score_run(load_run(run_dir))
    assert score.score == 0.0 and score.conversation_ratio == 0.0


BOOKS = [TaskStep(keyword="borrow", location="town:Ashford College Library"),
         TaskStep(keyword="deliver", location="town:Birchwood Dormitory")]
LIBRARY = "town:Ashford College Library:reading room"
DORM = "town:Birchwood Dormitory:common room"


@pytest.mark.parametrize("rows, expected", [
    ([("Ann", "10:00", "borrowing two books", LIBRARY),
      ("Ann", "11:00", "delivering the books", DORM)], 1.0),
    ([("Ann", "09:00", "delivering the books", DORM),  # out of order
      ("Ann", "10:00", "borrowing two books", LIBRARY)], 0.5),
    ([("Ann", "10:00", "borrowing two books", LIBRARY)], 0.5),  # one step only
    ([("Ann", "10:00", "borrowing two books", DORM)], 0.0),  # wrong place
    ([("Perry", "10:00", "borrowing two books", LIBRARY),  # the performer does not count
      ("Perry", "11:00", "delivering the books", DORM)], 0.0),
])
def test_asking_for_help_needs_others_to_do_the_steps_in_order(tmp_path, rows, expected):
    t = task(TaskType.asking_for_help, BOOKS, expected=1, background=["Ann", "Bob"])
    log = Log(tmp_path / "help", t)
    for who, start, what, where in rows:
        h, m = start.split(":")
        log.act(who, start, f"{int(h):02d}:30", what, where)
    score = score_run(load_run(log.close()))
    assert score.score == expected
    assert score.conversation_ratio is None  # help tasks have no conversation ratio
    if expected == 0.5 and len(rows) == 2:
        assert any("not in order" in e.reason for e in score.evidence)


def test_consecutive_identical_actions_merge_into_one_activity(tmp_path):
    t = task(TaskType.public_activity, [PARTY], background=["Ann"], expected=1,
             window=("17:00", "19:00"))
    run_dir = (Log(tmp_path / "merge", t)
               .act("Ann", "16:00", "16:30", "attending the party", CAFE)
               .act("Ann", "16:30", "17:00", "attending the party", CAFE)
               .act("Ann", "17:00", "17:30", "attending the party", CAFE)
               .act("Ann", "17:30", "18:00", "attending the party", PARK)
               .close())
    run = load_run(run_dir)
    acts = activities(run.events, at("21:00"))["Ann"]
    assert [(a.start, a.end, a.location) for a in acts] == [
        (at("16:00"), at("17:30"), CAFE), (at("17:30"), at("18:00"), PARK)]
    assert run.events[acts[0].event].t == at("16:00")


def test_a_run_without_a_task_is_not_scored(tmp_path):
    from sandbox.log import EpisodeLog, RunHeader

    EpisodeLog(tmp_path / "plain", RunHeader(scenario="single_room", seed=0,
                                             start_time="2024-01-01T00:00:00",
                                             models={})).close()
    with pytest.raises(ScoreError, match="not an STSS run"):
        score_run(load_run(tmp_path / "plain"))
