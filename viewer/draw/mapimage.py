"""The town map as pixels: tiles coloured by sector and arena, walls, objects, arena borders,
and the sector and arena labels laid out so they do not overlap."""

from __future__ import annotations

import hashlib

import pygame

from ..worldmap import WorldMap
from . import theme
from .camera import Camera

FULL_MAP_PIXELS = 12_000_000  # above this a whole-map image costs too much memory: scale a crop

_TERRAIN = {"wall": theme.WALL, "water": (70, 118, 178), "tree": (52, 96, 56),
            "trees": (52, 96, 56), "forest": (46, 86, 50), "fence": (122, 102, 82),
            "hedge": (78, 120, 70), "rock": (104, 100, 96), "grass": (112, 150, 92),
            "flowers": (196, 150, 178)}


def arena_colour(world: WorldMap, arena: str) -> tuple[int, int, int]:
    """The colour the map file gives; else arenas of a sector share its hue and differ in
    lightness, so sectors read as blocks."""
    if arena in world.arena_colours:
        return world.arena_colours[arena]
    sector = world.sector_of(arena)
    hue_bytes = hashlib.sha1(sector.encode("utf-8")).digest()
    shade_bytes = hashlib.sha1(arena.encode("utf-8")).digest()
    colour = pygame.Color(0)
    colour.hsla = (hue_bytes[0] / 255 * 360, 38 + hue_bytes[1] % 22,
                   64 + shade_bytes[0] % 18, 100)
    return (colour.r, colour.g, colour.b)


def terrain_colour(world: WorldMap, name: str) -> tuple[int, int, int]:
    if name in world.terrain_colours:
        return world.terrain_colours[name]
    return _TERRAIN.get(name.lower(), theme.shade(theme.pastel(name, 0.4), 0.9))


class MapImage:
    """Paints the map once per zoom level and blits it under the camera."""

    def __init__(self, world: WorldMap):
        self.world = world
        self._cache: dict[int, pygame.Surface] = {}
        self.colours = {a: arena_colour(world, a) for a in world.arenas}

    def largest_full_scale(self) -> int:
        area = max(self.world.width * self.world.height, 1)
        return max(1, min(16, int((FULL_MAP_PIXELS / area) ** 0.5)))

    def image(self, scale: int) -> pygame.Surface:
        if scale not in self._cache:
            if len(self._cache) > 3:  # keep a few zoom levels, not all of them
                self._cache.pop(next(iter(self._cache)))
            self._cache[scale] = self._paint(scale)
        return self._cache[scale]

    def blit(self, surface: pygame.Surface, camera: Camera) -> None:
        w, h, s = self.world.width, self.world.height, camera.scale
        if w * h * s * s <= FULL_MAP_PIXELS:
            surface.blit(self.image(s), camera.to_screen(0, 0))
            return
        # Deep zoom: scale up the visible crop of a smaller image.
        base_scale = self.largest_full_scale()
        base = self.image(base_scale)
        x0, y0, x1, y1 = camera.visible_tiles()
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return
        crop = base.subsurface((x0 * base_scale, y0 * base_scale,
                                (x1 - x0) * base_scale, (y1 - y0) * base_scale))
        surface.blit(pygame.transform.scale(crop, ((x1 - x0) * s, (y1 - y0) * s)),
                     camera.to_screen(x0, y0))

    def _paint(self, s: int) -> pygame.Surface:
        world = self.world
        image = pygame.Surface((world.width * s, world.height * s))
        image.fill(theme.VOID)
        for (x, y), terrain in world.blocked.items():
            image.fill(terrain_colour(world, terrain), (x * s, y * s, s, s))
        for (x, y), arena in world.arena_of.items():
            image.fill(self.colours[arena], (x * s, y * s, s, s))
        inset = max(1, s // 6)
        for x, y in world.object_of:
            base = self.colours[world.arena_of[(x, y)]]
            image.fill(theme.shade(base, 0.78), (x * s, y * s, s, s))
            if s >= 6:
                pygame.draw.rect(image, theme.shade(base, 0.55),
                                 (x * s + inset, y * s + inset, s - 2 * inset, s - 2 * inset), 1)
        if s >= 4:
            self._paint_borders(image, s)
        return image

    def _paint_borders(self, image: pygame.Surface, s: int) -> None:
        """A dark line where two arenas meet (doors between rooms stay visible as gaps in
        walls, arena changes on open floor as lines)."""
        arena_of = self.world.arena_of
        edge = (40, 40, 46)
        for (x, y), arena in arena_of.items():
            right = arena_of.get((x + 1, y))
            if right is not None and right != arena:
                image.fill(edge, ((x + 1) * s - 1, y * s, 1 if s < 12 else 2, s))
            below = arena_of.get((x, y + 1))
            if below is not None and below != arena:
                image.fill(edge, (x * s, (y + 1) * s - 1, s, 1 if s < 12 else 2))


class Labels:
    """Sector and arena names on the map, largest places first, skipping any that would
    overlap a label already placed."""

    def __init__(self, world: WorldMap):
        self.world = world
        self._images: dict[tuple[str, int, bool], pygame.Surface] = {}
        # Bigger places claim their spot first.
        self.sectors = sorted(world.sectors.values(), key=lambda p: -len(p.tiles))
        self.arenas = sorted(world.arenas.values(), key=lambda p: -len(p.tiles))
        self.objects = list(world.objects.values())
        self._tops: dict[str, tuple[float, float]] = {}  # the map never changes: once per place

    def _top_of(self, place) -> tuple[float, float]:
        """Map point centred over the place's top row, on the wall line above it."""
        if place.address not in self._tops:
            xs = [x for x, _ in place.tiles]
            self._tops[place.address] = ((min(xs) + max(xs) + 1) / 2,
                                         min(y for _, y in place.tiles))
        return self._tops[place.address]

    def _label(self, message: str, size: int, bold: bool) -> pygame.Surface:
        key = (message, size, bold)
        if key not in self._images:
            img = theme.text(message, size, theme.TEXT if bold else theme.TEXT_DARK, bold)
            box = pygame.Surface((img.get_width() + 8, img.get_height() + 2), pygame.SRCALPHA)
            box.fill((20, 22, 28, 200) if bold else (255, 255, 255, 170))
            box.blit(img, (4, 1))
            self._images[key] = box
        return self._images[key]

    def draw(self, surface: pygame.Surface, camera: Camera, taken: list[pygame.Rect]) -> None:
        s = camera.scale
        clip = camera.viewport
        sector_size = 13 if s < 10 else 15
        for place in self.sectors:
            # On the sector's top wall first (as the world's own render does), so the middle
            # stays free for its arenas' names; in the middle when the top is taken.
            if not self._place(surface, camera, place, place.name, sector_size, True, taken,
                               clip, top=True):
                self._place(surface, camera, place, place.name, sector_size, True, taken, clip)
        if s >= 5:
            for place in self.arenas:
                sector_name = self.world.sectors[self.world.sector_of(place.address)].name
                if place.name == sector_name:
                    continue
                self._place(surface, camera, place, place.name, 11 if s < 14 else 12, False,
                            taken, clip, below=True)
        if s >= 22:
            for place in self.objects:
                self._place(surface, camera, place, place.name, 10, False, taken, clip,
                            below=False)

    def _place(self, surface, camera, place, message, size, bold, taken, clip,
               below: bool = False, top: bool = False) -> bool:
        """Draw the label unless it would leave the view or cover another; True if drawn."""
        if not place.tiles:
            return False
        if top:  # centred over the place's top row, on the wall line above it
            sx, sy = camera.to_screen(*self._top_of(place))
        else:
            x, y = place.anchor_tile()
            sx, sy = camera.to_screen(x + 0.5, y + 0.5)
        img = self._label(message, size, bold)
        rect = img.get_rect(center=(sx, sy + (img.get_height() // 2 + 2 if below else 0)))
        if not clip.contains(rect) or rect.collidelist(taken) != -1:
            return False
        taken.append(rect)
        surface.blit(img, rect)
        return True
