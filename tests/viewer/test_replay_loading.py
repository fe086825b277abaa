"""Opening run directories: valid events shown, bad lines reported, clear errors, live follow."""

from __future__ import annotations

import json

import pytest

from sandbox.events import Utterance
from tests.viewer.runs import MINI_TOWN, town_events, write_run
from viewer import Replay, ReplayError


def _lines(run_dir):
    return (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def test_corrupt_log_shows_valid_events_and_reports_the_first_bad_line(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events(), finished=False)
    lines = _lines(run_dir)
    lines[4] = '{"kind": "placed", "t": 0, "agent": "Cy Park", "tile": [5, 9], "pla\n'  # garbled
    lines[7] = "not json at all\n"
    lines[-1] = lines[-1][: len(lines[-1]) // 2]  # the writer was killed mid-line
    (run_dir / "events.jsonl").write_text("".join(lines), encoding="utf-8")

    replay = Replay(run_dir)

    assert [p.line for p in replay.problems] == [5, 8, len(lines)]
    assert replay.problems[0].reason.startswith("unreadable")
    assert replay.problems[-1].reason == "truncated last line"
    assert replay.problem_summary().startswith("events.jsonl line 5: unreadable")
    assert len(replay.timeline.events) == len(lines) - 3
    # events after a bad line are still there: the conversation's second turn
    said = replay.timeline.conversations["c1"].utterances
    assert [u.turn for u in said] == [0, 1]


def test_a_directory_without_a_header_is_named_as_such(tmp_path):
    (tmp_path / "events.jsonl").write_text("{}\n")
    with pytest.raises(ReplayError, match="not a run directory: no header.json"):
        Replay(tmp_path)


def test_a_missing_directory_is_reported(tmp_path):
    with pytest.raises(ReplayError, match="no such directory"):
        Replay(tmp_path / "nope")


def test_an_unknown_format_version_is_refused_with_the_version(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events())
    header = json.loads((run_dir / "header.json").read_text())
    header["format_version"] = 99
    (run_dir / "header.json").write_text(json.dumps(header))
    with pytest.raises(ReplayError, match="log format version 99; this sandbox reads version 1"):
        Replay(run_dir)


def test_a_walking_run_without_a_world_says_how_to_proceed(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events(), world=None)
    with pytest.raises(ReplayError, match="names no world.*--world FILE"):
        Replay(run_dir)
    # ... and with the map given by hand it opens
    assert Replay(run_dir, world_file=MINI_TOWN).is_town


def test_a_world_that_cannot_be_found_is_named(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events(), world="atlantis")
    with pytest.raises(ReplayError, match="world 'atlantis' was not found"):
        Replay(run_dir)


def test_a_run_without_walks_on_a_one_room_map_opens_as_a_conversation(tmp_path):
    events = [e for e in town_events() if e.kind not in ("placed", "move")]
    run_dir = write_run(tmp_path / "run", events, world="single_room")
    replay = Replay(run_dir)
    assert replay.view == "conversation"
    assert replay.world is not None and len(replay.world.arenas) == 1


def test_live_follow_picks_up_appended_events_and_waits_for_a_half_written_line(tmp_path):
    events = town_events()
    run_dir = write_run(tmp_path / "run", events[:7], finished=False)
    replay = Replay(run_dir, follow=True)
    assert len(replay.timeline.events) == 7 and replay.live_possible

    more = [e.model_dump_json() + "\n" for e in events[7:10]]
    with (run_dir / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(more[0] + more[1] + more[2][:20])  # the third line is still being written
    assert replay.refresh() == 2
    assert not replay.problems  # a line in progress is not a problem
    with (run_dir / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(more[2][20:])
    assert replay.refresh() == 1
    assert isinstance(replay.timeline.events.items[-1], Utterance)
    assert replay.end == events[9].t


def test_a_half_line_nobody_finishes_is_reported_as_truncated(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events()[:5], finished=False)
    with (run_dir / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "utter')
    replay = Replay(run_dir, follow=True)
    for _ in range(replay.source.STALE_READS):
        replay.refresh()
    assert [(p.line, p.reason) for p in replay.problems] == [(6, "truncated last line")]


def test_a_restarted_run_is_detected(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events(), finished=False)
    replay = Replay(run_dir, follow=True)
    (run_dir / "events.jsonl").write_text("")
    with pytest.raises(ReplayError, match="restarted"):
        replay.refresh()


def test_a_score_file_is_read_when_present(tmp_path):
    run_dir = write_run(tmp_path / "run", town_events())
    (run_dir / "score.json").write_text(json.dumps({"score": 0.5, "evidence": []}))
    assert Replay(run_dir).score == {"score": 0.5, "evidence": []}
