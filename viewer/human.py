"""A person plays a resident in the viewer's window (`sandbox run ... --human NAME`).

The episode runs in a worker thread and asks the person through `WindowUI.ask` (a HumanUI,
sandbox/llm/human.py); the window, in the main thread, follows the run as it is written: the
town, the clock, the person's resident followed and inspected (its task, what it perceives,
its plans and talks, in the panel). Playback goes on at its speed (space pauses, +/- change
it); when it reaches the moment a decision is asked, the decision's form opens over the map
and the simulation waits for it. Keys then go to the form:

    tab / down, shift+tab / up   next / previous field     left / right   another choice
    typing, backspace            the focused text field    enter          done
    typing on a choice           picks it ("17": 17:00)    delete, ctrl+u clear the field
    click a field, a choice or the Done button                   closing the window: leave

Closing the window leaves the run (PersonLeft in the episode's thread: the run stops,
resumable). The form is drawn by draw/form.py; `FormState` holds what is typed, no pygame.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygame

from sandbox.llm.human import Form, PersonLeft, choose

from .app import Window
from .draw.form import FormBox, draw_form
from .replay import Replay
from .source import ReplayError


@dataclass
class Asked:
    """A form waiting for the person's answers (set by the window, read by the episode)."""

    form: Form
    values: dict[str, str] = field(default_factory=dict)
    answered: threading.Event = field(default_factory=threading.Event)


class WindowUI:
    """The HumanUI of the window: `ask` (the episode's thread) waits for the window (the main
    thread) to hand back the answers; PersonLeft once the window is closed."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: Asked | None = None
        self.left = threading.Event()
        self.finished = threading.Event()  # the episode's thread has ended

    def ask(self, form: Form) -> dict[str, str]:
        asked = Asked(form)
        with self._lock:
            self._pending = asked
        try:
            while not asked.answered.wait(0.05):
                if self.left.is_set():
                    raise PersonLeft("the window was closed")
        finally:
            with self._lock:
                self._pending = None
        return asked.values

    @property
    def pending(self) -> Asked | None:
        with self._lock:
            return self._pending

    def leave(self) -> None:
        self.left.set()


class FormState:
    """What the person has typed and chosen in a form, and which field has the focus."""

    def __init__(self, form: Form):
        self.form = form
        self.focus = 0
        self.typed = ""  # what was typed on a choice: "17" picks 17:00, "ta" talk
        self.values = {f.name: (f.default if f.kind == "text" else "") for f in form.fields}
        self.choice = {f.name: f.options.index(f.default) if f.default in f.options else 0
                       for f in form.fields if f.kind == "choice"}

    @property
    def field(self):
        return self.form.fields[self.focus]

    def move(self, step: int) -> None:
        self.focus = (self.focus + step) % len(self.form.fields)
        self.typed = ""

    def cycle(self, step: int, name: str | None = None) -> None:
        f = self.form.fields[self.focus] if name is None else \
            next(x for x in self.form.fields if x.name == name)
        if f.kind == "choice" and f.options:
            self.choice[f.name] = (self.choice[f.name] + step) % len(f.options)

    def pick(self, name: str, index: int) -> None:
        self.choice[name] = index
        self.focus = next(i for i, f in enumerate(self.form.fields) if f.name == name)
        self.typed = ""

    def type(self, text: str) -> None:
        f = self.field
        if not text.isprintable():
            return
        if f.kind == "text":
            self.values[f.name] = (self.values[f.name] + text)[:f.max_length]
            return
        # A choice: the option the typing names, as the terminal reads it ("17": 17:00, "ta":
        # talk); typing that begins no option starts again from this character.
        typed = self.typed + text
        if not any(o.lower().startswith(typed.lower()) for o in f.options) and \
                not typed.isdigit():
            typed = text
        self.typed = typed
        try:
            self.choice[f.name] = f.options.index(choose(f, typed))
        except ValueError:
            pass  # not one option yet: the typing goes on

    def backspace(self) -> None:
        f = self.field
        if f.kind == "text":
            self.values[f.name] = self.values[f.name][:-1]
        self.typed = self.typed[:-1]

    def clear(self) -> None:
        if self.field.kind == "text":
            self.values[self.field.name] = ""
        self.typed = ""

    def answers(self) -> dict[str, str]:
        given = dict(self.values)
        for f in self.form.fields:
            if f.kind == "choice" and f.options:
                given[f.name] = f.options[self.choice[f.name]]
        return given


class PersonWindow(Window):
    """The viewer's window with the person's forms over it."""

    def __init__(self, ui: WindowUI, replay: Replay, person: str, size: tuple[int, int]):
        super().__init__(replay, size, speed=64, follow=person, live=True)
        self.ui = ui
        self.person = person
        self.playback.playing = True  # the town plays on towards the next decision
        self.asked: Asked | None = None  # the decision being waited for
        self.decision_at: float | None = None  # when it is asked, in run seconds
        self.state: FormState | None = None  # the form open (the playback reached it)
        self.box: FormBox | None = None
        self._said_finished = False
        self._followed = False

    def poll(self) -> None:
        super().poll()
        town = self.town  # the resident is followed once it is on the map (and inspected)
        if not self._followed and town is not None and \
                self.person in self.subject.timeline.agents:
            town.follow(self.person)
            self._followed = True

    def run(self, frames: int | None = None) -> int:
        clock = pygame.time.Clock()
        while self.running and (frames is None or frames > 0):
            frames = None if frames is None else frames - 1
            wall = clock.tick(60) / 1000.0
            self.before_frame()
            for event in pygame.event.get():
                self.handle(event)
            self.poll()
            self.decide()
            self.playback.tick(wall)
            if self.renderer.note and time.monotonic() > self._note_until:
                self.renderer.note = ""
            self.draw()
            pygame.display.flip()
        return 0

    def before_frame(self) -> None:
        """A hook called once a frame before input is read (tests post their events here)."""

    def draw(self) -> None:
        town = self.town
        lifted = self.state is not None and town is not None and town.following == self.person
        if lifted:  # the resident above the form, not under it
            point = town.positions.point(self.person, self.playback.t)
            if point is not None:
                town.following = None
                form_height = self.box.rect.height if self.box else 380
                town.camera.cx = point[0]
                town.camera.cy = point[1] + (form_height / 2 + 10) / town.camera.scale
        self.renderer.draw(self.screen, self.playback)
        if lifted:
            town.following = self.person
        if self.state is not None:
            self.box = draw_form(self.screen, self.state, self.town.camera.viewport
                                 if self.town else self.screen.get_rect())
        if self.show_help:
            self.draw_help()

    def decide(self) -> None:
        """A decision asked: its moment is the run's last event (the simulation waits at it; a
        walk logged then may end later); the form opens when the playback reaches it."""
        asked = self.ui.pending
        if asked is not self.asked:
            self.asked, self.state, self.box = asked, None, None
            if asked is not None:
                self._refresh()
                times = self.subject.timeline.event_times
                self.decision_at = times[-1] if times else 0.0
        waiting = self.asked is not None and not self.asked.answered.is_set()
        if waiting and self.playback.t > (self.decision_at or 0):
            self.playback.seek(self.decision_at or 0)  # not past the moment being decided
        if waiting and self.state is None and self.playback.t >= (self.decision_at or 0):
            self.state = FormState(self.asked.form)
            self.playback.playing = False
            self.note(f"{self.person}: {self.asked.form.title}", 4)
        if self.ui.finished.is_set() and not self._said_finished:
            self._said_finished = True
            self._refresh()
            self.playback.live = False
            score = (self.subject.score or {}).get("score")
            result = self.subject.source.result
            status = result.status if result is not None else "stopped"
            said = "the run has finished" if status == "completed" else f"the run {status}"
            self.note(said + (f": score {score}" if score is not None else "")
                      + " · q closes", 3600)

    def _refresh(self) -> None:
        try:
            if self.subject.refresh():
                self.playback.extend(self.subject.end)
        except ReplayError as exc:
            self.note(str(exc), 10)

    def handle(self, event: pygame.event.Event) -> None:
        if self.state is None or event.type in (pygame.QUIT, pygame.VIDEORESIZE):
            super().handle(event)
            return
        state = self.state
        if event.type == pygame.KEYDOWN:
            k, shift = event.key, bool(event.mod & pygame.KMOD_SHIFT)
            if k in (pygame.K_RETURN, pygame.K_KP_ENTER):
                self.submit()
            elif k == pygame.K_TAB:
                state.move(-1 if shift else 1)
            elif k == pygame.K_DOWN:
                state.move(1)
            elif k == pygame.K_UP:
                state.move(-1)
            elif k in (pygame.K_LEFT, pygame.K_RIGHT):
                state.cycle(-1 if k == pygame.K_LEFT else 1)
            elif k == pygame.K_DELETE or (k == pygame.K_u and event.mod & pygame.KMOD_CTRL):
                state.clear()
            elif k == pygame.K_BACKSPACE:
                state.backspace()
            elif event.unicode:
                state.type(event.unicode)
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.box:
            hit = self.box.hit(event.pos)
            if hit is None:
                super().handle(event)  # the map and the panel still answer clicks
            elif hit[0] == "done":
                self.submit()
            elif hit[0] == "field":
                state.focus = hit[1]
            elif hit[0] == "option":
                state.pick(hit[1], hit[2])
            elif hit[0] == "cycle":
                state.pick(hit[1], state.choice[hit[1]])
                state.cycle(hit[2])
        elif event.type == pygame.MOUSEWHEEL:
            super().handle(event)

    def submit(self) -> None:
        asked, state = self.asked, self.state
        if asked is None or state is None:
            return
        asked.values = state.answers()
        self.state, self.box = None, None
        self.playback.playing = True
        asked.answered.set()


def run_person_window(ui: WindowUI, run_dir: Path, person: str, *,
                      size: tuple[int, int] = (1280, 800), window_class=PersonWindow) -> int:
    """The window for a person playing `person` in the run being written into `run_dir`, until
    they close it (or the episode ends before its header was written). Main thread only."""
    started = time.time()
    pygame.display.init()
    pygame.font.init()
    try:
        screen = pygame.display.set_mode(size, pygame.RESIZABLE)
        pygame.display.set_caption(f"sandbox · {person}")
        header = Path(run_dir) / "header.json"
        # The episode writes its header first (a run gone on from: again, so a newer one).
        while not (header.exists() and header.stat().st_mtime >= started - 1):
            if ui.finished.is_set():
                return 0
            for event in pygame.event.get():
                if event.type == pygame.QUIT:
                    return 0
            screen.fill((24, 26, 31))
            pygame.display.flip()
            time.sleep(0.02)
        replay = Replay(run_dir, follow=True)
        return window_class(ui, replay, person, size).run()
    finally:
        pygame.display.quit()
