"""Drawing one whole frame: top bar, the run's view (town or conversation), inspection panel,
timeline. The window and the headless exporter both call `Renderer.draw`."""

from __future__ import annotations

import pygame

from .draw import theme
from .draw.conversation import ConversationView
from .draw.hud import TimelineBar, draw_top_bar
from .playback import Playback
from .replay import Replay


class Renderer:
    def __init__(self, replay: Replay, size: tuple[int, int]):
        self.replay = replay
        self.size = size
        self.timeline_bar = TimelineBar()
        self.note = ""  # a transient message for the top bar (e.g. "exported frame")
        if replay.is_town:
            from .draw.town import TownView

            self.view = TownView(replay, size)
        else:
            self.view = ConversationView(replay)

    def draw(self, surface: pygame.Surface, playback: Playback) -> None:
        surface.fill(theme.BACKGROUND)
        self.view.draw(surface, playback.t)
        draw_top_bar(surface, self.replay, playback, self.note)
        self.timeline_bar.draw(surface, self.replay, playback)
