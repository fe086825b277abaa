"""The window, driven by posted key and mouse events on the dummy video driver."""

from __future__ import annotations

import pygame
import pytest

from tests.viewer.runs import ADA_ARRIVAL, ADA_START, town_events, write_run
from viewer import Replay
from viewer.app import Window


@pytest.fixture
def window():
    pygame.display.init()
    pygame.font.init()
    made = []

    def make(run_dir, **options):
        made.append(Window(Replay(run_dir, follow=options.get("live", False)), (1280, 800),
                           **options))
        return made[-1]

    yield make
    pygame.display.quit()


def press(key: int, mod: int = 0) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=mod, unicode=""))


def click(pos) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=pos))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=pos))


def test_keys_step_between_events_and_change_speed(town_run, window):
    w = window(town_run)
    assert (w.playback.t, w.playback.speed) == (0.0, 64)
    press(pygame.K_RIGHT)
    press(pygame.K_RIGHT)
    press(pygame.K_PLUS)
    w.run(frames=1)
    assert (w.playback.t, w.playback.speed) == (ADA_ARRIVAL + 10, 128)
    press(pygame.K_LEFT)
    press(pygame.K_MINUS)
    press(pygame.K_MINUS)
    w.run(frames=1)
    assert (w.playback.t, w.playback.speed) == (ADA_START, 32)


def test_space_plays_and_time_moves_on(town_run, window):
    w = window(town_run)
    press(pygame.K_SPACE)
    w.run(frames=5)
    assert w.playback.playing and w.playback.t > 0


def test_clicking_an_agent_inspects_it_and_f_follows_it(town_run, window):
    w = window(town_run, at=ADA_ARRIVAL + 15)
    w.run(frames=1)
    click(w.town.screen_points(w.playback.t)["Ben Ortiz"])
    press(pygame.K_f)
    w.run(frames=1)
    assert (w.town.selected, w.town.following) == ("Ben Ortiz", "Ben Ortiz")
    press(pygame.K_ESCAPE)
    w.run(frames=1)
    assert w.town.selected is None and w.running


def test_clicking_the_timeline_jumps_there(town_run, window):
    w = window(town_run)
    w.run(frames=1)
    bar = w.renderer.timeline_bar.rect(w.screen)
    click((bar.left + bar.width // 2, bar.centery))
    w.run(frames=1)
    assert abs(w.playback.t - w.replay.end / 2) < w.replay.end / bar.width * 2


def test_zoom_and_pan_move_the_camera(town_run, window):
    w = window(town_run)
    w.run(frames=1)
    scale, centre = w.town.camera.scale, (w.town.camera.cx, w.town.camera.cy)
    press(pygame.K_RIGHTBRACKET)
    press(pygame.K_d)
    w.run(frames=1)
    assert w.town.camera.scale > scale and w.town.camera.cx > centre[0]
    press(pygame.K_0)
    w.run(frames=1)
    assert (w.town.camera.scale, w.town.camera.cx) == (scale, centre[0])


def test_a_live_run_is_followed_as_it_grows(tmp_path, window):
    events = town_events()
    run_dir = write_run(tmp_path / "live", events[:6], finished=False)
    w = window(run_dir, live=True)
    w.run(frames=1)
    assert w.playback.end == 0.0
    with (run_dir / "events.jsonl").open("a") as fh:
        fh.write(events[6].model_dump_json() + "\n")  # Ada starts to walk
    w._last_poll = 0.0
    w.run(frames=1)
    assert w.playback.end == events[6].arrival and w.playback.t == w.playback.end
    assert w.town.positions.tile("Ada Stone", w.playback.t) == events[6].path[-1]


def test_q_quits(town_run, window):
    w = window(town_run)
    press(pygame.K_q)
    w.run(frames=3)
    assert not w.running


def test_t_jumps_to_the_task_window_of_an_stss_run(tmp_path, window):
    task = {"template": "cafe_party", "title": "A party at the cafe", "type": "public_activity",
            "performer": "Ada Stone", "goal": "Ada wants to throw a party.",
            "criteria": "Many come.", "start": "2024-03-04T08:05:00",
            "end": "2024-03-04T08:10:00",
            "steps": [{"keyword": "party", "alternatives": ["celebrate"],
                       "location": "mini:Corner Cafe:dining room"}], "expected": 2}
    run_dir = write_run(tmp_path / "stss", town_events(), config={"stss_task": task})
    w = window(run_dir)
    assert w.replay.task_window() == (300.0, 600.0)
    press(pygame.K_t)
    w.run(frames=1)
    assert w.playback.t == 300.0
    text = [line.text for line in w.town.panel.lines("Ben Ortiz", 300.0)]
    assert "A party at the cafe (public_activity)" in text
    assert "• party / celebrate at mini:Corner Cafe:dining room" in text
    assert any("background (performer: ada stone)" in line.lower() for line in text)


def test_the_wheel_zooms_the_town_and_scrolls_a_conversation(town_run, tmp_path, window):
    w = window(town_run)
    w.run(frames=1)
    scale = w.town.camera.scale
    pygame.event.post(pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=2))
    w.run(frames=1)
    assert w.town.camera.scale > scale
    events = [e for e in town_events() if e.kind not in ("placed", "move")]
    room = window(write_run(tmp_path / "room", events, world="single_room"))
    pygame.event.post(pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=1))
    room.run(frames=1)
    assert room.renderer.view.scroll == 40
