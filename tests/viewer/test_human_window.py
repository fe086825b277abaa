"""A person plays a resident in the viewer's window, driven headless (SDL's dummy driver) with
posted key presses and mouse clicks: through a whole task template, and closing the window
mid-run, after which the same command goes on from the run's cache."""

from __future__ import annotations

import json
from pathlib import Path

import pygame
import pytest
import yaml

from sandbox.app.cli import main
from tests.sandbox.test_human import ANSWERS, EPISODE, PERSON
from viewer.draw import theme
from viewer.human import PersonWindow


def key(k: int, char: str = "", mod: int = 0) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod, unicode=char))


def click(pos) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))


class Person:
    """Plays the answers through the window as a person would: between decisions `end` (to
    the newest moment), at a form a click on each field to change, typing or a click on a
    choice, then enter or a click on Done; `leave_at`: the window closed at that form."""

    def __init__(self, answers: list[dict], leave_at: int | None = None,
                 shots: dict[str, Path] | None = None):
        self.answers, self.leave_at = answers, leave_at
        self.given, self.handled, self.forms = 0, None, []
        self.done_at: dict[str, tuple[int, int]] = {}  # where each form's Done button was
        self.shots = dict(shots or {})

    def __call__(self, window: PersonWindow) -> None:
        if window._said_finished:
            pygame.event.post(pygame.event.Event(pygame.QUIT))
            return
        if window.state is None:
            if window.asked is not None:
                key(pygame.K_END)  # skip on to the moment the decision is asked
            return
        if window.box is None or window.state is self.handled:
            return  # the form is drawn next frame; this one is answered already
        self.handled = window.state
        form, box = window.state.form, window.box
        self.forms.append(form.purpose)
        done = next(rect for rect, target in box.targets if target == ("done",))
        self.done_at.setdefault(form.purpose, (done.left + 6, done.centery))
        if form.purpose in self.shots:
            pygame.image.save(window.screen, str(self.shots.pop(form.purpose)))
        if self.given == self.leave_at:
            pygame.event.post(pygame.event.Event(pygame.QUIT))  # the window closed
            return
        answer = dict(self.answers[self.given])
        self.given += 1
        assert answer.pop("purpose") == form.purpose
        targets = dict((target, rect) for rect, target in box.targets)
        for i, field in enumerate(form.fields):
            if field.name not in answer:
                continue
            value = str(answer[field.name])
            click(targets[("field", i)].center)
            if ("option", field.name, 0) in targets:  # a few choices: click the one
                click(targets[("option", field.name, field.options.index(value))].center)
                continue
            key(pygame.K_DELETE)  # clear, then type (a choice of many: typed too)
            for char in value:
                key(ord(char), char)
        if self.given % 2:
            key(pygame.K_RETURN)
        else:
            click(targets[("done",)].center)


def play(monkeypatch, person: Person, out: Path) -> int:
    monkeypatch.setattr(PersonWindow, "before_frame", lambda window: person(window))
    return main([*EPISODE, "--out", str(out), "--human", PERSON, "--human-ui", "window"])


@pytest.fixture
def scripted(tmp_path) -> Path:
    """The same answers from a script: what the window's run must equal byte for byte."""
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(ANSWERS))
    out = tmp_path / "scripted"
    assert main([*EPISODE, "--out", str(out), "--human", PERSON, "--human-ui",
                 f"script:{path}"]) == 0
    return out


def test_a_person_plays_a_whole_task_in_the_window(monkeypatch, tmp_path, scripted):
    person = Person(ANSWERS, shots={"react.talk": tmp_path / "talk.png"})
    out = tmp_path / "window"
    assert play(monkeypatch, person, out) == 0
    assert person.forms == [a["purpose"] for a in ANSWERS]
    assert json.loads((out / "score.json").read_text())["score"] == 1
    assert (out / "events.jsonl").read_bytes() == (scripted / "events.jsonl").read_bytes()
    # The form was on the screen, its Done button in the accent colour.
    shot = pygame.image.load(str(tmp_path / "talk.png"))
    assert tuple(shot.get_at(person.done_at["react.talk"]))[:3] == theme.ACCENT


def test_closing_the_window_mid_run_leaves_a_run_the_same_command_goes_on_from(
        monkeypatch, tmp_path, scripted):
    out = tmp_path / "window"
    assert play(monkeypatch, Person(ANSWERS, leave_at=5), out) == 1
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert result["error"] == "the person left: the window was closed"
    assert not (out / "score.json").exists()
    # The same command: the five answers given come from the cache, the rest from the person.
    again = Person(ANSWERS[5:])
    assert play(monkeypatch, again, out) == 0
    assert again.forms == [a["purpose"] for a in ANSWERS[5:]]
    assert (out / "events.jsonl").read_bytes() == (scripted / "events.jsonl").read_bytes()
    assert json.loads((out / "score.json").read_text())["score"] == 1


def test_the_clock_pauses_and_speeds_up_between_decisions(tmp_path):
    """Paused, the form of a decision asked at 16:06 does not open; played faster, the town
    plays on to that moment, stops there and opens it."""
    from agents.human import decision_form
    from sandbox.llm import LLMRequest, Message
    from viewer import Replay
    from viewer.human import Asked, WindowUI

    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(ANSWERS[:4]))
    out = tmp_path / "left"  # the person left at react.talk, 16:06
    assert main([*EPISODE, "--out", str(out), "--human", PERSON, "--human-ui",
                 f"script:{path}"]) == 1
    form = decision_form(LLMRequest(
        messages=[Message(role="user", content="...")], tag="react.talk", agent=PERSON,
        about={"other": "Julian Reyes"}))
    ui = WindowUI()
    ui._pending = Asked(form)
    pygame.display.init()
    pygame.font.init()
    try:
        window = PersonWindow(ui, Replay(out), PERSON, (1280, 800))
        window.playback.seek(0)
        key(pygame.K_SPACE)  # pause
        window.run(frames=10)
        assert window.state is None and window.playback.t == 0
        assert window.decision_at > 3600  # after 16:00
        window.playback.seek(window.decision_at - 1800)  # half an hour before
        key(pygame.K_SPACE)
        for _ in range(6):
            key(pygame.K_PLUS, "+")  # 64x -> 4096x
        for _ in range(600):
            window.run(frames=1)
            if window.state is not None:
                break
        assert window.playback.speed == 4096
        assert window.state is not None and window.playback.t == window.decision_at
        assert not window.playback.playing  # the clock waits for the person
    finally:
        pygame.display.quit()


def test_a_window_run_replays_from_its_cache_with_no_window(monkeypatch, tmp_path, scripted):
    out = tmp_path / "window"
    assert play(monkeypatch, Person(ANSWERS), out) == 0
    monkeypatch.setattr(PersonWindow, "before_frame", lambda window: pytest.fail("a window"))
    monkeypatch.delenv("SDL_VIDEODRIVER")  # no display at all: none is needed
    monkeypatch.delenv("DISPLAY", raising=False)
    again = tmp_path / "again"
    assert main(["rerun", str(out), "--cache-only", "--out", str(again)]) == 0
    assert (again / "events.jsonl").read_bytes() == (out / "events.jsonl").read_bytes()
