"""The time cursor: play, speed, scrub, step from event to event, follow a growing run."""

from __future__ import annotations

from tests.viewer.runs import ADA_ARRIVAL, ADA_START
from viewer import SPEEDS, Playback, Replay


def test_playing_advances_simulated_time_at_the_chosen_speed():
    pb = Playback(start=0, end=3600)
    pb.toggle()
    pb.tick(0.5)
    assert pb.t == 0.5
    for _ in range(6):
        pb.faster()
    assert pb.speed == 64
    pb.tick(1.0)
    assert pb.t == 64.5


def test_speed_runs_from_1x_to_beyond_64x():
    pb = Playback()
    for _ in range(30):
        pb.slower()
    assert pb.speed == 1
    for _ in range(30):
        pb.faster()
    assert pb.speed == SPEEDS[-1] >= 64


def test_a_finished_run_stops_at_its_end_and_plays_again_from_the_start():
    pb = Playback(start=0, end=100, speed=64)
    pb.toggle()
    pb.tick(10)
    assert (pb.t, pb.playing) == (100, False)
    pb.toggle()
    assert (pb.t, pb.playing) == (0, True)


def test_scrubbing_is_clamped_to_the_run():
    pb = Playback(start=0, end=100)
    pb.seek(250)
    assert pb.t == 100
    pb.seek(-5)
    assert pb.t == 0


def test_stepping_visits_each_event_time_in_turn(town_run):
    timeline = Replay(town_run).timeline
    times, t = [], 0.0
    while (t := timeline.next_event_time(t)) is not None:
        times.append(t)
    assert times == sorted(set(e.t for e in timeline.events.items)) [1:]
    assert timeline.previous_event_time(ADA_START) == 0.0
    # one agent's events only: Cy never does anything after joining
    assert timeline.next_event_time(0.0, "Cy Park") is None
    assert timeline.next_event_time(0.0, "Ada Stone") == ADA_START
    assert timeline.next_event_time(ADA_START, "Ben Ortiz") == ADA_ARRIVAL + 40


def test_a_live_cursor_at_the_end_follows_new_events_and_one_behind_stays():
    pb = Playback(start=0, end=100, t=100, live=True)
    pb.extend(160)
    assert pb.t == 160
    pb.seek(50)
    pb.extend(200)
    assert (pb.t, pb.end) == (50, 200)
