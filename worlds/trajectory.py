"""Positions and occupancy rebuilt from a log: pure functions over events, no map, no engine.

    track = Trajectories.from_events(run.events)
    track.position("Maya Lindqvist", t)          # (x, y) tile at sim second t, or None
    track.leg("Maya Lindqvist", t)               # the Leg in force: standing, or walking a path
    track.arena("Maya Lindqvist", t)             # "town:Copper Kettle Cafe:dining room"
    track.occupants("town:Copper Kettle Cafe", t)  # who was in a sector or arena at t
    track.visits("Maya Lindqvist")               # [Visit(arena, start, end), ...]
    track.present("town:Harrow Park:lawn", t0, t1)  # who was there at any time in [t0, t1]

Reads `placed`, `move` and `move_stopped` events (sandbox.events.world); agents that only have
an `agent_joined` location (the single-room scenarios) are in that place from their join time,
with no tile. The engine's `WorldState` answers with the same rule (`tile_index`), so what
agents perceived and what the log says agree; the replay viewer draws from the same legs.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

from sandbox.events import AgentJoined, Event, Moved, MoveStopped, Placed

from .address import Address, within

Tile = tuple[int, int]
_EPS = 1e-6  # clock arithmetic: t0 + i * spt may land a hair before the exact tile time


def _walked(t0: float, seconds_per_tile: float, t: float) -> float:
    """Tiles walked by `t` since setting off at `t0`, in fractions of a tile (0 before `t0`),
    not stopped at the end of the path: the walker is on `path[floor(walked)]` while it lasts."""
    return 0.0 if t <= t0 else (t - t0) / seconds_per_tile + _EPS


def tile_index(t0: float, seconds_per_tile: float, length: int, t: float) -> int:
    """Index of the path tile an agent who set off at `t0` stands on at `t`."""
    return min(int(math.floor(_walked(t0, seconds_per_tile, t))), length - 1)


@dataclass
class Leg:
    """From `t` on, the agent stands on `tile`, or walks `path` to `destination` from `t`
    (until cut at index `stop`)."""

    t: float
    tile: Tile | None = None
    path: list[Tile] | None = None
    seconds_per_tile: float = 0.0
    stop: int | None = None
    destination: str = ""

    @property
    def last_index(self) -> int:
        """The index of the tile the walk ends on: the path's last, or the one it was cut at."""
        assert self.path is not None, "a standing leg has no path"
        end = len(self.path) - 1
        return end if self.stop is None else min(self.stop, end)

    def steps(self, t: float) -> float:
        """Tiles walked by `t`, in fractions (see `_walked`); for drawing motion between tiles."""
        return _walked(self.t, self.seconds_per_tile, t)

    def index_at(self, t: float) -> int:
        """The index in `path` of the tile the walker stands on at `t`."""
        return tile_index(self.t, self.seconds_per_tile, self.last_index + 1, t)

    def tile_at(self, t: float) -> Tile | None:
        if self.path is None:
            return self.tile
        return self.path[self.index_at(t)]

    def walking(self, t: float) -> bool:
        """Still on the way at `t` (not yet on the tile the walk ends on)."""
        return self.path is not None and self.index_at(t) < self.last_index


@dataclass(frozen=True)
class Visit:
    """An agent was in `arena` from `start` until `end` (None: still there when the log ends)."""

    agent: str
    arena: str
    start: float
    end: float | None


@dataclass
class _Agent:
    legs: list[Leg] = field(default_factory=list)
    leg_times: list[float] = field(default_factory=list)
    arenas: list[str | None] = field(default_factory=list)
    arena_times: list[float] = field(default_factory=list)

    def add_leg(self, leg: Leg) -> None:
        self.legs.append(leg)
        self.leg_times.append(leg.t)

    def enter(self, t: float, arena: str | None) -> None:
        if self.arenas and self.arenas[-1] == arena:
            return
        if self.arena_times and self.arena_times[-1] == t:  # same instant: the later one wins
            self.arenas[-1] = arena
            return
        self.arenas.append(arena)
        self.arena_times.append(t)


def _arena_of(place: str) -> str:
    address = Address.parse(place)
    return str(address.up_to("arena")) if len(address.parts) >= 3 else str(address)


class Trajectories:
    """Every agent's tiles and arenas over time, from a log's events."""

    def __init__(self) -> None:
        self._agents: dict[str, _Agent] = {}

    @classmethod
    def from_events(cls, events: list[Event]) -> Trajectories:
        track = cls()
        for event in events:
            track.add(event)
        return track

    def add(self, event: Event) -> None:
        """Take one event (in log order); other kinds are ignored."""
        if event.agent is None:
            return
        if isinstance(event, Placed):
            who = self._agents.setdefault(event.agent, _Agent())
            who.add_leg(Leg(t=event.t, tile=tuple(event.tile)))
            who.enter(event.t, _arena_of(event.place))
        elif isinstance(event, Moved):
            who = self._agents.setdefault(event.agent, _Agent())
            who.add_leg(Leg(t=event.t, path=[tuple(p) for p in event.path],
                            seconds_per_tile=event.seconds_per_tile,
                            destination=event.destination))
            for entry in event.enters:
                who.enter(entry.t, entry.arena)
        elif isinstance(event, MoveStopped):
            who = self._agents.get(event.agent)
            if who is None or not who.legs or who.legs[-1].path is None:
                return
            who.legs[-1].stop = event.index
            # Entries logged for later in the cut walk never happened.
            while who.arena_times and who.arena_times[-1] > event.t:
                who.arena_times.pop()
                who.arenas.pop()
            who.add_leg(Leg(t=event.t, tile=tuple(event.tile)))
        elif isinstance(event, AgentJoined) and event.location:
            who = self._agents.setdefault(event.agent, _Agent())
            if not who.arenas:
                who.enter(event.t, _arena_of(event.location))

    # -- queries --------------------------------------------------------------------------------
    @property
    def agents(self) -> list[str]:
        return list(self._agents)

    def leg(self, agent: str, t: float) -> Leg | None:
        """The leg `agent` is on at `t` (None before it is placed, or with no tiles)."""
        who = self._agents.get(agent)
        if who is None:
            return None
        i = bisect_right(who.leg_times, t + _EPS) - 1
        return who.legs[i] if i >= 0 else None

    def position(self, agent: str, t: float) -> Tile | None:
        """The tile `agent` stands on at `t` (None before it is placed, or with no tiles)."""
        leg = self.leg(agent, t)
        return leg.tile_at(t) if leg else None

    def positions(self, t: float) -> dict[str, Tile]:
        """Every placed agent's tile at `t`."""
        found = {a: self.position(a, t) for a in self._agents}
        return {a: tile for a, tile in found.items() if tile is not None}

    def arena(self, agent: str, t: float) -> str | None:
        """The arena address `agent` is in at `t`."""
        who = self._agents.get(agent)
        if who is None:
            return None
        i = bisect_right(who.arena_times, t + _EPS) - 1
        return who.arenas[i] if i >= 0 else None

    def occupants(self, place: str, t: float) -> list[str]:
        """Agents in `place` (a world, sector or arena address) at `t`, sorted by name."""
        place = str(Address.parse(place))
        return sorted(a for a in self._agents
                      if (arena := self.arena(a, t)) is not None and within(place, arena))

    def visits(self, agent: str) -> list[Visit]:
        """Each stay of `agent` in an arena, in order."""
        who = self._agents.get(agent)
        if who is None:
            return []
        out = []
        for i, (arena, start) in enumerate(zip(who.arenas, who.arena_times, strict=True)):
            end = who.arena_times[i + 1] if i + 1 < len(who.arena_times) else None
            if arena is not None:
                out.append(Visit(agent, arena, start, end))
        return out

    def present(self, place: str, start: float, end: float) -> list[str]:
        """Agents who were in `place` at any moment of [start, end], sorted by name."""
        place = str(Address.parse(place))
        return sorted(a for a in self._agents if any(
            within(place, v.arena) and v.start <= end and (v.end is None or v.end > start)
            for v in self.visits(a)))
