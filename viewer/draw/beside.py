"""Two runs side by side (`viewer.beside.Beside`): a pane each, left and right, every pane the
run's own view (town or conversation) under a caption, then one timeline across the bottom for
both: the left run's ticks in its upper row, the right run's in the lower, the fork point and
the moment the two part marked and labelled.

A pane is drawn on a subsurface of the window, so each view lays itself out as in a window of
its own: the caption takes the view's top bar, the shared timeline covers its bottom bar.
"""

from __future__ import annotations

import pygame

from ..beside import Beside
from ..playback import Playback
from . import theme
from .hud import (
    MARGIN,
    TIMELINE_BAR,
    TOP_BAR,
    TimelineBar,
    bar_x,
    draw_cursor_and_ends,
    draw_note,
    draw_task_band,
    format_clock,
    play_state,
)
from .pane import Pane, make_view

TIMELINE = TIMELINE_BAR + 22  # the shared timeline: a row of marker labels above two tick rows
GAP = 4  # between the panes
PARTED = (90, 200, 250)  # the colour of "parted HH:MM" (the fork's own point: theme.WARNING)


def pane_rects(size: tuple[int, int]) -> tuple[pygame.Rect, pygame.Rect]:
    """Where the left and the right pane sit in a window of `size`: two equal halves (when the
    width is even) between the top bar and the shared timeline, `GAP` apart."""
    width, height = size
    pane_height = height - TOP_BAR - (TIMELINE - TIMELINE_BAR)
    half = width // 2
    left = pygame.Rect(0, TOP_BAR, half - GAP // 2, pane_height)
    right = pygame.Rect(half + GAP // 2, TOP_BAR, width - half - GAP // 2, pane_height)
    return left, right


class BesideRenderer:
    """Draws a `Beside` pair: the same interface as `frame.Renderer` (`panes`, `timeline_bar`,
    `note`, `active`, `follow`, `draw`)."""

    def __init__(self, pair: Beside, size: tuple[int, int]):
        self.pair = pair
        self.replay = pair.left  # the run whose clock the shared bars read
        self.size = size
        self.timeline_bar = BesideTimeline()
        self.note = ""
        self.still = False  # an exported frame: no play/pause and speed in the top bar
        self.active: int | None = None  # the pane last clicked: its caption is underlined
        self.panes = [Pane(replay, make_view(replay, rect.size), rect)
                      for replay, rect in zip(pair.replays, pane_rects(size), strict=True)]

    def follow(self, agent: str) -> None:
        """Follow `agent` in every pane whose run has it."""
        for pane in self.panes:
            pane.follow(agent)

    def draw(self, surface: pygame.Surface, playback: Playback) -> None:
        surface.fill(theme.BACKGROUND)
        width, height = surface.get_size()
        labels = self.pair.labels()
        rects = pane_rects((width, height))
        for index, (pane, rect, label) in enumerate(zip(self.panes, rects, labels, strict=True)):
            pane.rect = rect
            area = surface.subsurface(rect)
            pane.view.draw(area, playback.t)
            self._caption(area, pane, label, playback, active=index == self.active)
            draw_note(area, pane.replay)  # the run's first bad log line, if any
        pygame.draw.rect(surface, theme.PANEL_EDGE, (rects[0].right, TOP_BAR,
                                                     rects[1].left - rects[0].right,
                                                     rects[0].height))
        self._top_bar(surface, playback)
        if self.note:
            draw_note(surface.subsurface((0, 0, width, height - TIMELINE + TIMELINE_BAR)),
                      self.replay, self.note)
        self.timeline_bar.draw(surface, self.pair, playback)

    def _top_bar(self, surface: pygame.Surface, playback: Playback) -> None:
        """Across both panes: what the runs are, where they part, and the shared clock."""
        width = surface.get_width()
        pygame.draw.rect(surface, theme.PANEL, (0, 0, width, TOP_BAR))
        pygame.draw.line(surface, theme.PANEL_EDGE, (0, TOP_BAR - 1), (width, TOP_BAR - 1))
        right = theme.text(play_state(playback, self.still) +
                           format_clock(self.replay, playback.t), 16, theme.TEXT, bold=True)
        surface.blit(right, right.get_rect(midright=(width - MARGIN, TOP_BAR // 2)))
        heads = []
        for replay in self.pair.replays:
            head = f"{replay.header.scenario}  ·  seed {replay.header.seed}  ·  " + \
                ", ".join(sorted(set(replay.header.model_names().values())))
            if head not in heads:
                heads.append(head)
        parted = self.pair.parted
        parting = "identical so far" if parted is None else \
            f"parted {self.pair.clock(parted):%H:%M:%S} (the first event not the same in both)"
        title = "  |  ".join(heads) + "  ·  " + parting
        room = width - right.get_width() - 3 * MARGIN
        theme.blit_text(surface, theme.fit(title, 14, room), (MARGIN, TOP_BAR // 2), 14,
                        theme.TEXT_DIM, anchor="midleft")

    def _caption(self, area: pygame.Surface, pane: Pane, label: str, playback: Playback,
                 active: bool) -> None:
        """The pane's own bar: the run's name in bold, then what sets it apart."""
        width = area.get_width()
        pygame.draw.rect(area, theme.PANEL, (0, 0, width, TOP_BAR))
        edge = theme.ACCENT if active else theme.PANEL_EDGE
        pygame.draw.line(area, edge, (0, TOP_BAR - 1), (width, TOP_BAR - 1), 2 if active else 1)
        name, _, rest = label.partition("  ·  ")
        if pane.replay.live_possible:
            rest += "  [live]" if playback.live else "  [unfinished]"
        name_img = theme.text(theme.fit(name, 15, width // 2, bold=True), 15, theme.TEXT,
                              bold=True)
        area.blit(name_img, name_img.get_rect(midleft=(MARGIN, TOP_BAR // 2)))
        x = MARGIN + name_img.get_width() + 12
        if rest.strip():
            theme.blit_text(area, theme.fit(rest.strip(), 14, width - x - MARGIN),
                            (x, TOP_BAR // 2), 14, theme.TEXT_DIM, anchor="midleft")


class BesideTimeline(TimelineBar):
    """One timeline for both runs: the left run's events in the upper tick row, the right
    run's in the lower; the fork point(s) and the parting marked, labels that never overlap."""

    def __init__(self) -> None:
        super().__init__()
        self._rows = (TimelineBar(), TimelineBar())  # each keeps its own tick cache

    def rect(self, surface: pygame.Surface) -> pygame.Rect:
        width, height = surface.get_size()
        return pygame.Rect(MARGIN, height - TIMELINE + 26, width - 2 * MARGIN, 20)

    def marks(self, pair: Beside) -> list[tuple[float, str, tuple[int, int, int]]]:
        """(time, label, colour) of every marker: the fork point(s), then the parting."""
        out = [(at, label, theme.WARNING) for at, label in pair.fork_points()]
        if pair.parted is not None:
            out.append((pair.parted, f"parted {pair.clock(pair.parted):%H:%M}", PARTED))
        return out

    def draw(self, surface: pygame.Surface, pair: Beside,  # type: ignore[override]
             playback: Playback) -> None:
        width, height = surface.get_size()
        top = height - TIMELINE
        pygame.draw.rect(surface, theme.PANEL, (0, top, width, TIMELINE))
        pygame.draw.line(surface, theme.PANEL_EDGE, (0, top), (width, top))
        bar = self.rect(surface)
        pygame.draw.rect(surface, theme.BACKGROUND, bar, border_radius=3)
        draw_task_band(surface, bar, pair.left.task_window(), playback)
        row = (bar.height - 2) // 2
        for i, (replay, strip) in enumerate(zip(pair.replays, self._rows, strict=True)):
            surface.blit(strip.tick_strip(replay, playback, (bar.width, row)),
                         (bar.left, bar.top + i * (row + 2)))
        pygame.draw.line(surface, theme.PANEL, (bar.left, bar.top + row),
                         (bar.right - 1, bar.top + row))  # between the rows
        labels: list[tuple[int, str, tuple[int, int, int]]] = []
        for at, label, colour in self.marks(pair):
            if playback.start <= at <= playback.end:
                x = bar_x(bar, at, playback)
                pygame.draw.line(surface, colour, (x, bar.top - 4), (x, bar.bottom + 3), 2)
                labels.append((x, label, colour))
        if pair.parted is None:
            labels.append((labels[-1][0] if labels else bar.left, "identical so far",
                           theme.TEXT_DIM))
        self._labels(surface, bar, labels)
        draw_cursor_and_ends(surface, bar, pair, playback)

    def _labels(self, surface: pygame.Surface, bar: pygame.Rect,
                labels: list[tuple[int, str, tuple[int, int, int]]]) -> None:
        """Each label just right of its marker, pushed right past the one before; one that
        would run off the bar goes left of its marker instead."""
        taken = bar.left - 8
        for x, text, colour in sorted(labels, key=lambda item: item[0]):
            img = theme.text(text, 11, colour, bold=True)
            left = max(x + 4, taken + 8)
            if left + img.get_width() > bar.right:
                left = max(bar.left, min(x - 4, bar.right) - img.get_width())
            surface.blit(img, img.get_rect(bottomleft=(left, bar.top - 5)))
            taken = left + img.get_width()
