"""Single-room runs show as a conversation: turns, speakers, and judge scores when present."""

from __future__ import annotations

import numpy as np
import pygame

from sandbox.events import AgentJoined, ConversationEnded, ConversationStarted, Utterance
from sandbox.judgments import Judgment, TurnVerdict, save_judgment
from tests.viewer.runs import write_run
from viewer import Playback, Replay
from viewer.draw import theme
from viewer.draw.conversation import SIDEBAR, judge_scores, situation_text
from viewer.frame import Renderer

SIZE = (1280, 800)
TURNS = ["Shall we hold the street party on the 14th?",
         "The 14th works. My friend's band could play, for free even.",
         "Wonderful. I will make a list of who brings food.",
         "Keep it short, I have deliveries all week."]


def single_room_run(tmp_path, judged: bool = False):
    names = ["Ines Okafor", "Dario Lindqvist"]
    events = [AgentJoined(t=0, agent=n, location="single_room:house:room:table",
                          persona="a neighbour") for n in names]
    events.append(ConversationStarted(t=0, conversation="c0", participants=names,
                                      location="the room"))
    for turn, text in enumerate(TURNS):
        events.append(Utterance(t=20 * turn, agent=names[turn % 2], conversation="c0",
                                turn=turn, to=[names[(turn + 1) % 2]], text=text,
                                ends=turn == len(TURNS) - 1))
    events.append(ConversationEnded(t=60, conversation="c0", turns=4, reason="ended_by_agent"))
    config = {"situation": "Two neighbours plan a street party.",
              "personas": [{"name": n, "description": f"{n} lives here.", "goal": "a party"}
                           for n in names]}
    if judged:
        config |= {"player_agent": "Dario Lindqvist", "conversation": "c0",
                   "benchmark": "pingpong"}
    run_dir = write_run(tmp_path / "room", events, world="single_room", scenario="single_room",
                        config=config)
    if judged:  # the kit's judgment format: each verdict names the utterance turn it is about
        turns = [TurnVerdict(turn=k, scores={"in_character": 4, "entertaining": 3,
                                             "fluency": 5}, flags={"is_refusal": False},
                             notes={"in_character": "fits"}) for k in (1, 3)]
        save_judgment(run_dir, Judgment(judge="pingpong", model="scripted/judge", status="ok",
                                        turns=turns))
        save_judgment(run_dir, Judgment(judge="plausibility", model="scripted/judge",
                                        status="fallback", scores={"rating": 5},
                                        turns=[TurnVerdict(turn=3, scores={"rating": 5})]))
    return run_dir


def render(replay, t):
    pygame.font.init()
    surface = pygame.Surface(SIZE)
    playback = Playback(start=replay.start, end=replay.end)
    playback.seek(t)
    Renderer(replay, SIZE).draw(surface, playback)
    return surface


def bubble_count(surface) -> int:
    """Turn bubbles in the transcript: runs of bubble-white rows in a column through them."""
    pixels = pygame.surfarray.array3d(surface)
    white = np.all(pixels[SIDEBAR + 60:, :] == theme.BUBBLE, axis=-1).any(axis=0)
    rising = np.flatnonzero(white[1:] & ~white[:-1])
    return len(rising)


def test_the_single_room_run_opens_as_a_conversation_and_shows_each_turn_said(tmp_path):
    replay = Replay(single_room_run(tmp_path))
    assert replay.view == "conversation"
    assert bubble_count(render(replay, 0)) == 1
    assert bubble_count(render(replay, 25)) == 2
    assert bubble_count(render(replay, 60)) == 4


def test_both_speakers_are_drawn_in_their_colours(tmp_path):
    surface = render(Replay(single_room_run(tmp_path)), 60)
    pixels = pygame.surfarray.array3d(surface)[SIDEBAR:]
    for index in (0, 1):
        assert np.all(pixels == theme.agent_colour(index), axis=-1).sum() > 300


def test_judge_scores_are_attached_to_the_player_turns(tmp_path):
    replay = Replay(single_room_run(tmp_path, judged=True))
    scores = judge_scores(replay)
    assert set(scores) == {("c0", 1), ("c0", 3)}  # Dario's turns
    assert scores[("c0", 1)] == ["scripted/judge: in character 4 · entertaining 3 · fluency 5"]
    assert scores[("c0", 3)][1] == ("scripted/judge (plausibility): rating 5 (fallback: left "
                                    "out of means)")
    render(replay, 60)  # draws with the scores


def test_the_real_single_room_scenario_log_renders(tmp_path):
    from sandbox.app.cli import main

    out = tmp_path / "demo"
    assert main(["run", "single_room", "--model", "scripted/default", "--seed", "0",
                 "--out", str(out), "--quiet"]) == 0
    replay = Replay(out)
    assert replay.view == "conversation"
    said = len(replay.timeline.by_kind["utterance"])
    assert said >= 2
    assert bubble_count(render(replay, replay.end)) == said


def test_a_pingpong_situation_record_shows_as_its_text():
    assert situation_text({"situation": {"text": "Ask about the dragon.", "turns": 3}}) == \
        "Ask about the dragon."
    assert situation_text({"situation": "Two neighbours."}) == "Two neighbours."
    assert situation_text({}) == ""


def test_a_name_of_thousands_of_characters_wraps_into_the_lines_asked_for():
    from viewer.draw.theme import wrap

    lines = wrap("x" * 5000 + " and more", 13, 200, max_lines=2)
    assert len(lines) == 2 and lines[-1].endswith("…")
    assert len(wrap("ẞ" * 3000, 13, 200)) > 10  # uncut: every piece kept
