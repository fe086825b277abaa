"""Where each agent is drawn at a time, from the log's `placed`, `move` and `move_stopped` events.

Log semantics (sandbox/events/world.py): on a walk that starts at `t0`, the agent stands on
`path[i]` from `t0 + i * seconds_per_tile` until the next tile; `move_stopped` cuts a walk and
leaves it on `path[index]`. Agents with only an `agent_joined` address stand on that place's
anchor tile.

For smooth motion the sprite glides, but never leaves the tile the log puts it on: during its
time on `path[i]` it goes from the edge shared with `path[i-1]` to the tile's centre, then on to
the edge shared with `path[i+1]`. At any moment the sprite's centre lies inside the logged tile.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.events import Event

from .timeline import get

Tile = tuple[int, int]
Point = tuple[float, float]
_EPS = 1e-6  # t0 + i * spt may land a hair before the exact tile time


@dataclass
class Leg:
    """From `t` the agent stands on `tile`, or walks `path` (cut at index `stop`)."""

    t: float
    tile: Tile | None = None
    path: list[Tile] | None = None
    seconds_per_tile: float = 1.0
    stop: int | None = None
    destination: str = ""

    @property
    def last_index(self) -> int:
        assert self.path is not None
        return len(self.path) - 1 if self.stop is None else min(self.stop, len(self.path) - 1)

    def index_at(self, t: float) -> tuple[int, float]:
        """The path index the agent stands on at `t`, and how far through that step (0..1)."""
        if t <= self.t:
            return 0, 0.0
        steps = (t - self.t) / self.seconds_per_tile + _EPS
        i = int(math.floor(steps))
        if i >= self.last_index:  # arrived: finish gliding into the last tile's centre
            return self.last_index, min(steps - self.last_index, 1.0)
        return i, steps - i

    def tile_at(self, t: float) -> Tile:
        if self.path is None:
            assert self.tile is not None
            return self.tile
        return self.path[self.index_at(t)[0]]

    def point_at(self, t: float) -> Point:
        """Where to draw, in tile units (tile centres at +0.5)."""
        if self.path is None:
            assert self.tile is not None
            return (self.tile[0] + 0.5, self.tile[1] + 0.5)
        i, f = self.index_at(t)
        here = _centre(self.path[i])
        if f < 0.5 and i > 0:
            edge = _midpoint(_centre(self.path[i - 1]), here)
            return _lerp(edge, here, f * 2)
        if f > 0.5 and i < self.last_index:
            edge = _midpoint(here, _centre(self.path[i + 1]))
            return _lerp(here, edge, (f - 0.5) * 2)
        return here

    def walking(self, t: float) -> bool:
        return self.path is not None and self.index_at(t)[0] < self.last_index


def _centre(tile: Tile) -> Point:
    return (tile[0] + 0.5, tile[1] + 0.5)


def _midpoint(a: Point, b: Point) -> Point:
    return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


def _lerp(a: Point, b: Point, f: float) -> Point:
    return (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)


class Positions:
    """Every agent's legs in time order; `leg(agent, t)` finds the one in force by bisection."""

    def __init__(self, tile_of_address: Callable[[str], Tile | None]):
        self._tile_of = tile_of_address
        self.legs: dict[str, list[Leg]] = {}
        self.times: dict[str, list[float]] = {}

    def add(self, events: list[Event]) -> None:
        for event in events:
            if event.agent is None:
                continue
            if event.kind == "placed":
                tile = get(event, "tile")
                if tile is not None:
                    self._add(event.agent, Leg(event.t, tile=(int(tile[0]), int(tile[1]))))
            elif event.kind == "move":
                path = [(int(p[0]), int(p[1])) for p in get(event, "path", [])]
                if path:
                    self._add(event.agent, Leg(event.t, path=path,
                                               seconds_per_tile=max(float(get(
                                                   event, "seconds_per_tile", 1.0)), 1e-6),
                                               destination=str(get(event, "destination", ""))))
            elif event.kind == "move_stopped":
                legs = self.legs.get(event.agent)
                if legs and legs[-1].path is not None:
                    legs[-1].stop = int(get(event, "index", legs[-1].last_index))
                tile = get(event, "tile")
                if tile is not None:
                    self._add(event.agent, Leg(event.t, tile=(int(tile[0]), int(tile[1]))))
            elif event.kind == "agent_joined" and event.agent not in self.legs:
                tile = self._tile_of(str(get(event, "location", "")))
                if tile is not None:
                    self._add(event.agent, Leg(event.t, tile=tile))

    def _add(self, agent: str, leg: Leg) -> None:
        legs = self.legs.setdefault(agent, [])
        times = self.times.setdefault(agent, [])
        i = bisect_right(times, leg.t)  # same-time legs keep log order: the later one wins
        legs.insert(i, leg)
        times.insert(i, leg.t)

    def leg(self, agent: str, t: float) -> Leg | None:
        times = self.times.get(agent)
        if not times:
            return None
        i = bisect_right(times, t + _EPS) - 1
        return self.legs[agent][i] if i >= 0 else None

    def tile(self, agent: str, t: float) -> Tile | None:
        leg = self.leg(agent, t)
        return leg.tile_at(t) if leg else None

    def point(self, agent: str, t: float) -> Point | None:
        leg = self.leg(agent, t)
        return leg.point_at(t) if leg else None
