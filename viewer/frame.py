"""Drawing one whole frame: top bar, the run's view (town or conversation), inspection panel,
timeline. The window and the headless exporter both call `Renderer.draw`; a pair of runs side
by side (`viewer.beside.Beside`) is drawn by `draw.beside.BesideRenderer`, the same way."""

from __future__ import annotations

import pygame

from .beside import Beside
from .draw import theme
from .draw.beside import BesideRenderer
from .draw.hud import TimelineBar, draw_top_bar
from .draw.pane import Pane, make_view
from .playback import Playback
from .replay import Replay


def make_renderer(subject, size: tuple[int, int]):
    """The renderer of a Replay, or of a Beside pair (two panes on one timeline)."""
    if isinstance(subject, Beside):
        return BesideRenderer(subject, size)
    return Renderer(subject, size)


class Renderer:
    def __init__(self, replay: Replay, size: tuple[int, int]):
        self.replay = replay
        self.size = size
        self.timeline_bar = TimelineBar()
        self.note = ""  # a transient message for the top bar (e.g. "exported frame")
        self.still = False  # an exported frame: no play/pause and speed in the top bar
        self.view = make_view(replay, size)
        self.panes = [Pane(replay, self.view, pygame.Rect((0, 0), size))]
        self.active: int | None = None  # the pane keys and clicks act on (one pane: it)

    def follow(self, agent: str) -> None:
        self.panes[0].follow(agent)

    def draw(self, surface: pygame.Surface, playback: Playback) -> None:
        self.panes[0].rect = surface.get_rect()
        surface.fill(theme.BACKGROUND)
        self.view.draw(surface, playback.t)
        draw_top_bar(surface, self.replay, playback, self.note, still=self.still)
        self.timeline_bar.draw(surface, self.replay, playback)
