"""Map <-> screen coordinates: a centre (in tile units) and a scale (pixels per tile)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pygame

MIN_SCALE = 2
MAX_SCALE = 64


@dataclass
class Camera:
    viewport: pygame.Rect  # the part of the window the map is drawn in
    cx: float = 0.0  # tile units at the viewport's centre
    cy: float = 0.0
    scale: int = 8  # whole pixels per tile: tiles stay crisp and exactly aligned

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """Screen pixel of a map point (tile units; a tile's centre is at +0.5)."""
        # floor(v + 0.5), not round(): banker's rounding would shift every other tile edge
        return (math.floor(self.viewport.centerx + (x - self.cx) * self.scale + 0.5),
                math.floor(self.viewport.centery + (y - self.cy) * self.scale + 0.5))

    def to_map(self, sx: float, sy: float) -> tuple[float, float]:
        return (self.cx + (sx - self.viewport.centerx) / self.scale,
                self.cy + (sy - self.viewport.centery) / self.scale)

    def tile_rect(self, tile: tuple[int, int]) -> pygame.Rect:
        left, top = self.to_screen(tile[0], tile[1])
        return pygame.Rect(left, top, self.scale, self.scale)

    def fit(self, width: int, height: int) -> None:
        """Show the whole map, as large as fits."""
        self.scale = max(MIN_SCALE, min(self.viewport.width // max(width, 1),
                                        self.viewport.height // max(height, 1), MAX_SCALE))
        self.cx, self.cy = width / 2, height / 2

    def zoom(self, steps: int, around: tuple[int, int] | None = None) -> None:
        """Zoom in (steps > 0) or out, keeping the map point under `around` where it is."""
        anchor = around or self.viewport.center
        before = self.to_map(*anchor)
        scale = self.scale
        for _ in range(abs(steps)):
            scale = max(scale + 1, round(scale * 1.25)) if steps > 0 else \
                min(scale - 1, round(scale / 1.25))
        self.scale = max(MIN_SCALE, min(MAX_SCALE, scale))
        after = self.to_map(*anchor)
        self.cx += before[0] - after[0]
        self.cy += before[1] - after[1]

    def pan(self, dx_pixels: float, dy_pixels: float) -> None:
        self.cx -= dx_pixels / self.scale
        self.cy -= dy_pixels / self.scale

    def visible_tiles(self) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1) tile bounds of what the viewport shows (x1, y1 exclusive)."""
        x0, y0 = self.to_map(self.viewport.left, self.viewport.top)
        x1, y1 = self.to_map(self.viewport.right, self.viewport.bottom)
        return int(x0) - 1, int(y0) - 1, int(x1) + 2, int(y1) + 2
