"""The town view: the map, agents as sprites with initials and current action, speech bubbles
during conversations, a large clock, and the inspection panel for the selected agent."""

from __future__ import annotations

import math

import pygame

from ..positions import Positions
from ..replay import Replay
from ..timeline import get
from . import theme
from .camera import Camera
from .hud import TIMELINE_BAR, TOP_BAR
from .mapimage import Labels, MapImage
from .panel import PANEL_WIDTH, InspectionPanel

_BUBBLE_WIDTH = 250
MIN_PANEL_WIDTH = 280
_ROSTER_LINE = 18  # the residents listed under a whole map with room below it
_ROSTER_COLUMN = 300
_CAPTION_ZOOM = 14  # from this many pixels per tile every agent shows its action


class TownView:
    def __init__(self, replay: Replay, size: tuple[int, int]):
        assert replay.world is not None
        self.replay = replay
        self.world = replay.world
        self.size = size
        self.map_image = MapImage(self.world)
        self.labels = Labels(self.world)
        self.positions = Positions(self.world.tile_of)
        self._seen = 0  # events of the timeline already given to `positions`
        self._last_seen = None
        self.sync()
        self.selected: str | None = None
        self.following: str | None = None
        self.panel = InspectionPanel(replay, locate=self.place_of)
        self.camera = Camera(self.viewport())
        self.camera.fit(self.world.width, self.world.height)

    # -- layout -------------------------------------------------------------------------------
    def viewport(self) -> pygame.Rect:
        width, height = self.size
        right = width - (self.panel_width() if self.selected else 0)
        return pygame.Rect(0, TOP_BAR, right, height - TOP_BAR - TIMELINE_BAR)

    def panel_width(self) -> int:
        """The inspection panel's width: its own in a window, less in a narrow pane (one side
        of `--beside`), where the map keeps at least half (the panel's text wraps to it)."""
        return max(MIN_PANEL_WIDTH, min(PANEL_WIDTH, self.size[0] // 2))

    def _keep_map_in_view(self) -> None:
        """While following: where the map is larger than the view, no void past its edge (the
        view stops at the map's border); where it is smaller, centred."""
        camera = self.camera
        for axis, size, span in (("cx", self.world.width, camera.viewport.width),
                                 ("cy", self.world.height, camera.viewport.height)):
            half = span / 2 / camera.scale
            value = getattr(camera, axis)
            setattr(camera, axis, size / 2 if 2 * half >= size else
                    min(max(value, half), size - half))

    def _relayout(self) -> None:
        self.camera.viewport = self.viewport()

    def fit(self) -> None:
        self.following = None
        self.camera.fit(self.world.width, self.world.height)

    # -- state --------------------------------------------------------------------------------
    def sync(self) -> None:
        """Take events that arrived since the last call (live follow)."""
        items = self.replay.timeline.events.items
        if len(items) == self._seen:
            return
        if self._seen and items[self._seen - 1] is not self._last_seen:
            # A late event was inserted before the end: rebuild rather than miss it.
            self.positions = Positions(self.world.tile_of)
            self._seen = 0
        self.positions.add(items[self._seen:])
        self._seen = len(items)
        self._last_seen = items[-1]

    def select(self, agent: str | None) -> None:
        self.selected = agent
        self.panel.scroll = 0
        if agent is None:
            self.following = None
        self._relayout()

    def follow(self, agent: str | None) -> None:
        self.following = agent
        if agent is not None:
            self.select(agent)
            if self.camera.scale < 12:
                self.camera.scale = 16

    def agent_at(self, pos: tuple[int, int], t: float) -> str | None:
        """The agent whose sprite is under a screen position (the nearest one)."""
        best, best_d = None, None
        radius = self._radius() + 3
        for name in self.replay.timeline.agents:
            point = self.positions.point(name, t)
            if point is None:
                continue
            sx, sy = self.camera.to_screen(*point)
            d = math.hypot(sx - pos[0], sy - pos[1])
            if d <= radius and (best_d is None or d < best_d):
                best, best_d = name, d
        return best

    def place_of(self, agent: str, t: float) -> str | None:
        """The address of the tile `agent` stands on at `t` (object, else arena)."""
        tile = self.positions.tile(agent, t)
        if tile is None:
            return None
        return self.world.object_of.get(tile) or self.world.arena_of.get(tile)

    def screen_points(self, t: float) -> dict[str, tuple[int, int]]:
        """Where each placed agent's sprite centre is drawn at `t` (for tests and clicks)."""
        points = self._spread(t)
        return {name: self.camera.to_screen(*p) for name, p in points.items()}

    # -- drawing ------------------------------------------------------------------------------
    def draw(self, surface: pygame.Surface, t: float) -> None:
        self.sync()
        if surface.get_size() != self.size:
            self.size = surface.get_size()
            self._relayout()
        if self.following:
            point = self.positions.point(self.following, t)
            if point is not None:
                self.camera.cx, self.camera.cy = point
                self._keep_map_in_view()
        viewport = self.camera.viewport
        previous_clip = surface.get_clip()
        surface.set_clip(viewport)
        self.map_image.blit(surface, self.camera)
        clock = self._draw_clock(surface, t)
        points = self._spread(t)
        captions = self._captions(t, points)
        bubbles = self._bubbles(t, points)
        # A place's name is left out where it would sit under a resident, its caption or a
        # bubble: the two never cover each other (a half-hidden "dining room" read "ning
        # room"); a label drawn is still under the agents.
        r = self._radius()
        residents = [pygame.Rect(0, 0, 2 * r + 4, 2 * r + 4) for _ in points]
        for rect, point in zip(residents, points.values(), strict=True):
            rect.center = self.camera.to_screen(*point)
        self.labels.draw(surface, self.camera, [clock, *residents,
                                                *(box for box, _ in captions),
                                                *(bubble_area(b, r) for b in bubbles)])
        self._draw_conversation_links(surface, t, points)
        self._draw_agents(surface, points, captions)
        self._draw_bubbles(surface, bubbles)
        self._draw_roster(surface, t, points)
        surface.set_clip(previous_clip)
        if self.selected:
            panel_rect = pygame.Rect(viewport.right, viewport.top, self.panel_width(),
                                     viewport.height)
            self.panel.draw(surface, panel_rect, self.selected, t,
                            following=self.following == self.selected)

    def _radius(self) -> int:
        return max(9, min(18, int(self.camera.scale * 0.45)))

    def _spread(self, t: float) -> dict[str, tuple[float, float]]:
        """Sprite centres in map units. Agents whose discs would overlap at this zoom (one
        spot, a doorway, a crowd on neighbouring tiles) are spread around their middle: each
        group packed in rings, discs just apart, nearer ones nearer the middle and on their
        own side of it, so a crowd reads as so many residents, never as one blob. One spot
        alone still gets at least a quarter tile of room when the zoom leaves it."""
        points: dict[str, tuple[float, float]] = {}
        for name in self.replay.timeline.agents:
            point = self.positions.point(name, t)
            if point is not None:
                points[name] = point
        r, scale = self._radius(), self.camera.scale
        apart = (2 * r + 4) / scale
        groups = overlapping(points, apart)
        spread = dict(points)
        for _ in range(len(points)):  # a spread group that now touches another joins it
            spread = dict(points)
            for names in groups:
                spread.update(spread_group(points, names, (2 * r + 5) / scale))
            merged = overlapping(spread, apart)
            joined = [set(m) for m in merged if not any(set(m) <= set(g) for g in groups)]
            if not joined:
                break
            for extra in joined:
                touching = [g for g in groups if extra & set(g)]
                names = [n for n in points if n in extra or any(n in g for g in touching)]
                groups = [g for g in groups if g not in touching] + [names]
        return spread

    def _draw_clock(self, surface: pygame.Surface, t: float) -> pygame.Rect:
        when = self.replay.clock(t)
        big = theme.text(when.strftime("%H:%M"), 30, theme.TEXT, bold=True)
        small = theme.text(when.strftime("%A %d %b %Y"), 12, theme.TEXT_DIM)
        box = pygame.Rect(self.camera.viewport.left + 10, self.camera.viewport.top + 10,
                          max(big.get_width(), small.get_width()) + 20,
                          big.get_height() + small.get_height() + 12)
        panel = pygame.Surface(box.size, pygame.SRCALPHA)
        panel.fill((20, 22, 28, 215))
        surface.blit(panel, box)
        surface.blit(big, (box.left + 10, box.top + 4))
        surface.blit(small, (box.left + 10, box.top + 6 + big.get_height()))
        return box

    def _draw_conversation_links(self, surface, t, points) -> None:
        for conv in self.replay.timeline.active_conversations(t):
            ends = [self.camera.to_screen(*points[p]) for p in conv.participants if p in points]
            for a, b in zip(ends, ends[1:], strict=False):
                pygame.draw.line(surface, theme.ACCENT, a, b, 2)

    def _captions(self, t, points) -> list[tuple[pygame.Rect, str]]:
        """Where each shown action caption goes (box, text): under its agent, the selected
        agent's first; one that would overlap another is left out."""
        r = self._radius()
        talking = {p for c in self.replay.timeline.active_conversations(t) for p in c.participants}
        show_all_captions = self.camera.scale >= _CAPTION_ZOOM
        taken: list[pygame.Rect] = []
        placed = []
        for name in sorted(points, key=lambda n: n != self.selected):
            if (show_all_captions or name == self.selected) and name not in talking:
                caption = self._caption(name, t)
                if caption:
                    sx, sy = self.camera.to_screen(*points[name])
                    message = theme.fit(caption, 11, 170)
                    box = theme.text(message, 11, theme.TEXT_DARK).get_rect(
                        midtop=(sx, sy + r + 4)).inflate(8, 2)
                    if box.collidelist(taken) == -1:
                        taken.append(box)
                        placed.append((box, message))
        return placed

    def _draw_agents(self, surface, points, captions) -> None:
        r = self._radius()
        # Captions under all sprites, so a crowd's labels never hide one of its members; the
        # selected agent last, so it is drawn on top.
        for box, message in captions:
            img = theme.text(message, 11, theme.TEXT_DARK)
            pygame.draw.rect(surface, (250, 250, 245), box, border_radius=3)
            pygame.draw.rect(surface, (90, 90, 100), box, 1, border_radius=3)
            surface.blit(img, img.get_rect(center=box.center))
        for name in sorted(points, key=lambda n: n == self.selected):
            info = self.replay.timeline.agents[name]
            sx, sy = self.camera.to_screen(*points[name])
            colour = theme.agent_colour(info.index)
            if name == self.selected:
                pygame.draw.circle(surface, theme.ACCENT, (sx, sy), r + 5, 3)
            pygame.draw.circle(surface, (255, 255, 255), (sx, sy), r + 2)
            pygame.draw.circle(surface, colour, (sx, sy), r)
            size = max(9, int(r * 0.95))
            initials = theme.text(info.initials, size, (255, 255, 255), bold=True)
            surface.blit(initials, initials.get_rect(center=(sx, sy)))

    def _caption(self, name: str, t: float) -> str:
        leg = self.positions.leg(name, t)
        action = self.replay.timeline.latest("action_started", t, name)
        failed = self.replay.timeline.latest("walk_failed", t, name)
        if failed is not None and (action is None or failed.t >= action.t) and \
                t - failed.t < 3600:  # for the hour after: the agent is not where it meant
            return "could not get to " + str(get(failed, "destination", "?")).split(":")[-1]
        if action is not None and t <= float(get(action, "until", math.inf)):
            return str(get(action, "description", ""))
        if leg is not None and leg.walking(t) and leg.destination:
            return "walking to " + leg.destination.split(":")[-1]
        return ""

    def _draw_roster(self, surface, t, points) -> None:
        """Under a whole map that leaves room below it (a wide town in a narrow pane), who is
        there and what each does, in the map's own order: the room is used, and residents
        the map shows small are named."""
        camera = self.camera
        bottom = camera.to_screen(0, self.world.height)[1] + 10
        free = pygame.Rect(camera.viewport.left + 10, bottom, camera.viewport.width - 20,
                           camera.viewport.bottom - bottom - 6)
        if self.following or free.height < 2 * _ROSTER_LINE or not points:
            return
        columns = max(1, free.width // _ROSTER_COLUMN)
        width = free.width // columns
        rows = free.height // _ROSTER_LINE
        names = [n for n in self.replay.timeline.agents if n in points]
        shown = names[:columns * rows]
        for i, name in enumerate(shown):
            if i == len(shown) - 1 and len(names) > len(shown):
                theme.blit_text(surface, f"+{len(names) - i} more", (
                    free.left + (i // rows) * width, free.top + (i % rows) * _ROSTER_LINE),
                                11, theme.TEXT_DIM)
                break
            x = free.left + (i // rows) * width
            y = free.top + (i % rows) * _ROSTER_LINE
            info = self.replay.timeline.agents[name]
            pygame.draw.circle(surface, theme.shade(theme.agent_colour(info.index), 0.9),
                               (x + 8, y + 8), 7)
            theme.blit_text(surface, info.initials, (x + 8, y + 8), 8, theme.TEXT, True,
                            "center")
            doing = self._caption(name, t)
            line = f"{name}" + (f" · {doing}" if doing else "")
            theme.blit_text(surface, theme.fit(line, 12, width - 26), (x + 20, y + 1), 12,
                            theme.TEXT)

    def _bubbles(self, t, points) -> list[tuple]:
        """Where the bubble of each running conversation's last line goes: (box, speaker's
        screen point, name image, lines). Bubbles keep clear of every sprite and of each
        other (conversations side by side)."""
        r = self._radius()
        viewport = self.camera.viewport
        placed = [pygame.Rect(0, 0, 2 * r + 4, 2 * r + 4) for _ in points]
        for rect, point in zip(placed, points.values(), strict=True):
            rect.center = self.camera.to_screen(*point)
        found = []
        for conv in self.replay.timeline.active_conversations(t):
            said = conv.said_by(t)
            if not said:
                continue
            last = said[-1]
            if last.agent not in points:
                continue
            sx, sy = self.camera.to_screen(*points[last.agent])
            lines = theme.wrap(str(get(last, "text", "")), 13, _BUBBLE_WIDTH - 20, max_lines=4)
            line_h = theme.line_height(13)
            # A darker shade of the speaker's colour: readable on white, and never the exact
            # sprite colour (tests find sprites by it).
            colour = theme.shade(
                theme.agent_colour(self.replay.timeline.agents[last.agent].index), 0.8)
            name = theme.text(last.agent or "", 11, colour, bold=True)
            width = max(max(theme.font(13).size(s)[0] for s in lines), name.get_width()) + 20
            height = name.get_height() + line_h * len(lines) + 12
            box = pygame.Rect(0, 0, width, height)
            box.midbottom = (sx, sy - r - 12)
            box.clamp_ip(viewport)
            while (hit := box.collidelist(placed)) != -1 and box.top > viewport.top:
                box.bottom = placed[hit].top - 4
            placed.append(box)
            found.append((box, (sx, sy), name, lines))
        return found

    def _draw_bubbles(self, surface, bubbles) -> None:
        r = self._radius()
        for box, (sx, sy), name, lines in bubbles:
            tail_x = min(max(sx, box.left + 12), box.right - 12)
            pygame.draw.polygon(surface, theme.BUBBLE_EDGE, [(tail_x - 8, box.bottom - 1),
                                                             (tail_x + 8, box.bottom - 1),
                                                             (sx, sy - r - 3)])
            pygame.draw.rect(surface, theme.BUBBLE, box, border_radius=8)
            pygame.draw.rect(surface, theme.BUBBLE_EDGE, box, 2, border_radius=8)
            pygame.draw.polygon(surface, theme.BUBBLE, [(tail_x - 6, box.bottom - 2),
                                                        (tail_x + 6, box.bottom - 2),
                                                        (sx, sy - r - 6)])
            surface.blit(name, (box.left + 10, box.top + 5))
            theme.blit_lines(surface, lines, (box.left + 10, box.top + 5 + name.get_height()),
                             13, theme.TEXT_DARK, spacing=0)


def bubble_area(bubble: tuple, r: int) -> pygame.Rect:
    """What a bubble covers: its box and its tail down to the speaker's disc."""
    box, (sx, sy), _, _ = bubble
    return box.union(pygame.Rect(sx - 8, box.bottom, 16, max(0, sy - r - box.bottom)))


def overlapping(points: dict[str, tuple[float, float]], apart: float) -> list[list[str]]:
    """Groups of two or more names whose points lie closer than `apart`, directly or through
    others of the group (each group in the order the points are given)."""
    names = list(points)
    parent = list(range(len(names)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if math.dist(points[names[i]], points[names[j]]) < apart:
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    found: dict[int, list[str]] = {}
    for i, name in enumerate(names):
        found.setdefault(root(i), []).append(name)
    return [g for g in found.values() if len(g) > 1]


def spread_group(points: dict[str, tuple[float, float]], names: list[str],
                 step: float) -> dict[str, tuple[float, float]]:
    """New points for a group of agents too close to tell apart: packed `step` apart around
    their middle (`ring_slots`), the one nearest the middle in it, the rest each on its own
    side (clockwise from the top, as the slots go); one spot alone gets a quarter tile."""
    cx = sum(points[n][0] for n in names) / len(names)
    cy = sum(points[n][1] for n in names) / len(names)
    slots = ring_slots(len(names), step, min_radius=0.25 if len(names) <= 6 else 0.0)
    order = sorted(names, key=lambda n: (
        round(math.dist(points[n], (cx, cy)), 3),
        round((math.atan2(points[n][1] - cy, points[n][0] - cx) + math.pi / 2) % (2 * math.pi),
              3)))
    return {name: (cx + dx, cy + dy) for name, (dx, dy) in zip(order, slots, strict=True)}


def ring_slots(n: int, step: float, min_radius: float = 0.0) -> list[tuple[float, float]]:
    """`n` offsets `step` apart: a small group on one circle (at least `min_radius` wide),
    a larger one in rings around a middle one (6, 12, 18 ... to a ring), clockwise from the
    top."""
    if n <= 6:
        radius = max(min_radius, step / 2 / math.sin(math.pi / n))
        return [(radius * math.cos(2 * math.pi * i / n - math.pi / 2),
                 radius * math.sin(2 * math.pi * i / n - math.pi / 2)) for i in range(n)]
    slots = [(0.0, 0.0)]
    ring = 1
    while len(slots) < n:
        count = min(6 * ring, n - len(slots))
        for i in range(count):
            angle = 2 * math.pi * i / count - math.pi / 2
            slots.append((ring * step * math.cos(angle), ring * step * math.sin(angle)))
        ring += 1
    return slots
