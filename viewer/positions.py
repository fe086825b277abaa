"""Where each agent is drawn at a time: the legs of `worlds.Trajectories` (the one reading of
the log's `placed`, `move` and `move_stopped` events, shared with the scorers), made smooth.

Log semantics (worlds/README.md, "Events"): on a walk that starts at `t0`, the agent stands on
`path[i]` from `t0 + i * seconds_per_tile` until the next tile; `move_stopped` cuts a walk and
leaves it on `path[index]`. Agents with only an `agent_joined` address (single-room runs) stand
on that place's anchor tile: a viewer's choice, so it is made here, not in worlds/.

For smooth motion the sprite glides, but never leaves the tile the log puts it on: during its
time on `path[i]` it goes from the edge shared with `path[i-1]` to the tile's centre, then on to
the edge shared with `path[i+1]`. At any moment the sprite's centre lies inside the logged tile.
"""

from __future__ import annotations

from collections.abc import Callable

from sandbox.events import Event
from worlds import Leg, Trajectories

from .timeline import get

Tile = tuple[int, int]
Point = tuple[float, float]


def point_at(leg: Leg, t: float) -> Point:
    """Where to draw someone on `leg` at `t`, in tile units (tile centres at +0.5)."""
    if leg.path is None:
        assert leg.tile is not None
        return _centre(leg.tile)
    i = leg.index_at(t)
    f = min(leg.steps(t) - i, 1.0)  # how far through path[i]; arrived: glide into its centre
    here = _centre(leg.path[i])
    if f < 0.5 and i > 0:
        edge = _midpoint(_centre(leg.path[i - 1]), here)
        return _lerp(edge, here, f * 2)
    if f > 0.5 and i < leg.last_index:
        edge = _midpoint(here, _centre(leg.path[i + 1]))
        return _lerp(here, edge, (f - 0.5) * 2)
    return here


def _centre(tile: Tile) -> Point:
    return (tile[0] + 0.5, tile[1] + 0.5)


def _midpoint(a: Point, b: Point) -> Point:
    return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


def _lerp(a: Point, b: Point, f: float) -> Point:
    return (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)


class Positions:
    """Every agent's legs (`worlds.Trajectories`), and the spot of those the log only says
    joined at an address; `leg(agent, t)` is the one in force."""

    def __init__(self, tile_of_address: Callable[[str], Tile | None]):
        self._tile_of = tile_of_address
        self.track = Trajectories()
        self._joined: dict[str, Leg] = {}  # agent -> standing on its join address's tile

    def add(self, events: list[Event]) -> None:
        """Take events in time order (the timeline's)."""
        for event in events:
            if event.kind != "agent_joined":  # the track takes only arenas from a join
                self.track.add(event)
            # Only an agent not placed yet stands at its address; its own legs take over later.
            elif event.agent and event.agent not in self.track.agents and \
                    event.agent not in self._joined:
                tile = self._tile_of(str(get(event, "location", "")))
                if tile is not None:
                    self._joined[event.agent] = Leg(event.t, tile=tile)

    def leg(self, agent: str, t: float) -> Leg | None:
        leg = self.track.leg(agent, t)
        if leg is None and agent in self._joined and self._joined[agent].t <= t:
            return self._joined[agent]
        return leg

    def tile(self, agent: str, t: float) -> Tile | None:
        leg = self.leg(agent, t)
        return leg.tile_at(t) if leg else None

    def point(self, agent: str, t: float) -> Point | None:
        leg = self.leg(agent, t)
        return point_at(leg, t) if leg else None
