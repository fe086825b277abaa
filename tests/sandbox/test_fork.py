"""Whispers (`--whisper`, a town file's `whispers:`) and forks (`sandbox fork RUN --at TIME`),
on scripted doubles: a small town of three with a low reflection threshold, so that reflection,
conversations and retrievals all happen within a few simulated hours."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml

from sandbox.app.cli import main
from tasks.scenarios.town_day import DEFAULT_CONFIG

MODEL = ["--model", "scripted/town", "--embedder", "hashing", "--quiet"]
WHISPER = "Arthur Okonkwo@07:30: I should ask Kenji Mori about his thesis on the old mill."


def town_file(tmp_path, **changes):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    config.update({"hours": 6, "params": {"reflector": {"threshold": 10}}}, **changes)
    path = tmp_path / "day.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def events(run) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def digest(run) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """A recorded town day: 06:00 to 12:00, reflections, three conversations."""
    tmp = tmp_path_factory.mktemp("day")
    run = tmp / "run"
    assert main(["run", "town_day", "--config", str(town_file(tmp)), *MODEL,
                 "--out", str(run)]) == 0
    kinds = {e["kind"] for e in events(run)}
    assert {"reflected", "utterance", "memory_retrieved"} <= kinds
    return run


# -- whispers ----------------------------------------------------------------------------------

def test_a_whisper_is_logged_remembered_as_a_thought_and_retrieved_later(tmp_path):
    run = tmp_path / "run"
    assert main(["run", "town_day", "--hours", "4", *MODEL, "--whisper", WHISPER,
                 "--out", str(run)]) == 0
    log = events(run)
    [whispered] = [e for e in log if e["kind"] == "whispered"]
    assert (whispered["agent"], whispered["t"]) == ("Arthur Okonkwo", 5400.0)
    assert whispered["text"] == WHISPER.split(": ", 1)[1]
    [memory] = [e for e in log if e["kind"] == "memory_added" and e["agent"] == "Arthur Okonkwo"
                and e["memory"] == whispered["memory"]]
    assert (memory["memory_kind"], memory["description"], memory["importance"], memory["t"]) \
        == ("thought", whispered["text"], 8, 5400.0)
    later = [e for e in log if e["kind"] == "memory_retrieved" and e["agent"] == "Arthur Okonkwo"
             and e["t"] > 5400]
    assert any(whispered["memory"] in e["ids"] for e in later)
    header = json.loads((run / "header.json").read_text())
    assert header["config"]["whispers"] == [{"agent": "Arthur Okonkwo", "at": "07:30",
                                             "text": whispered["text"]}]


def test_a_town_file_whispers_too_its_times_as_yaml_writes_them(tmp_path):
    # unquoted 07:30 is YAML 1.1's number 450 to some readers; a date is a datetime
    path = tmp_path / "day.yaml"
    path.write_text(DEFAULT_CONFIG.read_text() + "whispers:\n"
                    "  - {agent: Kenji Mori, at: 07:30, text: Grace needs volunteers.}\n"
                    "  - {agent: Grace Okonkwo, at: 2024-02-13 08:00, text: Ask Kenji.}\n")
    run = tmp_path / "run"
    assert main(["run", "town_day", "--config", str(path), "--hours", "3", *MODEL,
                 "--out", str(run)]) == 0
    assert [(e["agent"], e["t"]) for e in events(run) if e["kind"] == "whispered"] == [
        ("Kenji Mori", 5400.0), ("Grace Okonkwo", 7200.0)]


@pytest.mark.parametrize("whisper, message", [
    ("Artur Okonkwo@07:30: hello", "no resident 'Artur Okonkwo' in this episode; did you "
                                   "mean Arthur Okonkwo"),
    ("Arthur Okonkwo@23:30: hello", "23:30 is outside the episode (06:00 to 10:00"),
    ("Arthur Okonkwo at 07:30: hello", "write NAME@HH:MM: text"),
])
def test_a_bad_whisper_is_one_line_before_anything_runs(tmp_path, capsys, whisper, message):
    out = tmp_path / "run"
    assert main(["run", "town_day", "--hours", "4", *MODEL, "--whisper", whisper,
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_a_whisper_in_a_town_file_names_the_file_and_the_entry(tmp_path, capsys):
    path = town_file(tmp_path, whispers=[{"agent": "Kenji", "at": "07:00", "text": "hi"}])
    assert main(["run", "town_day", "--config", str(path), *MODEL,
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "whispers.0" in err and "did you mean Kenji Mori" in err


def test_a_whisper_is_for_a_town(tmp_path, capsys):
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--whisper",
                 WHISPER, "--out", str(tmp_path / "run")]) == 2
    assert "--whisper plants a memory in a town's resident" in capsys.readouterr().err


# -- forks -------------------------------------------------------------------------------------

def test_a_fork_that_changes_nothing_goes_on_byte_for_byte(day, tmp_path, capsys):
    before = digest(day)
    new = tmp_path / "fork"
    assert main(["fork", str(day), "--at", "08:30", "--out", str(new)]) == 0
    assert (new / "events.jsonl").read_bytes() == (day / "events.jsonl").read_bytes()
    assert digest(day) == before  # RUN is never changed
    out = capsys.readouterr().out
    assert "checkpoint at 08:00" in out and "fork point 08:30: " in out
    [fork] = json.loads((new / "header.json").read_text())["config"]["forks"]
    assert (fork["parent"], fork["at"], fork["time"]) == (str(day), 9000.0, "08:30")
    assert fork["architectures"] == {} and fork["command"][:2] == ["sandbox", "fork"]
    calls = (new / "calls.jsonl").read_text().splitlines()
    theirs = (day / "calls.jsonl").read_text().splitlines()
    copied = next(i for i, (a, b) in enumerate(zip(calls, theirs, strict=False)) if a != b)
    assert 0 < copied < len(calls)  # up to the checkpoint, RUN's calls as they were written
    # after it, the same cache answers the same calls
    assert all(json.loads(c)["cached"] for c in calls[copied:])
    assert main(["log", str(new)]) == 0
    assert f"forked from {day} at 08:30: nothing changed" in capsys.readouterr().out


def test_a_fork_with_another_architecture_is_the_same_before_and_differs_after(day, tmp_path,
                                                                                capsys):
    new = tmp_path / "fork"
    assert main(["fork", str(day), "--at", "08:00", "--agent-arch",
                 "Kenji Mori=ga_no_reflection", "--out", str(new)]) == 0
    at = 7200.0
    original, forked = events(day), events(new)
    changed = [e for e in forked if e["kind"] == "architecture_changed"]
    assert [(e["agent"], e["t"], e["previous"], e["architecture"]) for e in changed] == [
        ("Kenji Mori", at, "ga", "ga_no_reflection")]
    assert changed[0]["fresh"] == {"reflector": "a different module (GAReflector -> "
                                                "NoReflection)"}
    assert "memory" in changed[0]["carried"] and "planner" in changed[0]["carried"]
    # every event up to the fork point is RUN's; after it, the fork went its own way
    assert [e for e in forked if e["t"] <= at and e["kind"] != "architecture_changed"] == \
        [e for e in original if e["t"] <= at]
    assert [e for e in forked if e["t"] > at] != [e for e in original if e["t"] > at]

    def reflected(log):
        return [e for e in log if e["kind"] == "reflected" and e["agent"] == "Kenji Mori"
                and e["t"] > at]

    assert reflected(original) and not reflected(forked)
    [fork] = json.loads((new / "header.json").read_text())["config"]["forks"]
    assert fork["architectures"] == {"Kenji Mori": "ga_no_reflection"}
    assert fork["modules"]["Kenji Mori"]["memory"] == ""  # carried
    assert fork["modules"]["Kenji Mori"]["reflector"].startswith("a different module")
    out = capsys.readouterr().out
    assert "Kenji Mori -> ga_no_reflection: carried memory" in out and "fresh reflector" in out


@pytest.mark.parametrize("at", ["07:00:20", "10:00"])
def test_agents_swapped_for_their_own_architecture_go_on_unchanged(day, tmp_path, at):
    """get_state -> set_state carries every module's whole state: a fresh set of modules with
    the old ones' state, even mid-conversation (07:00:20), goes on exactly as the old ones."""
    talks = {e["t"] for e in events(day) if e["kind"] == "utterance"}
    assert {3615.0, 3630.0} <= talks, "the day's conversation moved"
    new = tmp_path / "fork"
    assert main(["fork", str(day), "--at", at, "--out", str(new),
                 "--agent-arch", "Kenji Mori=ga", "--agent-arch", "Arthur Okonkwo=ga",
                 "--agent-arch", "Grace Okonkwo=ga_tdp"]) == 0
    assert [e for e in events(new) if e["kind"] != "architecture_changed"] == events(day)


def test_a_fork_reruns_and_forks_again_with_its_changes(day, tmp_path):
    new, again, further = tmp_path / "fork", tmp_path / "again", tmp_path / "further"
    assert main(["fork", str(day), "--at", "08:00", "--agent-arch",
                 "Kenji Mori=ga_no_reflection", "--whisper", "Arthur Okonkwo@09:30: Kenji "
                 "seems tired.", "--out", str(new)]) == 0
    assert [e["t"] for e in events(new) if e["kind"] == "whispered"] == [12600.0]
    assert main(["rerun", str(new), "--cache-only", "--out", str(again)]) == 0
    assert (again / "events.jsonl").read_bytes() == (new / "events.jsonl").read_bytes()
    assert main(["fork", str(new), "--at", "10:00", "--out", str(further)]) == 0
    assert (further / "events.jsonl").read_bytes() == (new / "events.jsonl").read_bytes()
    chain = json.loads((further / "header.json").read_text())["config"]["forks"]
    assert [(f["parent"], f["time"]) for f in chain] == [(str(day), "08:00"),
                                                         (str(new), "10:00")]


@pytest.mark.parametrize("options, message", [
    (["--at", "08:00", "--agent-arch", "Kenji Moro=ga"],
     "no agent 'Kenji Moro' in {run}; did you mean Kenji Mori?"),
    (["--at", "05:00"], "--at 05:00 (2024-02-14 05:00): outside {run}, which runs from 06:00 "
                        "to 12:00"),
    (["--at", "12:00"], "outside {run}"),
    (["--at", "soon"], "'soon' is not a time"),
    (["--at", "09:00", "--whisper", "Kenji Mori@08:00: hi"], "before the fork point (09:00)"),
    (["--at", "08:00", "--arch", "ga", "--agent-arch", "Kenji Mori=ga"], "not allowed with"),
])
def test_a_fork_that_cannot_be_is_one_line_and_makes_nothing(day, tmp_path, capsys, options,
                                                             message):
    new = tmp_path / "fork"
    assert main(["fork", str(day), *options, "--out", str(new)]) == 2
    err = capsys.readouterr().err.strip()
    assert message.format(run=day) in err and len(err.splitlines()) == 1
    assert not new.exists()


def test_a_run_without_a_recorded_command_cannot_be_forked(day, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    for name in ("events.jsonl", "llm_cache.jsonl", "result.json"):
        (run / name).write_bytes((day / name).read_bytes())
    header = json.loads((day / "header.json").read_text())
    del header["config"]["command"]
    (run / "header.json").write_text(json.dumps(header))
    assert main(["fork", str(run), "--at", "08:00", "--out", str(tmp_path / "fork")]) == 2
    err = capsys.readouterr().err.strip()
    assert "its header records no command" in err and len(err.splitlines()) == 1


def test_a_run_whose_town_does_not_read_says_so_when_its_architecture_would_change(
        day, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    for path in day.iterdir():
        if path.is_file():
            (run / path.name).write_bytes(path.read_bytes())
    header = json.loads((day / "header.json").read_text())
    header["config"]["hours"] = "six"  # a hand-edited header
    (run / "header.json").write_text(json.dumps(header))
    assert main(["fork", str(run), "--at", "08:00", "--arch", "ga",
                 "--out", str(tmp_path / "fork")]) == 2
    err = capsys.readouterr().err.strip()
    assert "its header's town does not read: hours:" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "fork").exists()


def test_a_replay_that_is_not_the_run_is_refused_at_the_fork_point(day, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    for path in day.iterdir():
        if path.is_file():
            (run / path.name).write_bytes(path.read_bytes())
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace("Okonkwo House", "Okonkwo Hut")  # as if the code had changed
    (run / "events.jsonl").write_text("".join(lines))
    assert main(["fork", str(run), "--at", "08:00", "--out", str(tmp_path / "fork")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"the replay differs from {run} at event 4" in err and len(err.splitlines()) == 1


def test_a_single_room_forks_too_when_nothing_changes(tmp_path, capsys):
    run, new = tmp_path / "room", tmp_path / "fork"
    assert main(["run", "single_room", "--model", "scripted/default", "--turns", "6", "--quiet",
                 "--out", str(run)]) == 0
    assert main(["fork", str(run), "--at", "+30s", "--out", str(new)]) == 0
    assert (new / "events.jsonl").read_bytes() == (run / "events.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["fork", str(run), "--at", "+30s", "--out", str(tmp_path / "changed"),
                 "--agent-arch", "Ines Okafor=ga"]) == 2
    assert "a single_room run has no town residents" in capsys.readouterr().err


def test_fork_help_names_every_form_of_a_moment(capsys):
    with pytest.raises(SystemExit):
        main(["fork", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "'day N HH:MM' (day 1 is the day the run started)" in shown
