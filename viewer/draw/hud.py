"""What every view shares: the top bar (run, clock, speed) and the timeline bar at the bottom."""

from __future__ import annotations

import pygame

from ..playback import Playback
from ..replay import Replay
from . import theme

TOP_BAR = 34
TIMELINE_BAR = 46
MARGIN = 14

# Tick colours on the timeline, by what the event is about.
_TICK = {"utterance": (255, 196, 64), "conversation_started": (255, 150, 60),
         "move": (90, 140, 200), "walk_failed": theme.WARNING}
_TICK_OTHER = (150, 154, 166)


def format_clock(replay: Replay, t: float) -> str:
    return replay.clock(t).strftime("%a %Y-%m-%d %H:%M:%S")


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def play_state(playback: Playback, still: bool) -> str:
    """The top bar's "▶ 64x" / "❚❚ 1x" before the clock; nothing on a still (an exported
    frame plays at no speed and is not paused)."""
    if still:
        return ""
    return f"{'▶' if playback.playing else '❚❚'} {playback.speed:g}x   "


def draw_top_bar(surface: pygame.Surface, replay: Replay, playback: Playback,
                 note: str = "", still: bool = False) -> None:
    width = surface.get_width()
    pygame.draw.rect(surface, theme.PANEL, (0, 0, width, TOP_BAR))
    pygame.draw.line(surface, theme.PANEL_EDGE, (0, TOP_BAR - 1), (width, TOP_BAR - 1))
    header = replay.header
    models = sorted(set(header.model_names().values()))  # "alias (model id)"
    title = f"{replay.dir.name}  ·  {header.scenario}  ·  seed {header.seed}  ·  " + \
        ", ".join(models)
    forks = replay.fork_points()
    if forks:
        title += f"  ·  {forks[-1][1]}"
    clock = format_clock(replay, playback.t)
    right = play_state(playback, still) + clock
    right_img = theme.text(right, 16, theme.TEXT, bold=True)
    surface.blit(right_img, right_img.get_rect(midright=(width - MARGIN, TOP_BAR // 2)))
    room = width - right_img.get_width() - 3 * MARGIN
    status = ""
    if replay.live_possible:
        status = "  [live]" if playback.live else "  [unfinished]"
    theme.blit_text(surface, theme.fit(title + status, 14, room), (MARGIN, TOP_BAR // 2), 14,
                    theme.TEXT_DIM, anchor="midleft")
    draw_note(surface, replay, note)


def draw_note(surface: pygame.Surface, replay: Replay, note: str = "") -> None:
    """A transient `note`, else the run's first log problem, in a box just above the timeline:
    clear of the clock, the labels and the panel's header."""
    warning = replay.problem_summary()
    if warning or note:
        message = note or f"log problem: {warning}"
        colour = theme.ACCENT if note else theme.WARNING
        width = surface.get_width()
        img = theme.text(theme.fit(message, 13, width - 2 * MARGIN), 13, theme.TEXT_DARK)
        bottom = surface.get_height() - TIMELINE_BAR - 8
        box = img.get_rect(bottomleft=(MARGIN + 6, bottom - 3)).inflate(12, 6)
        pygame.draw.rect(surface, colour, box, border_radius=4)
        surface.blit(img, img.get_rect(center=box.center))


class TimelineBar:
    """The scrub bar: event ticks, the cursor, start and end. Ticks are drawn once per size
    and event count (a day's log has tens of thousands)."""

    def __init__(self) -> None:
        self._cache_key: tuple | None = None
        self._ticks: pygame.Surface | None = None

    def rect(self, surface: pygame.Surface) -> pygame.Rect:
        width, height = surface.get_size()
        return pygame.Rect(MARGIN, height - TIMELINE_BAR + 10, width - 2 * MARGIN, 16)

    def time_at(self, surface: pygame.Surface, x: int, playback: Playback) -> float:
        bar = self.rect(surface)
        span = max(playback.end - playback.start, 1e-9)
        return playback.start + min(max((x - bar.left) / bar.width, 0.0), 1.0) * span

    def draw(self, surface: pygame.Surface, replay: Replay, playback: Playback) -> None:
        width, height = surface.get_size()
        pygame.draw.rect(surface, theme.PANEL, (0, height - TIMELINE_BAR, width, TIMELINE_BAR))
        pygame.draw.line(surface, theme.PANEL_EDGE, (0, height - TIMELINE_BAR),
                         (width, height - TIMELINE_BAR))
        bar = self.rect(surface)
        pygame.draw.rect(surface, theme.BACKGROUND, bar, border_radius=3)
        draw_task_band(surface, bar, replay.task_window(), playback)
        surface.blit(self.tick_strip(replay, playback, bar.size), bar.topleft)
        for at, _ in replay.fork_points():  # where the run left its parent
            if playback.start <= at <= playback.end:
                fx = bar_x(bar, at, playback)
                pygame.draw.line(surface, theme.WARNING, (fx, bar.top - 4), (fx, bar.bottom + 3),
                                 2)
                theme.blit_text(surface, "fork", (fx + 3, bar.top - 4), 10, theme.TEXT,
                                anchor="bottomleft")
        draw_cursor_and_ends(surface, bar, replay, playback)

    def tick_strip(self, replay: Replay, playback: Playback,
                    size: tuple[int, int]) -> pygame.Surface:
        events = replay.timeline.events
        key = (size, len(events), playback.start, playback.end)
        if key != self._cache_key or self._ticks is None:
            strip = pygame.Surface(size, pygame.SRCALPHA)
            span = max(playback.end - playback.start, 1e-9)
            w, h = size
            drawn: dict[int, int] = {}  # column -> best priority drawn there
            for event in events.items:
                colour = _TICK.get(event.kind, _TICK_OTHER)
                priority = 2 if event.kind == "utterance" else 1 if event.kind in _TICK else 0
                col = int((event.t - playback.start) / span * (w - 1))
                if drawn.get(col, -1) >= priority:
                    continue
                drawn[col] = priority
                top = min(2, h // 6) if priority == 2 else h // 3  # 2 and 5 on the 16 px bar
                pygame.draw.line(strip, colour, (col, top), (col, h - top))
            self._ticks, self._cache_key = strip, key
        return self._ticks


def bar_x(bar: pygame.Rect, t: float, playback: Playback) -> int:
    """The x of time `t` on the timeline `bar`."""
    span = max(playback.end - playback.start, 1e-9)
    return bar.left + int((t - playback.start) / span * bar.width)


def draw_task_band(surface: pygame.Surface, bar: pygame.Rect,
                   window: tuple[float, float] | None, playback: Playback) -> None:
    """The STSS task's scoring window on the timeline, to scrub straight to it."""
    if window is None:
        return
    left = bar_x(bar, max(window[0], playback.start), playback)
    right = bar_x(bar, min(window[1], playback.end), playback)
    if right >= left and left <= bar.right:
        pygame.draw.rect(surface, (70, 110, 70), (left, bar.top - 3, max(right - left, 3),
                                                  bar.height + 6))
        theme.blit_text(surface, "task", (left + 2, bar.top - 4), 10, theme.TEXT,
                        anchor="bottomleft")


def draw_cursor_and_ends(surface: pygame.Surface, bar: pygame.Rect, replay,
                         playback: Playback) -> None:
    """The cursor on the timeline, and the start, end and elapsed time under it (`replay`:
    anything with `clock(t)`)."""
    x = bar_x(bar, playback.t, playback)
    pygame.draw.rect(surface, theme.ACCENT, (x - 2, bar.top - 4, 4, bar.height + 8))
    label_y = bar.bottom + 8
    theme.blit_text(surface, format_clock(replay, playback.start)[4:-3], (bar.left, label_y),
                    11, theme.TEXT_DIM, anchor="midleft")
    theme.blit_text(surface, format_clock(replay, playback.end)[4:-3], (bar.right, label_y),
                    11, theme.TEXT_DIM, anchor="midright")
    theme.blit_text(surface, f"{format_duration(playback.t - playback.start)} / "
                             f"{format_duration(playback.end - playback.start)}",
                    (bar.centerx, label_y), 11, theme.TEXT_DIM, anchor="center")
