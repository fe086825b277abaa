"""`sandbox replay FORK --beside [PARENT]`: a fork beside its parent on one clock, on a scripted
town (three residents, reflection after little, 06:00 to 10:00, seed 1) forked at 08:00 twice:
Kenji Mori made ga_no_reflection (he stops reflecting, and Arthur comes to talk with him at
08:05), and unchanged."""

from __future__ import annotations

import json
import shutil

import pygame
import pytest
import yaml

from sandbox.app.cli import main
from tasks.scenarios.town_day import DEFAULT_CONFIG
from tests.viewer.test_window import click, press
from viewer import Replay
from viewer.app import Window
from viewer.beside import Beside, open_beside
from viewer.draw.beside import pane_rects
from viewer.draw.hud import TIMELINE_BAR, TOP_BAR

MODEL = ["--model", "scripted/town", "--embedder", "hashing", "--quiet"]
SIZE = (1280, 800)
FORK_AT = 7200.0  # 08:00


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{day, changed, same}: the recorded day and its two forks at 08:00."""
    tmp = tmp_path_factory.mktemp("beside")
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    config.update(hours=4, params={"reflector": {"threshold": 10}})
    (tmp / "day.yaml").write_text(yaml.safe_dump(config))
    day, changed, same = tmp / "day", tmp / "changed", tmp / "same"
    assert main(["run", "town_day", "--config", str(tmp / "day.yaml"), *MODEL, "--seed", "1",
                 "--out", str(day)]) == 0
    assert main(["fork", str(day), "--at", "08:00", "--agent-arch",
                 "Kenji Mori=ga_no_reflection", "--out", str(changed)]) == 0
    assert main(["fork", str(day), "--at", "08:00", "--out", str(same)]) == 0
    return {"day": day, "changed": changed, "same": same}


def export(tmp_path, argv, name="frames"):
    out = tmp_path / name
    assert main(["replay", *argv, "--export", str(out), "--size", "x".join(map(str, SIZE))]) \
        == 0
    return sorted(out.glob("*.png"))


def halves(path) -> tuple[bytes, bytes]:
    """The pixels of the left and the right pane's view, below their captions and above the
    shared timeline (the captions name different runs)."""
    image = pygame.image.load(str(path))
    out = []
    for rect in pane_rects(SIZE):
        view = pygame.Rect(rect.left, rect.top + TOP_BAR, rect.width,
                           rect.height - TOP_BAR - TIMELINE_BAR)
        out.append(pygame.image.tobytes(image.subsurface(view), "RGB"))
    return out[0], out[1]


def first_differing_time(a, b) -> float | None:
    """By the events.jsonl bytes: the first line, in order, not the same in both (the fork's
    own architecture_changed record left out), at the earlier of the two lines' times."""
    def lines(run):
        return [line for line in (run / "events.jsonl").read_bytes().splitlines()
                if json.loads(line)["kind"] != "architecture_changed"]

    for x, y in zip(lines(a), lines(b), strict=False):
        if x != y:
            return min(json.loads(x)["t"], json.loads(y)["t"])
    return None


def test_beside_with_no_value_finds_the_parent_the_fork_names(runs, tmp_path, capsys):
    frames = export(tmp_path, [str(runs["changed"]), "--beside", "--every", "1h"])
    assert len(frames) == 6  # 06:00 .. 10:00, and the last arrival at 10:05
    assert pygame.image.load(str(frames[0])).get_size() == SIZE
    out = capsys.readouterr().out
    assert f"{runs['changed']} beside {runs['day']}, its parent: fork at 08:00" in out
    pair = open_beside(runs["changed"], None)
    assert (pair.left.dir, pair.right.dir) == (runs["day"], runs["changed"])
    assert pair.fork_points() == [(FORK_AT, "fork 08:00")]


def test_a_parent_named_relative_to_where_the_fork_ran_is_found_from_anywhere(runs, tmp_path,
                                                                            monkeypatch):
    shutil.copytree(runs["day"], tmp_path / "day")
    monkeypatch.chdir(tmp_path)
    assert main(["fork", "day", "--at", "08:00", "--out", "forks/again"]) == 0
    assert json.loads((tmp_path / "forks/again/header.json").read_text()
                      )["config"]["forks"][-1]["parent"] == str(tmp_path / "day")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    pair = open_beside(tmp_path / "forks/again", None)
    assert pair.left.dir.resolve() == (tmp_path / "day").resolve() and pair.forks


def test_the_parent_goes_left_whichever_run_is_named_first(runs):
    pair = open_beside(runs["day"], runs["changed"])
    assert (pair.left.dir, pair.right.dir) == (runs["day"], runs["changed"]) and pair.forks


def test_the_timeline_parts_at_the_first_differing_event(runs):
    pair = open_beside(runs["changed"], None)
    parted = first_differing_time(runs["day"], runs["changed"])
    assert parted is not None and parted > FORK_AT
    assert pair.parted == parted
    assert pair.parting_text() == f"parted {pair.clock(parted):%H:%M}"
    left, right = pair.labels()
    assert left == "day  ·  Kenji Mori: ga  ·  parent"
    assert right == "changed  ·  Kenji Mori: ga_no_reflection  ·  fork at 08:00"


def test_a_fork_that_changed_nothing_is_identical_so_far(runs):
    pair = open_beside(runs["same"], None)
    assert first_differing_time(runs["day"], runs["same"]) is None
    assert pair.parted is None and pair.parting_text() == "identical so far"
    assert pair.labels() == ("day  ·  parent", "same  ·  fork at 08:00")


def _first_seen_difference(a, b) -> float:
    """The time of the first moving, doing or saying that differs between two runs' logs."""
    def seen(run):
        lines = (json.loads(line) for line in (run / "events.jsonl").read_text().splitlines())
        return [(e["t"], e["kind"], e.get("agent"), e.get("description"), e.get("text"))
                for e in lines if e["kind"] in ("move", "action_started", "utterance")]
    return next(x[0] for x, y in zip(seen(a), seen(b), strict=False) if x != y)


def test_the_panes_are_the_same_picture_until_the_runs_part_and_differ_after(runs, tmp_path):
    parted = open_beside(runs["changed"], None).parted
    shown = _first_seen_difference(runs["day"], runs["changed"])
    assert shown >= parted
    # 07:00, the fork point, just before the parting; then just after the first difference a
    # replay can show (Arthur and Kenji talking, in the fork only)
    times = ["07:00", "08:00", f"+{int(parted) - 1}s", f"+{int(shown) + 1}s"]
    frames = [export(tmp_path, [str(runs["changed"]), "--beside", "--from", t, "--to", t],
                     name=f"f{i}")[0] for i, t in enumerate(times)]
    same = [a == b for a, b in map(halves, frames)]
    assert same == [True, True, True, False]


def test_an_unchanged_fork_is_the_same_picture_all_day(runs, tmp_path):
    frames = export(tmp_path, [str(runs["same"]), "--beside", "--every", "30m"])
    assert len(frames) == 10
    assert all(a == b for a, b in map(halves, frames))


def test_any_two_runs_side_by_side_without_a_fork_mark(runs, tmp_path, capsys):
    other = tmp_path / "ga"
    assert main(["run", "town_day", "--config", str(runs["day"].parent / "day.yaml"),
                 "--hours", "2", "--performer", "Grace Okonkwo", "--arch", "ga", *MODEL,
                 "--out", str(other)]) == 0
    frames = export(tmp_path, [str(other), "--beside", str(runs["day"]), "--every", "1h"])
    assert len(frames) == 6  # the longer run's bounds: 06:00 .. 10:05
    assert "(not a fork of it)" in capsys.readouterr().out
    pair = open_beside(other, runs["day"])
    assert pair.forks == [] and pair.fork_points() == []
    assert pair.parted == 0.0  # Grace Okonkwo joins as ga_tdp in one, ga in the other
    assert pair.labels() == ("day  ·  Grace Okonkwo: ga_tdp", "ga  ·  Grace Okonkwo: ga")


def test_single_room_runs_show_side_by_side_as_conversations(tmp_path):
    for name, turns in (("room", "6"), ("short", "4")):
        assert main(["run", "single_room", "--model", "scripted/default", "--turns", turns,
                     "--quiet", "--out", str(tmp_path / name)]) == 0
    frames = export(tmp_path, [str(tmp_path / "short"), "--beside", str(tmp_path / "room")])
    assert frames  # one frame per event time of either run
    pair = open_beside(tmp_path / "short", tmp_path / "room")
    assert not pair.is_town and pair.parted is not None


@pytest.mark.parametrize("edit, message", [
    (lambda config: config.pop("forks"), "is not a fork (its header records no `forks`)"),
    (lambda config: config["forks"][-1].update(parent="gone/day"),
     "is a fork of gone/day, which is not there"),
])
def test_a_missing_parent_exits_2_in_one_line(runs, tmp_path, capsys, edit, message):
    run = tmp_path / "fork"
    shutil.copytree(runs["changed"], run)
    header = json.loads((run / "header.json").read_text())
    edit(header["config"])
    (run / "header.json").write_text(json.dumps(header))
    assert main(["replay", str(run), "--beside", "--export", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "--beside" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_beside_a_directory_that_is_not_there_exits_2(runs, tmp_path, capsys):
    assert main(["replay", str(runs["changed"]), "--beside", str(tmp_path / "nope"),
                 "--export", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no such directory" in err and len(err.splitlines()) == 1


@pytest.fixture
def beside_window(runs):
    pygame.display.init()
    pygame.font.init()
    yield Window(Beside(Replay(runs["day"]), Replay(runs["changed"])), SIZE, at=FORK_AT)
    pygame.display.quit()


def test_keys_move_the_one_clock_of_both_runs(beside_window):
    w = beside_window
    pair = w.subject
    press(pygame.K_RIGHT)
    w.run(frames=1)
    following = [t for t in pair.event_times if t > FORK_AT][0]
    assert w.playback.t == following


def test_a_click_inspects_the_agent_in_the_pane_clicked(beside_window):
    w = beside_window
    w.run(frames=1)
    right = w.renderer.panes[1]
    x, y = right.town.screen_points(w.playback.t)["Kenji Mori"]
    click((x + right.rect.left, y + right.rect.top))
    press(pygame.K_f)
    w.run(frames=1)
    assert (right.town.selected, right.town.following) == ("Kenji Mori", "Kenji Mori")
    assert w.renderer.panes[0].town.selected is None
    lines = [line.text for line in right.town.panel.lines("Kenji Mori", w.playback.t)]
    assert "ga_no_reflection (was ga until 08:00)  ·  scripted/town" in lines


def test_a_run_that_stops_short_is_identical_so_far_until_both_have_finished(tmp_path):
    from tests.viewer.runs import town_events, write_run

    events = town_events()
    left = write_run(tmp_path / "left", events)
    live = write_run(tmp_path / "live", events[:6], finished=False)
    pair = Beside(Replay(left), Replay(live, follow=True))
    assert pair.parted is None
    with (live / "events.jsonl").open("a") as fh:
        fh.write(events[6].model_dump_json() + "\n")
    assert pair.refresh() == 1 and pair.parted is None
    short = write_run(tmp_path / "short", events[:7])
    assert Beside(Replay(left), Replay(short)).parted == events[7].t


def renderer_at(runs, t: float, follow: str | None = None):
    from viewer.frame import make_renderer
    from viewer.playback import Playback

    pair = Beside(Replay(runs["day"]), Replay(runs["changed"]))
    renderer = make_renderer(pair, SIZE)
    renderer.still = True
    if follow:
        renderer.follow(follow)
    surface = pygame.Surface(SIZE)
    playback = Playback(start=pair.start, end=pair.end)
    playback.seek(t)
    renderer.draw(surface, playback)
    return renderer, surface


def test_a_followed_agents_panel_leaves_the_map_half_its_pane(runs):
    """The panel once took 400 of a pane's 638 pixels, the map squeezed beside it."""
    renderer, _ = renderer_at(runs, FORK_AT + 1830, follow="Kenji Mori")
    for pane in renderer.panes:
        assert pane.view.camera.viewport.width >= pane.rect.width // 2


def test_a_whole_town_in_a_pane_lists_its_residents_in_the_room_below_it(runs):
    """A wide town fits a half-window's width with room below: each resident is listed
    there, a disc of its colour, so the pane's space is used and small discs are named."""
    from viewer.draw import theme

    renderer, surface = renderer_at(runs, FORK_AT + 1830)
    pixels = pygame.surfarray.array3d(surface)
    for pane in renderer.panes:
        view = pane.view
        below = pane.rect.top + view.camera.to_screen(0, view.world.height)[1]
        assert pane.rect.bottom - below > 60  # the room there is
        region = pixels[pane.rect.left:pane.rect.right, below:pane.rect.bottom]
        for info in view.replay.timeline.agents.values():
            disc = theme.shade(theme.agent_colour(info.index), 0.9)
            assert (region == disc).all(axis=-1).any(), f"{info.name} is not listed"


def test_no_place_name_lies_under_a_resident_its_caption_or_a_bubble(runs, monkeypatch):
    from viewer.draw import town
    from viewer.draw.mapimage import Labels

    drawn: list[tuple[object, pygame.Rect]] = []  # (the labels' owner, where one was drawn)
    place = Labels._place

    def record(self, surface, camera, p, message, size, bold, taken, *args, **kwargs):
        ok = place(self, surface, camera, p, message, size, bold, taken, *args, **kwargs)
        if ok:
            drawn.append((self, taken[-1].copy()))
        return ok

    monkeypatch.setattr(Labels, "_place", record)
    for t, follow in ((FORK_AT + 1830, "Kenji Mori"), (FORK_AT + 1830, None),
                      (FORK_AT + 300, "Arthur Okonkwo")):
        drawn.clear()
        renderer, _ = renderer_at(runs, t, follow)
        view = renderer.panes[1].view
        drawn_here = [rect for owner, rect in drawn if owner is view.labels]
        assert drawn_here
        r = view._radius()
        points = view._spread(t)
        covered = [pygame.Rect(0, 0, 2 * r + 4, 2 * r + 4) for _ in points]
        for rect, p in zip(covered, points.values(), strict=True):
            rect.center = view.camera.to_screen(*p)
        covered += [box for box, _ in view._captions(t, points)]
        covered += [town.bubble_area(b, r) for b in view._bubbles(t, points)]
        for label in drawn_here:
            assert label.collidelist(covered) == -1, (t, follow, label)
