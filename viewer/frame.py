"""Drawing one whole frame: top bar, the run's view (town or conversation), inspection panel,
timeline. The window and the headless exporter both call `Renderer.draw`; a pair of runs side
by side (`viewer.beside.Beside`) is drawn by `draw.beside.BesideRenderer`, the same way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pygame

from .draw import theme
from .draw.conversation import ConversationView
from .draw.hud import TimelineBar, draw_top_bar
from .playback import Playback
from .replay import Replay


@dataclass
class Pane:
    """One run's view and where it sits in the window (all of it, or one side)."""

    replay: Replay
    view: Any  # a TownView or a ConversationView
    rect: pygame.Rect

    @property
    def town(self):
        """The town view, None for a conversation."""
        return self.view if self.replay.is_town else None

    def local(self, pos: tuple[int, int]) -> tuple[int, int]:
        """A window position in the pane's own coordinates."""
        return pos[0] - self.rect.x, pos[1] - self.rect.y

    def follow(self, agent: str) -> None:
        if self.town is not None and agent in self.replay.timeline.agents:
            self.town.follow(agent)


def make_view(replay: Replay, size: tuple[int, int]):
    if replay.is_town:
        from .draw.town import TownView

        return TownView(replay, size)
    return ConversationView(replay)


def make_renderer(subject, size: tuple[int, int]):
    """The renderer of a Replay, or of a Beside pair (two panes on one timeline)."""
    from .beside import Beside

    if isinstance(subject, Beside):
        from .draw.beside import BesideRenderer

        return BesideRenderer(subject, size)
    return Renderer(subject, size)


class Renderer:
    def __init__(self, replay: Replay, size: tuple[int, int]):
        self.replay = replay
        self.size = size
        self.timeline_bar = TimelineBar()
        self.note = ""  # a transient message for the top bar (e.g. "exported frame")
        self.view = make_view(replay, size)
        self.panes = [Pane(replay, self.view, pygame.Rect((0, 0), size))]
        self.active: int | None = None  # the pane keys and clicks act on (one pane: it)

    def follow(self, agent: str) -> None:
        self.panes[0].follow(agent)

    def draw(self, surface: pygame.Surface, playback: Playback) -> None:
        self.panes[0].rect = surface.get_rect()
        surface.fill(theme.BACKGROUND)
        self.view.draw(surface, playback.t)
        draw_top_bar(surface, self.replay, playback, self.note)
        self.timeline_bar.draw(surface, self.replay, playback)
