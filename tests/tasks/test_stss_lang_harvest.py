"""Harvesting language-level scenarios from STSS run directories: a golden log written event by
event (what we say happened), then a scripted action-level run."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from sandbox.app.cli import main
from sandbox.events import ConversationEnded, ConversationStarted, EpisodeEnded, Utterance
from sandbox.events.agent import MemoryAdded, MemoryRetrieved, TaskPlanned
from sandbox.log import EpisodeLog, RunHeader, RunResult
from tasks.stss_lang import harvest, load_set, save_set

START = datetime(2024, 2, 14, 8, 0)
PERFORMER, TARGET, OTHER = "Maya Lindqvist", "Julian Reyes", "Priya Raman"


def golden(path, kind: str = "public_activity", seed: int = 0, talks=None):
    """A run where the performer talks with TARGET three times and with OTHER once; memories
    come before, during and after the talks."""
    task = {"template": "golden_task", "title": "t", "type": kind, "world": "town",
            "seed": seed, "performer": PERFORMER, "background": [TARGET, OTHER],
            "target": TARGET if kind == "appointment" else None,
            "goal": "Maya is holding a party at Copper Kettle Cafe at 17:00.",
            "criteria": "c", "steps": [{"keyword": "party", "alternatives": [],
                                        "location": "town:Copper Kettle Cafe"}],
            "date": "2024-02-14", "start": "2024-02-14T17:00:00",
            "end": "2024-02-14T19:00:00", "expected": 1}
    header = RunHeader(scenario="stss", seed=seed, start_time=START, models={}, world="town",
                       config={"stss_task": task, "town": {
                           "world": "town", "residents": [PERFORMER, TARGET, OTHER],
                           "architecture": "ga", "architectures": {PERFORMER: "ga_tdp"},
                           "tasks": {PERFORMER: "Maya is holding a party at Copper Kettle Cafe "
                                              "at 17:00 today. Success means..."},
                           "embedder": "hashing"}})
    log = EpisodeLog(path, header)
    ids = {PERFORMER: 0, TARGET: 0, OTHER: 0}

    def memory(who, t, text, created=None):
        log.emit(MemoryAdded(t=t, agent=who, memory=ids[who], memory_kind="event",
                             description=text, importance=3,
                             created=t if created is None else created))
        ids[who] += 1

    log.emit(TaskPlanned(t=0, agent=PERFORMER, task="party", general_plan=["a", "b", "c"],
                         conversation_reminder=["say when"]))
    memory(PERFORMER, 100, "Maya is baking")
    memory(TARGET, 100, "Julian is reading")
    log.emit(MemoryRetrieved(t=150, agent=PERFORMER, purpose="plan.steps", query="q", ids=[0],
                             scores=[1.0]))
    for n, (partner, t) in enumerate(talks or [(TARGET, 200), (OTHER, 400), (TARGET, 600),
                                               (TARGET, 800)]):
        c = f"c{n}"
        log.emit(ConversationStarted(t=t, conversation=c, participants=[PERFORMER, partner],
                                     location="town:Copper Kettle Cafe:dining room"))
        # scored during the first turn, created before the talk: it was there
        memory(partner, t, f"{partner} saw a cat before talk {n}", created=t - 10)
        log.emit(MemoryRetrieved(t=t, agent=PERFORMER, purpose="converse.turn", query=partner,
                                 ids=[0], scores=[1.0]))
        log.emit(Utterance(t=t, agent=PERFORMER, conversation=c, turn=0, to=[partner],
                           text=f"Come to my party at 17:00, {partner}! ({n})"))
        log.emit(Utterance(t=t + 15, agent=partner, conversation=c, turn=1, to=[PERFORMER],
                           text="Sure.", ends=True))
        log.emit(ConversationEnded(t=t + 30, conversation=c, turns=2, reason="ended_by_agent"))
        memory(PERFORMER, t + 30, f"talked with {partner} (talk {n})")
        memory(partner, t + 30, f"Maya invited me (talk {n})")
    log.emit(EpisodeEnded(t=1000))
    log.finish(RunResult(status="completed", wall_time_s=0, sim_time_s=1000, events=log.count,
                         llm_calls=0))
    return path


def test_every_performer_conversation_becomes_a_scenario_two_per_pair_at_most(tmp_path):
    found = harvest([golden(tmp_path / "run")]).scenarios
    # c0 (Julian), c1 (Priya), c2 (Julian); c3 (Julian a third time) is over the cap.
    assert [(s.partner.name, s.source.conversation) for s in found] == [
        (TARGET, "c0"), (OTHER, "c1"), (TARGET, "c2")]
    assert [s.id for s in found] == ["golden_task-s0__julian-reyes-1",
                                     "golden_task-s0__priya-raman-1",
                                     "golden_task-s0__julian-reyes-2"]
    first = found[0]
    assert first.initiator == PERFORMER and first.at == datetime(2024, 2, 14, 8, 3, 20)
    assert [line.text for line in first.original] == ["Come to my party at 17:00, Julian "
                                                      "Reyes! (0)", "Sure."]
    assert first.performer.tdp.conversation_reminder == ["say when"]
    assert first.partner.tdp is None
    assert first.performer.architecture == "ga_tdp" and first.partner.architecture == "ga"
    assert first.performer.persona["name"] == PERFORMER and first.task.type == "public_activity"
    assert first.performer.retrieved == ["Maya is baking"]


def test_memories_are_those_of_the_conversation_start_and_nothing_later(tmp_path):
    third = harvest([golden(tmp_path / "run")]).scenarios[2]  # c2, Julian, at t = 600
    performer = [m.description for m in third.performer.memories]
    partner = [m.description for m in third.partner.memories]
    assert performer == ["Maya is baking", "talked with Julian Reyes (talk 0)",
                         "talked with Priya Raman (talk 1)"]
    assert partner == ["Julian is reading", "Julian Reyes saw a cat before talk 0",
                       "Maya invited me (talk 0)", "Julian Reyes saw a cat before talk 2"]
    assert all(m.t <= 0 and m.last_accessed <= 0 for m in third.performer.memories)
    baking = third.performer.memories[0]
    # retrieved at 150, then for the talks at 200 and 400; not yet for this one
    assert baking.t == 100 - 600 and baking.last_accessed == 400 - 600


def test_appointments_keep_only_talks_with_the_target(tmp_path):
    found = harvest([golden(tmp_path / "run", kind="appointment")]).scenarios
    assert {s.partner.name for s in found} == {TARGET} and len(found) == 2


def test_runs_of_one_task_share_the_cap_and_other_seeds_do_not(tmp_path):
    one = golden(tmp_path / "ga", talks=[(TARGET, 200), (TARGET, 400)])
    two = golden(tmp_path / "ga_tdp", talks=[(TARGET, 200), (TARGET, 400)])
    other_seed = golden(tmp_path / "s1", seed=1, talks=[(TARGET, 200)])
    found = harvest([tmp_path]).scenarios  # a suite: every run under it
    assert [s.id for s in found] == ["golden_task-s0__julian-reyes-1",
                                     "golden_task-s0__julian-reyes-2",
                                     "golden_task-s1__julian-reyes-1"]
    assert {s.source.run for s in found} == {str(one), str(other_seed)}
    assert two.exists()


def test_a_set_reloads_without_the_run(tmp_path):
    path = save_set(harvest([golden(tmp_path / "run")]), tmp_path / "set.json")
    import shutil

    shutil.rmtree(tmp_path / "run")
    again = load_set(path)
    assert len(again.scenarios) == 3 and again.version == 1


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(version=0), "version"),
    (lambda d: d.update(format="something"), "format"),
    (lambda d: d["scenarios"][0]["performer"]["memories"][0].update(t=5), "scenarios.0"),
])
def test_a_corrupt_or_old_set_exits_2_in_one_line(tmp_path, capsys, change, field):
    path = save_set(harvest([golden(tmp_path / "run")]), tmp_path / "set.json")
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    assert main(["stss-lang", str(path), "--model", "scripted/town", "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert str(path) in err and field in err and len(err.splitlines()) == 1


def test_harvest_command_writes_a_set_and_refuses_a_non_stss_run(tmp_path, capsys):
    run = golden(tmp_path / "run")
    assert main(["stss-harvest", str(run), "--out", str(tmp_path / "set.json")]) == 0
    assert "3 scenarios of 1 tasks from 1 runs" in capsys.readouterr().out
    assert main(["run", "single_room", "--model", "scripted/default", "--out",
                 str(tmp_path / "room"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["stss-harvest", str(tmp_path / "room"), "--out", str(tmp_path / "x.json")]) == 2
    assert "not an STSS task episode" in capsys.readouterr().err


def test_a_suite_with_a_damaged_run_says_what_it_could_not_harvest(tmp_path, capsys):
    """A run whose header is cut short and a run whose log has a torn last line: the first is
    named as not read, the second's conversations still harvested and its torn line named, on
    the terminal and in the set's file; never a smaller set that looks whole."""
    golden(tmp_path / "suite" / "a", seed=0)
    torn = golden(tmp_path / "suite" / "b", seed=1)
    broken = golden(tmp_path / "suite" / "c", seed=2)
    header = broken / "header.json"
    header.write_text(header.read_text()[:40])
    with (torn / "events.jsonl").open("a") as log:
        log.write('{"t": 9999, "kind": "utter')
    out = tmp_path / "set.json"
    assert main(["stss-harvest", str(tmp_path / "suite"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "from 2 runs" in printed and "not read (2)" in printed
    problems = load_set(out).problems
    assert len(problems) == 2
    assert any(str(header) in p and "not valid JSON" in p for p in problems)
    assert any(p.startswith(f"{torn}/events.jsonl line ") and "truncated last line" in p
               for p in problems)
    assert {s.task.id for s in load_set(out).scenarios} == {"golden_task-s0", "golden_task-s1"}
