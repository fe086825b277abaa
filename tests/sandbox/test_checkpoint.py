"""Checkpoints (sandbox/checkpoint.py) on scripted doubles: a town of three with a low
reflection threshold and a whisper, so that conversations, walks, reflections and a whisper
still to come all fall across checkpoints. Restoring any checkpoint and going on must give the
uninterrupted run's events byte for byte; a checkpoint that cannot be used is said and the run
replays from its start instead."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
import yaml

from sandbox import checkpoint
from sandbox.app.cli import main
from sandbox.llm.accounting import TIMING
from sandbox.runner import RESTORE
from tasks.scenarios.town_day import DEFAULT_CONFIG

MODEL = ["--model", "scripted/town", "--embedder", "hashing", "--quiet"]
NINE = 3 * 3600.0  # 09:00 in seconds since the day's start, 06:00
WHISPER = "Arthur Okonkwo@09:10: Kenji Mori mentioned the old mill again."


@pytest.fixture(scope="module")
def town(tmp_path_factory):
    """A recorded town day, 06:00 to 12:00, a checkpoint every 10 simulated minutes."""
    tmp = tmp_path_factory.mktemp("town")
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    config.update({"hours": 6, "params": {"reflector": {"threshold": 10}}})
    path = tmp / "day.yaml"
    path.write_text(yaml.safe_dump(config))
    run = tmp / "run"
    command = ["run", "town_day", "--config", str(path), *MODEL, "--whisper", WHISPER,
               "--checkpoint-every", "10m"]
    assert main([*command, "--out", str(run)]) == 0
    return run, command


def result(run) -> dict:
    return json.loads((run / "result.json").read_text())


def saved(path) -> dict:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


def restored_run(town, start, out):
    """The town's command run again into `out` from checkpoint `start`, cache-only."""
    run, command = town
    out.mkdir()
    shutil.copyfile(run / "llm_cache.jsonl", out / "llm_cache.jsonl")
    token = RESTORE.set(checkpoint.read(start))
    try:
        return main([*command, "--out", str(out), "--overwrite", "--cache-only"])
    finally:
        RESTORE.reset(token)


def test_a_run_writes_a_checkpoint_every_interval_and_says_so(town, capsys):
    run, _ = town
    found = checkpoint.listed(run)
    assert [t for t, _ in found] == [600.0 * n for n in range(1, 36)]
    assert result(run)["checkpoints"] == 35 and "checkpoints_skipped" not in result(run)
    assert main(["log", str(run)]) == 0
    assert "checkpoints: 35 written" in capsys.readouterr().out


def same_call(line: str) -> dict:
    """A calls.jsonl line as two runs of one episode share it: whether it came from the cache
    and how long it took aside."""
    return {k: v for k, v in json.loads(line).items() if k not in ("cached", *TIMING)}


def test_restoring_any_checkpoint_goes_on_byte_for_byte(town, tmp_path):
    """Every checkpoint of the day, whatever its processes were doing: the events of the run
    restored from it and gone on are the uninterrupted run's, every byte."""
    run, _ = town
    expected = (run / "events.jsonl").read_bytes()
    seen_kinds, whispers_to_come = set(), 0
    for t, path in checkpoint.listed(run):
        state = saved(path)
        seen_kinds |= {a["at"]["kind"] for a in state["scenario"]["agents"].values()}
        whispers_to_come += bool(state["scenario"]["whispers"])
        out = tmp_path / f"from-{int(t)}"
        assert restored_run(town, path, out) == 0
        assert (out / "events.jsonl").read_bytes() == expected, f"restored at {t}"
        assert result(out)["restored_from"] == t
        # the calls before the checkpoint are RUN's lines; those after it its cache's answers
        copied = state["calls"]
        ours = (out / "calls.jsonl").read_text().splitlines()
        theirs = (run / "calls.jsonl").read_text().splitlines()
        assert ours[:copied] == theirs[:copied]
        assert all(json.loads(line)["cached"] for line in ours[copied:])
        # and the same calls after it, each with the depth of its chain (the critical path
        # counts on as in the run never stopped: a conversation's speakers read as they were
        # when it began, the checkpoint keeps that), answered from the cache aside
        assert [same_call(line) for line in ours[copied:]] == \
            [same_call(line) for line in theirs[copied:]], f"restored at {t}"
    # the day's checkpoints caught agents resting, walking and in both sides of a
    # conversation, and a whisper waiting for its time
    assert seen_kinds == {"rest", "walk", "talk", "listen"}
    assert whispers_to_come > 0


def test_a_fork_from_a_checkpoint_is_the_fork_from_the_start(town, tmp_path, capsys):
    run, _ = town
    options = ["--at", "09:05", "--agent-arch", "Kenji Mori=ga_no_reflection"]
    quick, slow = tmp_path / "quick", tmp_path / "slow"
    assert main(["fork", str(run), *options, "--out", str(quick)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "checkpoint at 09:00" in said
    assert "copied from" in said and "checkpoint at 09:00, then replayed" in said
    assert main(["fork", str(run), *options, "--out", str(slow), "--from-start"]) == 0
    assert "'s checkpoint at" not in capsys.readouterr().out
    assert (quick / "events.jsonl").read_bytes() == (slow / "events.jsonl").read_bytes()
    # the fork keeps its parent's checkpoints up to where it started and writes its own after
    assert [t for t, _ in checkpoint.listed(quick)] == [t for t, _ in checkpoint.listed(slow)]


def test_a_fork_of_a_fork_restores_the_architecture_its_parent_swapped_in(town, tmp_path):
    run, _ = town
    first, quick, slow = tmp_path / "first", tmp_path / "quick", tmp_path / "slow"
    assert main(["fork", str(run), "--at", "07:00", "--agent-arch",
                 "Kenji Mori=ga_no_reflection", "--out", str(first)]) == 0
    state = saved(checkpoint.latest(first, NINE + 3600))
    assert state["scenario"]["agents"]["Kenji Mori"]["architecture"]["name"] == \
        "ga_no_reflection"
    assert main(["fork", str(first), "--at", "10:30", "--out", str(quick)]) == 0
    assert main(["fork", str(first), "--at", "10:30", "--out", str(slow), "--from-start"]) == 0
    assert (quick / "events.jsonl").read_bytes() == (slow / "events.jsonl").read_bytes() \
        == (first / "events.jsonl").read_bytes()


@pytest.mark.parametrize("at, damaged, then", [
    ("09:05", ["09:00"], "from {run}'s checkpoint at 08:50"),
    ("06:15", ["06:10"], "running {run}'s command from its start instead"),
])
def test_a_damaged_checkpoint_is_said_and_passed_over(town, tmp_path, capsys, at, damaged,
                                                      then):
    run, _ = town
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    for t, path in checkpoint.listed(copy):
        if f"{6 + int(t) // 3600:02d}:{int(t) % 3600 // 60:02d}" in damaged:
            path.write_bytes(path.read_bytes()[:100])  # cut short, as a full disk leaves it
    new = tmp_path / "fork"
    assert main(["fork", str(copy), "--at", at, "--out", str(new)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert f"the checkpoint at {damaged[0]} cannot be used" in said and "does not read" in said
    assert then.format(run=copy) in said
    assert (new / "events.jsonl").read_bytes() == (run / "events.jsonl").read_bytes()


def test_a_checkpoint_of_a_changed_run_is_refused(town, tmp_path):
    run, _ = town
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    lines = (copy / "events.jsonl").read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace('"t":', '"t": ')
    (copy / "events.jsonl").write_text("".join(lines))
    with pytest.raises(checkpoint.NotResumable, match="no longer begins as it did"):
        checkpoint.read(checkpoint.latest(copy, NINE))


def test_a_checkpoint_of_another_episode_is_refused(town, tmp_path):
    run, command = town
    out = tmp_path / "other"
    out.mkdir()
    shutil.copyfile(run / "llm_cache.jsonl", out / "llm_cache.jsonl")
    token = RESTORE.set(checkpoint.read(checkpoint.latest(run, NINE)))
    try:
        with pytest.raises(checkpoint.NotResumable, match="belongs to another episode"):
            main([*command, "--seed", "1", "--out", str(out), "--overwrite", "--cache-only"])
    finally:
        RESTORE.reset(token)


def test_a_rerun_in_place_resumes_from_the_last_checkpoint(town, tmp_path, capsys):
    run, _ = town
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    # killed at 10:05: its events cut there (a torn last line too), no result, and the
    # checkpoint of 10:00 half written; one of 11:00 left over that its events no longer
    # reach (a run directory pieced together by hand)
    events = (copy / "events.jsonl").read_text().splitlines(keepends=True)
    kept = [e for e in events if json.loads(e)["t"] <= NINE + 3600 + 300]
    (copy / "events.jsonl").write_text("".join(kept) + events[len(kept)][:20])
    (copy / "result.json").unlink()
    for t, path in checkpoint.listed(copy):
        if NINE + 3600 < t != NINE + 7200:
            path.unlink()
    half = checkpoint.latest(copy, NINE + 3600)
    half.write_bytes(half.read_bytes()[:50])
    assert main(["rerun", str(copy), "--cache-only"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "checkpoint at 11:00 cannot be used" in said and "has 0 whole lines" not in said
    assert "checkpoint at 10:00 cannot be used" in said and "does not read" in said
    assert "from " + str(copy) + "'s checkpoint at 09:50" in said
    assert (copy / "events.jsonl").read_bytes() == (run / "events.jsonl").read_bytes()
    assert result(copy)["restored_from"] == NINE + 3000
    assert [t for t, _ in checkpoint.listed(copy)] == [t for t, _ in checkpoint.listed(run)]


def test_no_checkpoints_when_turned_off_and_none_for_a_single_room(town, tmp_path):
    run, command = town
    off = tmp_path / "off"
    assert main([*command[:-2], "--checkpoint-every", "off", "--out", str(off)]) == 0
    assert not checkpoint.listed(off) and "checkpoints" not in result(off)
    room = tmp_path / "room"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet",
                 "--out", str(room)]) == 0
    assert not checkpoint.listed(room) and "checkpoints" not in result(room)


@pytest.mark.parametrize("every, message", [
    ("soon", "is not a duration"), ("30s", "from a minute"), ("90.5s", "whole seconds")])
def test_a_bad_interval_is_one_line_before_anything_runs(tmp_path, capsys, every, message):
    out = tmp_path / "run"
    assert main(["run", "town_day", *MODEL, "--checkpoint-every", every,
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_a_task_templates_episode_restores_byte_for_byte_too(tmp_path):
    """An STSS episode wraps the town (its task given at the start): every checkpoint of a
    short one restores and goes on as the uninterrupted run did."""
    command = ["run", "public_spring_tasting", *MODEL, "--background", "2", "--same-day",
               "--start", "15:00", "--checkpoint-every", "20m"]
    run = tmp_path / "run"
    assert main([*command, "--out", str(run)]) == 0
    found = checkpoint.listed(run)
    assert len(found) == 14  # 15:00 to 20:00, every 20 minutes
    for t, path in found:
        out = tmp_path / f"from-{int(t)}"
        assert restored_run((run, command), path, out) == 0
        assert (out / "events.jsonl").read_bytes() == (run / "events.jsonl").read_bytes()
        assert json.loads((out / "score.json").read_text())["score"] == \
            json.loads((run / "score.json").read_text())["score"]
        # the calls too, with their chains' depths (residents arriving in the room look at
        # conversations a checkpoint caught half-way)
        assert [same_call(line) for line in (out / "calls.jsonl").read_text().splitlines()] \
            == [same_call(line) for line in (run / "calls.jsonl").read_text().splitlines()]


def test_with_the_minilm_embedder_every_checkpoint_restores_byte_for_byte(tmp_path):
    """The default embedder's numbers restore too: a run restored from a checkpoint embeds its
    memories again (in a new process: the embedder's cache cleared here), and each text's
    vector must be the bits the run had, or relevances move in the 4th decimal."""
    from agents.embedding import minilm_embedder

    command = ["run", "inviting_jogging", "--model", "scripted/town", "--quiet", "--background",
               "3", "--same-day", "--start", "07:00", "--until", "13:00", "--seed", "3",
               "--checkpoint-every", "2h"]
    run = tmp_path / "run"
    assert main([*command, "--out", str(run)]) == 0
    events = (run / "events.jsonl").read_bytes()
    assert b'"memory_retrieved"' in events
    for t, path in checkpoint.listed(run):
        minilm_embedder().clear()  # as a new process would have it
        out = tmp_path / f"from-{int(t)}"
        assert restored_run((run, command), path, out) == 0
        assert (out / "events.jsonl").read_bytes() == events, f"restored at {t}"
