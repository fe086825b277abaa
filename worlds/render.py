"""Draw a world as a PNG with pygame, headless: floors coloured by arena, walls, terrain,
furniture, and the names of sectors and arenas.

Colours come from the legend's optional `color`; otherwise each sector gets a soft colour of its
own (stable across runs, from the name) and its arenas vary its lightness.
"""

from __future__ import annotations

import colorsys
import hashlib
import os
from pathlib import Path

from .address import Address
from .world import World

TERRAIN = {
    "wall": (70, 66, 72), "grass": (168, 200, 140), "tree": (74, 128, 70),
    "water": (110, 160, 215), "flowers": (222, 150, 180), "hedge": (90, 140, 80),
    "fence": (150, 120, 90),
}
UNKNOWN_TERRAIN = (120, 120, 120)
INK = (30, 30, 36)


def _hue(name: str) -> float:
    return int(hashlib.sha1(name.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def _pygame():
    # Headless: no window, no audio device needed to draw into a surface and save it.
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    pygame.font.init()
    return pygame


def floor_colors(world: World) -> dict[Address, tuple[int, int, int]]:
    """The colour of each arena's floor."""
    given = world.arena_colours()
    colors = {}
    for sector in world.sectors():
        hue = _hue(sector.sector or "")
        arenas = world.arenas(sector)
        for i, arena in enumerate(arenas):
            light = 0.80 + 0.08 * (i % 3) / 2
            r, g, b = colorsys.hls_to_rgb(hue, light, 0.45)
            colors[arena] = given.get(arena, (int(r * 255), int(g * 255), int(b * 255)))
    return colors


def object_colors(names: list[str]) -> dict[str, tuple[int, int, int]]:
    """Evenly spread hues, alternating lightness, so neighbours in the key look different."""
    colors = {}
    for i, name in enumerate(sorted(names)):
        r, g, b = colorsys.hls_to_rgb(i / max(len(names), 1), 0.35 + 0.15 * (i % 2), 0.6)
        colors[name] = (int(r * 255), int(g * 255), int(b * 255))
    return colors


def render_png(world: World, out: Path | str, *, tile: int = 12, labels: bool = True) -> Path:
    """Draw `world` to `out` (PNG); `tile` pixels per tile. Returns the path written.

    Below the map, a key names the colour of each kind of furniture.
    """
    pg = _pygame()
    names = sorted({o.object or "" for o in world.objects()})
    per_row = max(1, world.width * tile // 150)
    key_height = (len(names) + per_row - 1) // per_row * 20 + 10 if labels else 0
    surface = pg.Surface((world.width * tile, world.height * tile + key_height))
    surface.fill((245, 243, 238))
    floors = floor_colors(world)
    furniture = object_colors(names)
    for y in range(world.height):
        for x in range(world.width):
            rect = pg.Rect(x * tile, y * tile, tile, tile)
            terrain = world.blocked.get((x, y))
            if terrain is None:
                pg.draw.rect(surface, floors[world.arena_at((x, y))], rect)
            elif terrain == "tree":
                pg.draw.rect(surface, TERRAIN["grass"], rect)
                pg.draw.circle(surface, TERRAIN["tree"], rect.center, tile // 2)
            else:
                pg.draw.rect(surface, TERRAIN.get(terrain, UNKNOWN_TERRAIN), rect)
    inset = max(1, tile // 6)
    for obj in world.objects():
        color = furniture[obj.object or ""]
        for x, y in world.tiles(obj):
            pg.draw.rect(surface, color, pg.Rect(x * tile + inset, y * tile + inset,
                                                 tile - 2 * inset, tile - 2 * inset),
                         border_radius=2)
    if labels:
        _labels(pg, surface, world, tile)
        font = pg.font.Font(None, 18)
        top = world.height * tile + 8
        for i, name in enumerate(names):
            x, y = (i % per_row) * 150 + 8, top + (i // per_row) * 20
            pg.draw.rect(surface, furniture[name], pg.Rect(x, y + 2, 10, 10),
                         border_radius=2)
            surface.blit(font.render(name, True, INK), (x + 14, y))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pg.image.save(surface, str(out))
    return out


def label_tile(tiles: list[tuple[int, int]]) -> tuple[int, int]:
    """The tile of a place farthest inside it (ties: nearest its middle), where a label
    covers least of its neighbours."""
    inside = set(tiles)
    depth = dict.fromkeys(tiles, 0)
    layer = [t for t in tiles if any(n not in inside for n in _around(t))]
    level, seen = 0, set(layer)
    while layer:  # peel the place from its edge inwards
        for t in layer:
            depth[t] = level
        level += 1
        layer = [n for t in layer for n in _around(t) if n in inside and n not in seen]
        seen.update(layer)
        layer = list(dict.fromkeys(layer))
    xs, ys = zip(*tiles, strict=True)
    mx, my = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    return max(tiles, key=lambda t: (depth[t], -abs(t[0] - mx) - abs(t[1] - my)))


def _around(tile: tuple[int, int]) -> list[tuple[int, int]]:
    x, y = tile
    return [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)]


def _labels(pg, surface, world: World, tile: int) -> None:
    small = pg.font.Font(None, max(12, int(tile * 1.1)))
    big = pg.font.Font(None, max(14, int(tile * 1.5)))

    def text(font, words: str, center: tuple[int, int], max_width: int) -> None:
        image = font.render(words, True, INK)
        if image.get_width() > max_width:
            return  # a label that does not fit would cover its neighbours
        box = image.get_rect(center=center).inflate(4, 2)
        backdrop = pg.Surface(box.size, pg.SRCALPHA)
        backdrop.fill((255, 255, 255, 185))
        surface.blit(backdrop, box.topleft)
        surface.blit(image, image.get_rect(center=center))

    for arena in world.arenas():
        tiles = world.tiles(arena)
        x, y = label_tile(tiles)
        xs = [t[0] for t in tiles if t[1] == y]
        text(small, arena.arena or "", (x * tile + tile // 2, y * tile + tile // 2),
             (max(xs) - min(xs) + 2) * tile)
    for sector in world.sectors():
        if len(world.arenas(sector)) < 2 and sector.sector != "Town Square":
            continue  # a one-arena sector: its arena label already names the place
        xs, ys = zip(*world.tiles(sector), strict=True)
        if max(xs) - min(xs) > world.width * 0.6:
            continue  # a network of streets: its arenas carry the names
        # On the sector's top wall (one row above its highest floor tile).
        center = ((min(xs) + max(xs) + 1) * tile // 2, min(ys) * tile - tile // 2)
        text(big, sector.sector or "", center, (max(xs) - min(xs) + 6) * tile)
