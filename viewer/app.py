"""The interactive window: the event loop that turns keys and clicks into playback and view
changes, and polls a run that is still being written. It shows one run, or two side by side
(`viewer.beside.Beside`) on one clock: then keys that move time act on both, and a click, the
view keys and the wheel on the pane they happen in."""

from __future__ import annotations

import os
import sys
import time

import pygame

from .beside import Beside
from .draw import theme
from .draw.hud import TOP_BAR
from .draw.pane import Pane
from .frame import make_renderer
from .playback import Playback
from .replay import Replay
from .source import ReplayError

POLL_SECONDS = 0.5  # how often a live run's files are checked for new events
FPS = 60

HELP = [
    ("space", "play / pause"),
    ("+ / -", "faster / slower (1x .. 4096x simulated seconds per second)"),
    ("→ / ←", "next / previous event"),
    ("shift + → / ←", "next / previous event of the inspected agent"),
    ("page down / up", "10 minutes forward / back"),
    ("home / end", "start / end of the run (end: follow a live run)"),
    ("t", "jump to the task's window (STSS runs)"),
    ("click timeline", "jump; drag to scrub"),
    ("click agent", "inspect it (tab: next agent, esc: close)"),
    ("f", "follow the inspected agent"),
    ("wheel, [ ]", "zoom (over the panel: scroll it)"),
    ("drag map, w a s d", "pan;  0: whole map"),
    ("p", "save this frame as PNG in the run directory"),
    ("h", "this help"),
    ("q", "quit"),
]


class Window:
    def __init__(self, subject: Replay | Beside, size: tuple[int, int], *,
                 at: float | None = None, speed: float | None = None, follow: str | None = None,
                 live: bool = False):
        self.subject = subject
        self.screen = pygame.display.set_mode(size, pygame.RESIZABLE)
        self.renderer = make_renderer(subject, size)
        self.replay = self.renderer.replay  # the run (of two: the left one, whose clock is read)
        names = " | ".join(pane.replay.dir.name for pane in self.renderer.panes)
        pygame.display.set_caption(f"sandbox replay · {names}")
        self.active = 0  # the pane clicked last: view keys act on it
        self.playback = Playback(start=subject.start, end=subject.end,
                                 speed=speed or (64 if subject.is_town else 1), live=live)
        self.playback.seek(subject.start if at is None else at)
        if live and at is None:
            self.playback.seek(subject.end)  # a live run opens at its newest moment
        if follow:
            self.renderer.follow(follow)
        self.show_help = False
        self.running = True
        self._drag: str | None = None  # "timeline" or "map"
        self._last_poll = 0.0
        self._note_until = 0.0

    @property
    def pane(self) -> Pane:
        """The pane keys act on: the one clicked last (the only one, for one run)."""
        return self.renderer.panes[self.active]

    @property
    def town(self):
        return self.pane.town

    def pane_at(self, pos: tuple[int, int]) -> int | None:
        return next((i for i, pane in enumerate(self.renderer.panes)
                     if pane.rect.collidepoint(pos)), None)

    def note(self, message: str, seconds: float = 3.0) -> None:
        self.renderer.note = message
        self._note_until = time.monotonic() + seconds

    def run(self, frames: int | None = None) -> int:
        """Loop until the user quits (or for `frames` frames: tests drive it that way)."""
        clock = pygame.time.Clock()
        while self.running and (frames is None or frames > 0):
            frames = None if frames is None else frames - 1
            wall = clock.tick(FPS) / 1000.0
            for event in pygame.event.get():
                self.handle(event)
            self.poll()
            self.playback.tick(wall)
            if self.renderer.note and time.monotonic() > self._note_until:
                self.renderer.note = ""
            self.renderer.draw(self.screen, self.playback)
            if self.show_help:
                self.draw_help()
            pygame.display.flip()
        return 0

    def poll(self) -> None:
        """Pick up events a live run appended."""
        if not self.playback.live or time.monotonic() - self._last_poll < POLL_SECONDS:
            return
        self._last_poll = time.monotonic()
        try:
            arrived = self.subject.refresh()
        except ReplayError as exc:
            self.note(str(exc), 10)
            self.playback.live = False
            return
        if arrived:
            self.playback.extend(self.subject.end)
        if all(pane.replay.source.finished for pane in self.renderer.panes):
            self.playback.live = False
            self.note("the run has finished")

    # -- input --------------------------------------------------------------------------------
    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type == pygame.VIDEORESIZE:
            size = (max(event.w, 640), max(event.h, 400))
            self.screen = pygame.display.set_mode(size, pygame.RESIZABLE)
        elif event.type == pygame.KEYDOWN:
            self.key(event)
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.click(event.pos)
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1:
            self._drag = None
        elif event.type == pygame.MOUSEMOTION and self._drag:
            if self._drag == "timeline":
                self.playback.seek(self.renderer.timeline_bar.time_at(
                    self.screen, event.pos[0], self.playback))
            elif self._drag == "map" and self.town:
                self.town.following = None
                self.town.camera.pan(*event.rel)
        elif event.type == pygame.MOUSEWHEEL:
            self.wheel(event.y)

    def key(self, event: pygame.event.Event) -> None:
        k, shift = event.key, bool(event.mod & pygame.KMOD_SHIFT)
        pb, town = self.playback, self.town
        if self.show_help and k not in (pygame.K_q,):
            self.show_help = False
            return
        if k in (pygame.K_q,):
            self.running = False
        elif k == pygame.K_ESCAPE:
            if town and town.selected:
                town.select(None)
            else:
                self.running = False
        elif k == pygame.K_SPACE:
            pb.toggle()
        elif k in (pygame.K_PLUS, pygame.K_EQUALS, pygame.K_KP_PLUS, pygame.K_UP):
            pb.faster()
        elif k in (pygame.K_MINUS, pygame.K_KP_MINUS, pygame.K_DOWN):
            pb.slower()
        elif k in (pygame.K_RIGHT, pygame.K_LEFT):
            target = self.step(pb.t, forward=k == pygame.K_RIGHT,
                               agent=town.selected if (town and shift) else None)
            if target is not None:
                pb.playing = False
                pb.seek(target)
        elif k in (pygame.K_PAGEDOWN, pygame.K_PAGEUP):
            pb.seek(pb.t + (600 if k == pygame.K_PAGEDOWN else -600))
        elif k == pygame.K_HOME:
            pb.seek(pb.start)
        elif k == pygame.K_END:
            pb.seek(pb.end)
        elif k == pygame.K_t:
            window = self.pane.replay.task_window()
            if window is None:
                self.note("this run has no task window")
            else:
                pb.playing = False
                pb.seek(window[0])
        elif k == pygame.K_h or event.unicode == "?":
            self.show_help = True
        elif k == pygame.K_p:
            self.save_frame()
        elif town:
            self.town_key(k, shift)

    def step(self, t: float, forward: bool, agent: str | None = None) -> float | None:
        """The next (previous) event time after `t` in either run; of `agent`, when given, in
        the pane keys act on."""
        panes = [self.pane] if agent else self.renderer.panes
        found = [(pane.replay.timeline.next_event_time if forward else
                  pane.replay.timeline.previous_event_time)(t, agent) for pane in panes]
        found = [f for f in found if f is not None]
        return (min if forward else max)(found) if found else None

    def town_key(self, k: int, shift: bool) -> None:
        town = self.town
        pan = 60
        if k == pygame.K_f and town.selected:
            town.follow(None if town.following else town.selected)
        elif k == pygame.K_TAB:
            names = list(self.pane.replay.timeline.agents)
            if names:
                i = names.index(town.selected) if town.selected in names else -1
                town.select(names[(i + (-1 if shift else 1)) % len(names)])
                if town.following:
                    town.follow(town.selected)
        elif k == pygame.K_RIGHTBRACKET:
            town.camera.zoom(1)
        elif k == pygame.K_LEFTBRACKET:
            town.camera.zoom(-1)
        elif k == pygame.K_0:
            town.fit()
        elif k in (pygame.K_w, pygame.K_a, pygame.K_s, pygame.K_d):
            town.following = None
            dx = {pygame.K_a: pan, pygame.K_d: -pan}.get(k, 0)
            dy = {pygame.K_w: pan, pygame.K_s: -pan}.get(k, 0)
            town.camera.pan(dx, dy)

    def click(self, pos: tuple[int, int]) -> None:
        bar = self.renderer.timeline_bar.rect(self.screen).inflate(0, 16)
        if bar.collidepoint(pos):
            self._drag = "timeline"
            self.playback.seek(self.renderer.timeline_bar.time_at(self.screen, pos[0],
                                                                  self.playback))
            return
        index = self.pane_at(pos)
        if index is None:
            return
        self.active = index
        if len(self.renderer.panes) > 1:
            self.renderer.active = index
        pos = self.pane.local(pos)
        town = self.town
        if town and town.camera.viewport.collidepoint(pos) and pos[1] > TOP_BAR:
            agent = town.agent_at(pos, self.playback.t)
            if agent:
                town.select(agent)
                if town.following and town.following != agent:
                    town.follow(agent)
            else:
                self._drag = "map"

    def wheel(self, steps: int) -> None:
        pos = pygame.mouse.get_pos()
        index = self.pane_at(pos)
        pane = self.pane if index is None else self.renderer.panes[index]
        pos = pane.local(pos)
        town = pane.town
        if town and town.selected and pos[0] >= town.camera.viewport.right:
            town.panel.scroll_by(-steps * 40, town.camera.viewport.height)
        elif town:
            town.camera.zoom(steps, around=pos)
        else:
            pane.view.scroll = max(0, pane.view.scroll + steps * 40)

    def save_frame(self) -> None:
        folder = self.pane.replay.dir / "frames"
        folder.mkdir(exist_ok=True)
        path = folder / f"frame_{self.replay.clock(self.playback.t):%Y-%m-%d_%H-%M-%S}.png"
        self.renderer.draw(self.screen, self.playback)
        pygame.image.save(self.screen, str(path))
        self.note(f"saved {path}")

    def draw_help(self) -> None:
        width, height = self.screen.get_size()
        shade = pygame.Surface((width, height), pygame.SRCALPHA)
        shade.fill((0, 0, 0, 170))
        self.screen.blit(shade, (0, 0))
        box = pygame.Rect(0, 0, 620, 40 + 24 * len(HELP))
        box.center = (width // 2, height // 2)
        pygame.draw.rect(self.screen, theme.PANEL, box, border_radius=8)
        pygame.draw.rect(self.screen, theme.PANEL_EDGE, box, 1, border_radius=8)
        y = box.top + 20
        for keys, what in HELP:
            theme.blit_text(self.screen, keys, (box.left + 20, y), 14, theme.ACCENT, True)
            theme.blit_text(self.screen, what, (box.left + 200, y), 14)
            y += 24


def run_window(replay: Replay | Beside, *, size: tuple[int, int] = (1280, 800),
               at: float | None = None, speed: float | None = None, follow: str | None = None,
               live: bool = False) -> int:
    """Open the viewer window on `replay` (or a pair side by side) until the user quits;
    ReplayError when there is no display to open it on."""
    missing = no_display()
    if missing:
        raise ReplayError(missing)
    pygame.display.init()
    pygame.font.init()
    try:
        return Window(replay, size, at=at, speed=speed, follow=follow, live=live).run()
    except pygame.error as exc:
        if "video" in str(exc).lower() or "display" in str(exc).lower():
            raise ReplayError(f"cannot open a window ({exc}); on a machine without a screen use "
                              "--export DIR (with SDL_VIDEODRIVER=dummy)") from exc
        raise
    finally:
        pygame.display.quit()


def no_display(environ=os.environ, platform: str = sys.platform) -> str:
    """Why no window can open here ("" when one may): on Linux and the BSDs, neither
    $DISPLAY nor $WAYLAND_DISPLAY set and no SDL_VIDEODRIVER chosen. Asked first, because
    SDL then prints an error of its own and may wait forever for a display that never comes."""
    if platform in ("darwin", "win32", "cygwin") or environ.get("SDL_VIDEODRIVER"):
        return ""
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return ""
    return ("no display to open a window on ($DISPLAY and $WAYLAND_DISPLAY are not set): write "
            "PNG frames with --export DIR or an animated GIF with --gif FILE")
