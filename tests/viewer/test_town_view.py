"""The town view, checked by pixels: sprites on the tiles the log says, bubbles while agents
talk, the inspection panel, on the mini test town and on the real town map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygame
import pytest

from sandbox.events import AgentJoined, ConversationStarted, Utterance
from sandbox.events.agent import ActionStarted, MemoryAdded, MemoryRetrieved, PlanMade
from sandbox.events.world import Placed
from tests.viewer.runs import ADA_ARRIVAL, ADA_PATH, ADA_START, move, town_events, write_run
from viewer import Playback, Replay
from viewer.draw import theme
from viewer.draw.mapimage import arena_colour
from viewer.frame import Renderer
from viewer.worldmap import find_world_file, load_world_map

SIZE = (1280, 800)
TOWN_MAP = find_world_file("town", Path("."))


def render(replay: Replay, t: float, select: str | None = None):
    pygame.font.init()
    renderer = Renderer(replay, SIZE)
    if select:
        renderer.view.select(select)
    surface = pygame.Surface(SIZE)
    playback = Playback(start=replay.start, end=replay.end)
    playback.seek(t)
    renderer.draw(surface, playback)
    return renderer.view, surface


def colour_box(surface, rect: pygame.Rect, colour) -> pygame.Rect | None:
    """The bounding box of the pixels of exactly `colour` inside `rect`."""
    pixels = pygame.surfarray.array3d(surface)[rect.left:rect.right, rect.top:rect.bottom]
    xs, ys = np.nonzero(np.all(pixels == colour, axis=-1))
    if len(xs) == 0:
        return None
    return pygame.Rect(rect.left + xs.min(), rect.top + ys.min(), xs.max() - xs.min() + 1,
                       ys.max() - ys.min() + 1)


def sprite_centre(view, surface, agent: str) -> tuple[float, float]:
    """The screen centre of `agent`'s drawn sprite: the middle of the disc of its colour."""
    colour = theme.agent_colour(view.replay.timeline.agents[agent].index)
    box = colour_box(surface, view.camera.viewport, colour)
    assert box is not None, f"{agent} is not drawn"
    assert abs(box.width - box.height) <= 1, f"{agent}'s sprite is cut or not alone: {box}"
    return box.left + (box.width - 1) / 2, box.top + (box.height - 1) / 2


def assert_on_tile(view, surface, agent: str, tile: tuple[int, int]) -> None:
    """The sprite's centre lies on `tile` as the map draws it (1 px for pixel rounding: a
    walker crossing into a tile is drawn at its edge)."""
    x, y = sprite_centre(view, surface, agent)
    rect = view.camera.tile_rect(tile)
    assert rect.left - 1 <= x <= rect.right and rect.top - 1 <= y <= rect.bottom, \
        f"{agent} drawn at {(x, y)} ({view.camera.to_map(x, y)}), logged on {tile} ({rect})"


def bubble_pixels(view, surface) -> int:
    pixels = pygame.surfarray.array3d(surface)
    vp = view.camera.viewport
    region = pixels[vp.left:vp.right, vp.top:vp.bottom]
    return int(np.all(region == theme.BUBBLE, axis=-1).sum())


def logged_tile(t: float) -> tuple[int, int]:
    """Ada's tile by the log's own rule: path[i] from start + i * 2 s."""
    if t < ADA_START:
        return ADA_PATH[0]
    return ADA_PATH[min(int((t - ADA_START) // 2.0), len(ADA_PATH) - 1)]


@pytest.mark.parametrize("t", [0.0, ADA_START + 5.0, ADA_START + 13.0, ADA_START + 24.5,
                               ADA_START + 41.0, ADA_ARRIVAL, ADA_ARRIVAL + 300])
def test_each_sprite_sits_on_the_tile_the_log_puts_it_at(town_run, t):
    view, surface = render(Replay(town_run), t)
    assert_on_tile(view, surface, "Ada Stone", logged_tile(t))
    assert_on_tile(view, surface, "Ben Ortiz", (24, 2))
    assert_on_tile(view, surface, "Cy Park", (5, 9))


def test_the_tile_under_a_sprite_is_painted_with_its_arena(town_run):
    view, surface = render(Replay(town_run), 0.0)
    world = view.world
    for tile in [(3, 2), (24, 2), (5, 9), (10, 5)]:
        corner = view.camera.tile_rect(tile).topleft
        expected = arena_colour(world, world.arena_of[tile])
        assert tuple(surface.get_at((corner[0] + 1, corner[1] + 1)))[:3] == expected


def test_a_conversation_frame_shows_a_bubble_over_the_speaker(town_run):
    replay = Replay(town_run)
    view, before = render(replay, ADA_ARRIVAL)
    assert bubble_pixels(view, before) == 0
    view, talking = render(replay, ADA_ARRIVAL + 15)
    assert bubble_pixels(view, talking) > 2000
    # the bubble is above Ada, the speaker
    ada = view.screen_points(ADA_ARRIVAL + 15)["Ada Stone"]
    box = colour_box(talking, view.camera.viewport, theme.BUBBLE)
    assert box.bottom < ada[1] and box.left <= ada[0] <= box.right
    view, after = render(replay, ADA_ARRIVAL + 100)  # the conversation has ended
    assert bubble_pixels(view, after) == 0


def test_selecting_an_agent_opens_its_panel_and_narrows_the_map(town_run):
    replay = Replay(town_run)
    view, surface = render(replay, ADA_ARRIVAL + 15, select="Ada Stone")
    assert view.camera.viewport.right == SIZE[0] - 400
    panel = pygame.Rect(view.camera.viewport.right, view.camera.viewport.top, 400, 200)
    assert colour_box(surface, panel, theme.agent_colour(0)) is not None  # her badge
    text = [line.text for line in view.panel.lines("Ada Stone", ADA_ARRIVAL + 15)]
    assert "Morning Ben! Are you coming to the party on Friday?" in text
    assert "in mini:Corner Cafe:dining room" in text
    # the sprite is still on its tile with the narrower map
    assert_on_tile(view, surface, "Ada Stone", logged_tile(ADA_ARRIVAL + 15))


def test_the_panel_explains_a_decision_with_the_retrieved_memories_and_scores(tmp_path):
    extra = [
        MemoryAdded(t=10, agent="Ada Stone", memory=0, memory_kind="event", importance=3,
                    description="Ben said the cafe has new pastries", created=10),
        MemoryAdded(t=20, agent="Ada Stone", memory=1, memory_kind="thought", importance=8,
                    description="I want everyone at my party on Friday", created=20),
        PlanMade(t=30, agent="Ada Stone", level="daily", items=["08:00 bake bread",
                                                               "09:00 invite Ben"],
                 wake_up="06:30"),
        MemoryRetrieved(t=ADA_ARRIVAL + 5, agent="Ada Stone", purpose="converse.turn",
                        query="Ben Ortiz", ids=[1, 0], scores=[2.71, 1.05],
                        recency=[1.0, 0.2], relevance=[0.9, 0.3], importance=[1.0, 0.1]),
        ActionStarted(t=ADA_ARRIVAL + 5, agent="Ada Stone", description="inviting Ben",
                      location="mini:Corner Cafe:dining room", until=ADA_ARRIVAL + 600),
    ]
    events = sorted(town_events() + extra, key=lambda e: e.t)
    replay = Replay(write_run(tmp_path / "run", events,
                              config={"task": {"goal": "invite people to a party",
                                               "performer": "Ada Stone"}}))
    view, _ = render(replay, ADA_ARRIVAL + 15, select="Ada Stone")
    text = [line.text for line in view.panel.lines("Ada Stone", ADA_ARRIVAL + 15)]
    assert "2.71  I want everyone at my party on Friday [thought]" in text
    assert "1.05  Ben said the cafe has new pastries [event]" in text
    assert "rec 1.00, rel 0.90, imp 1.00" in text
    assert "inviting Ben" in text
    assert "• 09:00 invite Ben" in text
    assert "goal: invite people to a party" in text
    assert any(line.startswith("TASK") and "PERFORMER" in line.upper() for line in text)


def test_an_open_ended_action_is_shown_as_running_not_ended(tmp_path):
    # A conversation's action is logged with until == its start: its length is not known yet.
    talk = ActionStarted(t=ADA_ARRIVAL + 5, agent="Ada Stone", description="talking with Ben",
                         location="mini:Corner Cafe:dining room", until=ADA_ARRIVAL + 5,
                         activity="conversation")
    replay = Replay(write_run(tmp_path / "run", sorted(town_events() + [talk],
                                                       key=lambda e: e.t)))
    view, _ = render(replay, ADA_ARRIVAL + 60, select="Ada Stone")
    text = [line.text for line in view.panel.lines("Ada Stone", ADA_ARRIVAL + 60)]
    assert "talking with Ben" in text
    assert not any("(ended)" in line for line in text)


def test_an_agent_under_the_mouse_is_found(town_run):
    view, _ = render(Replay(town_run), 0.0)
    ben = view.screen_points(0.0)["Ben Ortiz"]
    assert view.agent_at(ben, 0.0) == "Ben Ortiz"
    assert view.agent_at((ben[0] + 60, ben[1] + 60), 0.0) is None


# -- the real town map (worlds/maps/town.yaml) ---------------------------------------------

@pytest.fixture
def real_town_run(tmp_path):
    if TOWN_MAP is None:
        pytest.skip("worlds/maps/town.yaml is not there")
    world = load_world_map(TOWN_MAP)
    street = world.arenas["town:streets:Main Street"]
    row = sorted({y for _, y in street.tiles})[1]
    path = [(x, row) for x in range(5, 61)]
    assert all(world.arena_of[p] == street.address for p in path)
    cafe = sorted(world.arenas["town:Copper Kettle Cafe:dining room"].tiles)
    pub = world.arenas["town:Fox and Fiddle Pub:bar"].anchor_tile()
    ava, dee = cafe[0], cafe[-1]
    events = [
        AgentJoined(t=0, agent="Ava Lin", location="town:Copper Kettle Cafe:dining room"),
        AgentJoined(t=0, agent="Bo Reyes", location="town:streets:Main Street"),
        AgentJoined(t=0, agent="Dee Walsh", location="town:Copper Kettle Cafe:dining room"),
        AgentJoined(t=0, agent="Eli Park", location="town:Fox and Fiddle Pub:bar"),
        Placed(t=0, agent="Ava Lin", tile=ava, place="town:Copper Kettle Cafe:dining room"),
        Placed(t=0, agent="Bo Reyes", tile=path[0], place=street.address),
        Placed(t=0, agent="Dee Walsh", tile=dee, place="town:Copper Kettle Cafe:dining room"),
        move("Bo Reyes", 100.0, path, street.address, seconds_per_tile=2.86),
        ConversationStarted(t=200, conversation="c1", participants=["Ava Lin", "Dee Walsh"]),
        Utterance(t=200, agent="Dee Walsh", conversation="c1", turn=0, to=["Ava Lin"],
                  text="The party starts at five, can you bring the lanterns?"),
    ]
    run_dir = write_run(tmp_path / "town", events, world="town")
    return run_dir, path, ava, dee, pub


@pytest.mark.parametrize("t", [0.0, 100.0, 130.0, 171.6, 250.0])
def test_sprites_sit_on_their_logged_tiles_on_the_real_town_map(real_town_run, t):
    run_dir, path, ava, dee, pub = real_town_run
    replay = Replay(run_dir)
    assert replay.world.path == TOWN_MAP
    view, surface = render(replay, t)
    bo = path[0] if t < 100 else path[min(int((t - 100.0) / 2.86 + 1e-6), len(path) - 1)]
    assert view.replay.end >= t  # the walk's arrival extends the run
    assert_on_tile(view, surface, "Bo Reyes", bo)
    assert_on_tile(view, surface, "Ava Lin", ava)
    assert_on_tile(view, surface, "Eli Park", pub)  # stands where it joined
    assert_on_tile(view, surface, "Dee Walsh", dee)


def test_a_conversation_in_the_real_town_shows_a_bubble(real_town_run):
    replay = Replay(real_town_run[0])
    view, quiet = render(replay, 150.0)
    view, talking = render(replay, 210.0)
    assert bubble_pixels(view, quiet) == 0
    assert bubble_pixels(view, talking) > 2000


def test_the_panel_shows_the_score_and_the_evidence_about_the_agent(tmp_path):
    import json

    run_dir = write_run(tmp_path / "scored", town_events())
    (run_dir / "score.json").write_text(json.dumps({
        "run": str(run_dir), "template": "cafe_party", "type": "public_activity",
        "performer": "Ada Stone", "score": 0.5, "rule": "min(1/2, 1)", "expected": 2,
        "participants": ["Ben Ortiz"],
        "evidence": [
            {"agent": "Ben Ortiz", "rule": "keyword", "verdict": "counted",
             "reason": "'party' in the action", "event": 9, "action": "at the party",
             "location": "mini:Corner Cafe:dining room", "start": "2024-03-04 08:02",
             "end": "2024-03-04 08:10"},
            {"agent": "Cy Park", "rule": "place", "verdict": "rejected",
             "reason": "not at the cafe", "event": 5, "action": "reading"}]}))
    view, _ = render(Replay(run_dir), ADA_ARRIVAL, select="Ben Ortiz")
    text = [line.text for line in view.panel.lines("Ben Ortiz", ADA_ARRIVAL)]
    assert "0.50   min(1/2, 1)" in text
    assert "participants: Ben Ortiz" in text
    assert "evidence about Ben Ortiz: 1 of 2" in text
    assert "counted · keyword: 'party' in the action" in text
    assert ("at the party  at mini:Corner Cafe:dining room  2024-03-04 08:02 – 2024-03-04 08:10"
            "  log line 10") in text
    assert not any("not at the cafe" in line for line in text)


def test_a_walk_that_could_not_happen_is_shown_on_the_map_and_in_the_panel(tmp_path):
    from sandbox.events import WalkFailed

    t = ADA_ARRIVAL + 5
    failed = WalkFailed(t=t, agent="Ada Stone", tile=ADA_PATH[-1],
                        origin="mini:Corner Cafe:dining room",
                        destination="mini:Old Mill:loft",
                        reason="'mini:Old Mill:loft' cannot be reached from tile (3, 4)")
    stay = ActionStarted(t=t, agent="Ada Stone", description="milling flour",
                         location="mini:Corner Cafe:dining room", until=t + 7200)
    replay = Replay(write_run(tmp_path / "run", sorted(town_events() + [failed, stay],
                                                       key=lambda e: e.t)))
    view, _ = render(replay, t + 60, select="Ada Stone")
    text = [line.text for line in view.panel.lines("Ada Stone", t + 60)]
    assert "could not get to mini:Old Mill:loft: 'mini:Old Mill:loft' cannot be reached from " \
           "tile (3, 4)" in text
    assert view._caption("Ada Stone", t + 60) == "could not get to loft"
    assert view._caption("Ada Stone", t + 3700) == "milling flour"


def test_a_crowd_on_neighbouring_tiles_is_spread_into_discs_one_can_tell_apart(tmp_path):
    """Nine residents on a 3 x 3 block of the real town's cafe and three on one tile beside
    them: at the whole-town zoom their discs once piled into one blob."""
    if TOWN_MAP is None:
        pytest.skip("worlds/maps/town.yaml is not there")
    names = ["Ada Stone", "Ben Ortiz", "Cy Park", "Dee Lund", "Eli Marsh", "Fay Quinn",
             "Gus Hale", "Hal Ives", "Ivy North", "Jo Reyes", "Kim Soto", "Lu Tran"]
    tiles = [(x, y) for y in (36, 37, 38) for x in (4, 5, 6)] + [(8, 40)] * 3
    place = "town:Copper Kettle Cafe:dining room"
    events = [e for name, tile in zip(names, tiles, strict=True) for e in (
        AgentJoined(t=0, agent=name, location=place),
        Placed(t=0, agent=name, tile=tile, place=place))]
    view, surface = render(Replay(write_run(tmp_path / "crowd", events, world="town")), 0.0)
    points = view.screen_points(0.0)
    r = view._radius()
    assert 2 * r + 2 > view.camera.scale  # the zoom at which neighbours' discs would touch
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            gap = ((points[a][0] - points[b][0]) ** 2 + (points[a][1] - points[b][1]) ** 2) ** .5
            assert gap >= 2 * r + 2, f"{a} and {b} overlap ({gap:.1f} px apart)"
    for name in names:  # each disc whole, of its own colour, where the view says it is
        x, y = sprite_centre(view, surface, name)
        assert abs(x - points[name][0]) <= 1 and abs(y - points[name][1]) <= 1
