"""A pane: one run's view (town or conversation) and where it sits in the window, all of it or
one side. `frame.Renderer` draws one pane; `beside.BesideRenderer` two."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pygame

from ..replay import Replay
from .conversation import ConversationView


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
    """The run's own view: the town when it walks on a map, else the conversation."""
    if replay.is_town:
        from .town import TownView

        return TownView(replay, size)
    return ConversationView(replay)
