"""Events of the tile world: where agents are put, how they walk, and object states.

The log alone rebuilds every agent's position at any simulated time, without the map:

- `placed` puts an agent on a tile (spawn, or a jump) at `t`.
- `move` is one walk: the agent stands on `path[i]` from `t + i * seconds_per_tile` until the
  next tile; it reaches `path[-1]` at `arrival` (= t + (len(path) - 1) * seconds_per_tile) and
  stays there until its next event. `enters` lists where the walk crosses into another arena
  (path index, time, arena address), so "who was in arena A at time t" needs no map either.
- `move_stopped` cuts the agent's last walk short: it stays on `path[index]` (= `tile`) from `t`.
- `walk_failed` is a walk that could not start (no path to the place, or no such place): the
  agent stays where it is.

Tiles are [x, y] = [column, row], 0-based, row 0 at the top of the map.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .base import SIM_SECONDS, Event

Tile = tuple[int, int]


class ArenaEntry(BaseModel):
    """A walk enters `arena` (world:sector:arena) at path index `index`, at time `t`."""

    model_config = ConfigDict(extra="forbid")

    index: int
    t: float = SIM_SECONDS
    arena: str


class Placed(Event):
    kind: Literal["placed"] = "placed"
    tile: Tile
    place: str  # address of the tile: world:sector:arena[:object]


class Moved(Event):
    kind: Literal["move"] = "move"
    destination: str  # the address the agent walks to (as asked, resolved)
    path: list[Tile]  # from the tile it stands on to the tile it arrives at
    seconds_per_tile: float
    arrival: float
    enters: list[ArenaEntry]  # the first entry is the arena of path[0] at index 0


class MoveStopped(Event):
    kind: Literal["move_stopped"] = "move_stopped"
    tile: Tile
    index: int  # index into the interrupted walk's path
    reason: str = ""


class WalkFailed(Event):
    kind: Literal["walk_failed"] = "walk_failed"
    tile: Tile  # where the agent stands, and stays
    origin: str  # the place of that tile
    destination: str  # the place as asked
    reason: str


class ObjectStateChanged(Event):
    kind: Literal["object_state"] = "object_state"
    object: str  # world:sector:arena:object
    state: str
