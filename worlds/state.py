"""The live world of one episode: where every agent is now, who shares an arena, object states,
and walking as a SimPy process.

    town = WorldState(engine, world)
    town.place("Maya Lindqvist", "town:Willow Court:apartment 1:bed")
    def day(engine):
        yield from town.walk("Maya Lindqvist", "town:Copper Kettle Cafe:dining room:counter")
        print(town.sharing_arena("Maya Lindqvist"))   # who she can perceive now

A walk computes its path once, logs one `move` event with the path and its timing, and sleeps
until arrival, waking only where the path crosses into another arena so that occupancy (and the
`on_enter` callbacks perception uses) change at the exact simulated second. A walk that cannot
happen (no path, no such place) logs `walk_failed` and raises AddressError. Interrupting the
walking process (`process.interrupt(cause)`) stops the agent on its current tile, logs
`move_stopped` and re-raises the Interrupt to the agent's own code.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Container, Generator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
import simpy

from sandbox.events import (
    ArenaEntry,
    Moved,
    MoveStopped,
    ObjectStateChanged,
    Placed,
    WalkFailed,
)

from .address import Address, AddressError, within
from .trajectory import tile_index
from .world import Tile, World

WALKING_SPEED = 1.4  # metres per second, an unhurried adult pace

EnterCallback = Callable[[str, Address | None, Address, float], None]


def _drop(names: list[str], name: str) -> None:
    """Take `name` out of the sorted list `names` (it is there)."""
    del names[bisect_left(names, name)]


@dataclass
class _Walk:
    path: list[Tile]
    t0: float
    seconds_per_tile: float
    # Where the walk process is, as data, so a checkpoint can resume it (`walk_on`): the
    # arenas it crosses into, the next of them to be entered (len(enters) once only the
    # arrival is left), and the timeout it waits on.
    enters: list[ArenaEntry] = field(default_factory=list)
    next: int = 1
    waiting: simpy.Event | None = None

    @property
    def arrival(self) -> float:
        return self.t0 + (len(self.path) - 1) * self.seconds_per_tile


HOPS_CAP = 32767  # the most tiles a hop grid holds (2 bytes a tile: WorldState._hops)


class WorldState:
    """Agents' positions and object states in one episode, changed only through its methods so
    that every change is logged."""

    def __init__(self, engine, world: World):
        self.engine = engine
        self.world = world
        self._standing: dict[str, Tile] = {}  # agents not walking
        self._walking: dict[str, _Walk] = {}
        self._arena: dict[str, Address] = {}
        # arena -> agents whose last entered arena it is, by name (the index `sharing_arena`
        # reads, so perceiving costs the arena's people, not the whole town's)
        self._occupants: dict[Address, list[str]] = {}
        # arena (as its walks log it) -> walkers whose path crosses it, by name: a walker is
        # found by the arenas it passes, not by looking at every walker in town (a
        # 4,000-resident day spent 138 s of 520 in sharing_arena before). Both kept sorted, so
        # the first few names of a crowded arena are found without going through all of it.
        self._crossing: dict[str, list[str]] = {}
        self._crosses: dict[str, frozenset[str]] = {}  # a walker -> the arenas its walk enters
        self._placed_for = -1  # how many residents were all in the town when last asked
        self._objects: dict[Address, str] = {}
        self._on_enter: list[EnterCallback] = []
        # agent -> the tiles of its last walk, as far as it went: what it passed (perception
        # reads it). Not part of the checkpoint: a walk under way is, and sets it as it ends.
        self._walked: dict[str, list[Tile]] = {}
        self._hop_grids: dict[Address, list[array]] = {}  # arena -> tiles to it (_hops)
        self._tile_matrix = None  # the tile graph as scipy's sparse matrix (_hops)
        self._spt = world.seconds_per_tile(WALKING_SPEED)
        self._horizon: float | None = None
        # arena -> the last moment a step that went on assumed nobody new could be there by
        # (`goes`); a walk into it before then breaks the rule (`_start_walking`)
        self._promised: dict[Address, float] = {}
        self._asked: tuple[str, float, dict[Address, float]] | None = None  # meets' last
        engine.reach = self  # residents run ahead as far as this town lets them meet (meets)

    # -- agents ---------------------------------------------------------------------------------
    def place(self, agent: str, where: Address | str | Tile) -> Tile:
        """Put `agent` at a place (its middle tile) or on a tile, now. Logs `placed`."""
        if isinstance(where, tuple):
            tile = (int(where[0]), int(where[1]))
            if not self.world.walkable(tile):
                raise AddressError(f"tile {tile} is not walkable in world '{self.world.name}'")
        else:
            tile = self.world.tile_for(where)
        self._stop_walking(agent)
        self._standing[agent] = tile
        self.engine.emit(Placed(t=self.engine.now, agent=agent, tile=tile,
                                place=str(self.world.place_at(tile))))
        self._enter(agent, self.world.arena_at(tile))
        return tile

    @property
    def agents(self) -> list[str]:
        return list(self._arena)

    def tile_of(self, agent: str) -> Tile:
        """The tile `agent` stands on now (part-way along its path while walking)."""
        walk = self._walking.get(agent)
        if walk is None:
            if agent not in self._standing:
                raise LookupError(f"{agent!r} is not in world '{self.world.name}'; place it first")
            return self._standing[agent]
        return walk.path[tile_index(walk.t0, walk.seconds_per_tile, len(walk.path),
                                    self.engine.now)]

    def arena_of(self, agent: str) -> Address | None:
        """The arena `agent` is in now. Mid-walk it is read from the tile, so the answer at the
        very second of a crossing does not depend on which process SimPy runs first."""
        if agent in self._walking:
            return self.world.arena_at(self.tile_of(agent))
        return self._arena.get(agent)

    def agents_in(self, place: Address | str) -> list[str]:
        """Agents now in a sector or arena (any address level above objects), by name."""
        place = str(self.world.resolve(place))
        return sorted(a for a in self._arena if within(place, str(self.arena_of(a))))

    def sharing_arena(self, agent: str, first: int | None = None,
                      among: Container[str] | None = None) -> list[str]:
        """The other agents in `agent`'s arena now, by name: whom it can perceive. `first`:
        only the first that many of them (of those in `among`, when given)."""
        arena = self.arena_of(agent)
        if arena is None:
            return []
        # Standing agents are where they last entered; a walker is read from its tile now (as
        # arena_of does), whatever arena it last entered. Two sorted streams, apart.
        standing = (a for a in self._occupants.get(arena, ()) if a not in self._walking)
        walking = (a for a in self._crossing.get(str(arena), ())
                   if a in self._arena and self.arena_of(a) == arena)
        found = (a for a in heapq.merge(standing, walking)
                 if a != agent and (among is None or a in among))
        seen = list(islice(found, first))
        saw = getattr(self.engine, "saw", None)  # what it does next waits on theirs (engine)
        if saw is not None:
            saw(seen)
        return seen

    def on_enter(self, callback: EnterCallback) -> None:
        """Call `callback(agent, left_arena, entered_arena, t)` whenever an agent changes arena."""
        self._on_enter.append(callback)

    def _enter(self, agent: str, arena: Address | None) -> None:
        before = self._arena.get(agent)
        if arena is None or arena == before:
            return
        self._arena[agent] = arena
        if before is not None:
            _drop(self._occupants[before], agent)
        insort(self._occupants.setdefault(arena, []), agent)
        for callback in self._on_enter:
            callback(agent, before, arena, self.engine.now)

    # -- walking --------------------------------------------------------------------------------
    def walk(self, agent: str, to: Address | str, *,
             speed: float = WALKING_SPEED) -> Generator[simpy.Event, Any, Tile]:
        """Walk `agent` to `to`; use as `tile = yield from town.walk(...)`. An object is
        reached at its nearest tile; an arena or sector at the agent's own spot in it
        (`World.spot`), through the nearest entrance.

        Returns the tile it arrived on. For an unknown or unreachable place it logs
        `walk_failed` and raises AddressError, before any time passes: the agent stays put.
        """
        engine, world = self.engine, self.world
        if speed > WALKING_SPEED:  # how far a resident can get by when is bounded by it (meets)
            raise ValueError(f"{agent} cannot walk faster than {WALKING_SPEED} m/s ({speed})")
        start = self.tile_of(agent)
        try:
            target = world.resolve(to)
            path = world.path(start, target)
        except AddressError as exc:
            engine.emit(WalkFailed(t=engine.now, agent=agent, tile=start,
                                   origin=str(world.place_at(start)), destination=str(to),
                                   reason=str(exc)))
            raise
        if target.level != "object":
            inner = world.path_inside(path[-1], world.spot(target, agent), target)
            path = path + inner[1:]
        if len(path) == 1:
            return path[0]
        spt = world.seconds_per_tile(speed)
        t0 = engine.now
        enters = [ArenaEntry(index=0, t=t0, arena=str(world.arena_at(path[0])))]
        for i in range(1, len(path)):
            arena = world.arena_at(path[i])
            if str(arena) != enters[-1].arena:
                enters.append(ArenaEntry(index=i, t=t0 + i * spt, arena=str(arena)))
        walk = _Walk(path, t0, spt, enters)
        engine.emit(Moved(t=t0, agent=agent, destination=str(target), path=path,
                          seconds_per_tile=spt, arrival=walk.arrival, enters=enters))
        self._standing.pop(agent, None)
        self._start_walking(agent, walk)
        return (yield from self.walk_on(agent))

    def _start_walking(self, agent: str, walk: _Walk) -> None:
        for entry in walk.enters[1:]:  # where it was, it was before (someone saw to that)
            arena = self.world.arena_at(walk.path[entry.index])
            if entry.t < self._promised.get(arena, -1.0) - 1e-6:
                self.engine.overtook(f"{agent} into {arena} at {entry.t:.1f} s, where a step "
                                     f"went on to {self._promised[arena]:.1f} s")
        self._walking[agent] = walk
        crosses = self._crosses[agent] = frozenset(entry.arena for entry in walk.enters)
        for arena in crosses:  # each arena once
            insort(self._crossing.setdefault(arena, []), agent)

    def _stop_walking(self, agent: str) -> None:
        self._walking.pop(agent, None)
        for arena in self._crosses.pop(agent, ()):
            _drop(self._crossing[arena], agent)

    def walk_on(self, agent: str, waiting: simpy.Event | None = None
                ) -> Generator[simpy.Event, Any, Tile]:
        """The rest of `agent`'s walk, from where its `_Walk` says it is: how `walk` goes on,
        and how a restored checkpoint resumes it (`waiting`: the timeout it was waiting on,
        scheduled again at its exact time)."""
        engine, walk = self.engine, self._walking[agent]
        try:
            while walk.next <= len(walk.enters):
                due = (walk.enters[walk.next].t if walk.next < len(walk.enters)
                       else walk.arrival)
                if waiting is None:
                    waiting = engine.timeout(max(due - engine.now, 0.0))
                walk.waiting = waiting
                yield waiting
                walk.waiting = waiting = None
                if walk.next < len(walk.enters):
                    entry = walk.enters[walk.next]
                    self._enter(agent, self.world.arena_at(walk.path[entry.index]))
                walk.next += 1
        except simpy.Interrupt as stop:
            index = tile_index(walk.t0, walk.seconds_per_tile, len(walk.path), engine.now)
            tile = walk.path[index]
            self._walked[agent] = walk.path[:index + 1]
            self._stop_walking(agent)
            self._standing[agent] = tile
            self._enter(agent, self.world.arena_at(tile))
            engine.emit(MoveStopped(t=engine.now, agent=agent, tile=tile, index=index,
                                    reason=str(stop.cause or "")))
            raise
        self._walked[agent] = walk.path
        self._stop_walking(agent)
        self._standing[agent] = walk.path[-1]
        return walk.path[-1]

    def walked(self, agent: str) -> list[Tile]:
        """The tiles `agent` passed on its last walk (up to where it stopped), or the tile it
        stands on when it has not walked."""
        return self._walked.get(agent) or [self.tile_of(agent)]

    def waiting(self, agent: str) -> simpy.Event | None:
        """The timeout `agent`'s walk waits on now (None when it is not walking)."""
        walk = self._walking.get(agent)
        return walk.waiting if walk is not None else None

    # -- who could meet whom (the engine's Reach: sandbox/README.md, "Running ahead") -----------
    def tile_at(self, agent: str, t: float) -> Tile:
        """The tile `agent` is on at simulated second `t`, from what is known of it now: where
        it stands, or where its walk under way puts it then."""
        walk = self._walking.get(agent)
        if walk is None:
            return self._standing[agent]
        return walk.path[tile_index(walk.t0, walk.seconds_per_tile, len(walk.path), t)]

    def meets(self, resident: str, t: float, behind) -> str | None:
        """One of those `behind` (sandbox.engine.Behind) that could be, in time, in an arena
        where what `resident` does up to `t` could be seen or could see them: where it stands
        and where its walk is at `t`, by `t`; at its arrival, each arena the walk crossed, by
        the time it left it (`_seen_until`); `resident` itself when it is nowhere the rule can
        tell; None when nobody could. A walk's steps before its arrival only cross arenas,
        which nobody reads from the walker's process (where a walker is at any moment follows
        from its walk: `tile_of`): nobody meets them."""
        walk = self._walking.get(resident)
        if walk is not None and t < walk.arrival:
            return None
        if resident not in self._arena:
            return resident
        if not len(behind):
            return None
        until = self._seen_until(resident, t, walk)
        if until is None:
            return resident
        self._asked = (resident, t, until)  # `goes` holds to these when it goes on
        # Nobody behind reads anywhere before the time of the one furthest behind: an arena
        # left before then is looked at by no one.
        first = behind.earliest()
        targets = [(arena, d, self._hops(arena)) for arena, d in until.items() if d >= first]
        if not targets:
            return None
        # Who is less than half a tile's walk behind `t` can be in an arena by its time (`t`
        # or earlier) only if it stands there already or its walk goes there: those are
        # looked up in these arenas, and only those further behind are read one by one.
        near = t - self._spt / 2
        arenas = [arena for arena, _d, _grid in targets]
        far = behind.until(near) if self._all_placed(behind) else len(behind)
        holds = behind.holds
        for other, c in behind.entries(0, far):
            if self._meets_in(other, c, targets):
                return other
            # whom it holds stands in its arena, maybe nearer: free at its time at the earliest
            if holds and other in holds and any(self._meets_in(held, c, targets)
                                                for held in holds[other]):
                return other
        lists = [self._occupants.get(arena, ()) for arena in arenas]
        lists += [self._crossing.get(str(arena), ()) for arena in arenas]
        if sum(map(len, lists)) < len(behind) - far:  # who is there, if fewer (most steps)
            # in any order: whoever is found, the answer (someone or nobody) is the same
            for other in {a for names in lists for a in names}:
                c = behind.time_of(other)
                if c is not None and c > near and self._meets_in(other, c, targets):
                    return other
            return None
        # else those behind, each asked whether it is there (a crowded street)
        names = {str(arena) for arena in arenas}
        placed, crosses = self._arena, self._crosses
        for other, c in behind.entries(far, len(behind)):
            walk_goes = crosses.get(other)
            there = (not walk_goes.isdisjoint(names) if walk_goes is not None
                     else placed[other] in arenas)
            if there and self._meets_in(other, c, targets):
                return other
        return None

    def goes(self, resident: str, t: float) -> None:
        """`resident`'s step at `t` goes on, nobody behind able to reach where it could be
        seen in time (`meets`): nobody is to walk into those places before then. Who could
        and was not behind (one waiting out an action, whom someone behind then talked to)
        is the one the rule did not see: `_start_walking` tells the engine
        (Engine.overtook)."""
        walk = self._walking.get(resident)
        if walk is not None and t < walk.arrival or resident not in self._arena:
            return
        asked = self._asked
        until = (asked[2] if asked is not None and asked[:2] == (resident, t)
                 else self._seen_until(resident, t, walk))
        promised = self._promised
        for arena, by in (until or {}).items():
            if by > promised.get(arena, -1.0):
                promised[arena] = by

    def _seen_until(self, resident: str, t: float, walk: _Walk | None
                    ) -> dict[Address, float] | None:
        """Each arena where `resident`'s step at `t` could be seen or could see, with the last
        moment that holds: where it is and where it is at `t`, until `t`. At a walk's arrival,
        also each arena the walk crossed, until it left it: the arrival ends the walk, and
        from then on the walker stands where it arrived, also to those who look at an earlier
        moment; so none of them may be able to look where the walk had it while it was there.
        An arena it left before anyone behind can look there is never read at that moment
        (the walk's early arenas, mostly). None: a tile outside every arena."""
        until = {self.arena_of(resident): t, self.world.arena_at(self.tile_at(resident, t)): t}
        if walk is not None:
            enters = walk.enters
            for i, entry in enumerate(enters):
                arena = self.world.arena_at(walk.path[entry.index])
                left = enters[i + 1].t if i + 1 < len(enters) else t
                until[arena] = max(until.get(arena, left), min(left, t))
        return None if None in until else until

    def _all_placed(self, behind) -> bool:
        """Whether every one of those `behind` is in the town (one who is not could be anywhere:
        `meets` reads them all). Nobody leaves the town and the engine's residents only grow,
        so once true for so many residents it stays true for as many or fewer: checked again
        only when there are more. (Fewer are one resident asked again alone: if that one
        were not in the town, the engine's full reading after it would find it.)"""
        if len(behind) > self._placed_for:
            if not all(name in self._arena for name, _c in behind.entries(0, len(behind))):
                return False
            self._placed_for = len(behind)
        return True

    def _meets_in(self, other: str, c: float,
                  targets: list[tuple[Address, float, list[array]]]) -> bool:
        """Whether `other`, at `c`, could be in one of the `targets` (arena, by when, its
        hops) in time. One standing is read here as `earliest` reads it (most of those asked
        stand)."""
        if other in self._walking or other not in self._arena:
            return any(self.earliest(other, c, arena) <= by for arena, by, _grid in targets)
        x, y = self._standing[other]
        spt = self._spt
        return any(c + grid[y][x] * spt <= by for _arena, by, grid in targets)

    def horizon(self) -> float:
        """How far (seconds) from the one furthest behind a step may be and still be clear of
        it: twice the farthest any tile is from an arena (every two tiles are within it of each
        other, through that arena), twice again for a walker that first ends its walk."""
        if self._horizon is None:
            arena, nowhere = self.world.arenas()[0], self._unreachable()
            farthest = max(h for row in self._hops(arena) for h in row if h < nowhere)
            self._horizon = 4 * farthest * self._spt
        return self._horizon

    def _unreachable(self) -> int:
        """The hops a grid holds for a tile no walk reaches: the area (farther than any path),
        or HOPS_CAP in a larger town."""
        return min(self.world.width * self.world.height, HOPS_CAP)

    def earliest(self, agent: str, c: float, arena: Address) -> float:
        """The earliest time `agent`, at simulated second `c`, could be in `arena`: walking is
        the only way to move, at WALKING_SPEED at most (`walk` holds to it), along the tiles;
        a walk under way goes where its path goes, then on from where it ends."""
        if agent not in self._arena:
            return c  # not in the town yet: anywhere
        spt = self._spt
        hops = self._hops(arena)
        walk = self._walking.get(agent)
        if walk is None:
            x, y = self._standing[agent]
            return c + hops[y][x] * spt
        now = tile_index(walk.t0, walk.seconds_per_tile, len(walk.path), c)
        if self.world.arena_at(walk.path[now]) == arena:
            return c
        for entry in walk.enters:
            if entry.index > now and entry.arena == str(arena):
                return max(c, entry.t)
        x, y = walk.path[-1]
        return max(c, walk.arrival) + hops[y][x] * spt

    def _hops(self, arena: Address) -> list[array]:
        """Tiles from each tile to the nearest of `arena`'s, along the walkable ones (a
        breadth-first search from all of the arena's tiles at once, scipy's, over the tile
        graph as a sparse matrix), as a grid; unreachable: `_unreachable()`. Computed once per
        arena, kept as rows of machine integers (read one at a time faster than a numpy array),
        2 bytes a tile: a town of 10,000 residents has 2,919 arenas of 123,000 tiles. In a town
        of more than HOPS_CAP tiles a longer count is kept as HOPS_CAP - 1: fewer tiles than
        the walk, so a resident is only ever thought nearer than it is (the rule stays safe)."""
        grid = self._hop_grids.get(arena)
        if grid is not None:
            return grid
        from scipy.sparse import csr_matrix  # here: a run without a town never needs them
        from scipy.sparse.csgraph import dijkstra

        world = self.world
        width, height = world.width, world.height
        if self._tile_matrix is None:  # every tile a node, numbered row by row
            edges = np.array([(ay * width + ax, by * width + bx)
                              for (ax, ay), (bx, by) in world.tile_graph.edges],
                             dtype=np.int64).reshape(-1, 2)
            ones = np.ones(len(edges), dtype=np.int8)
            self._tile_matrix = csr_matrix((ones, (edges[:, 0], edges[:, 1])),
                                           shape=(width * height, width * height))
        sources = [y * width + x for x, y in world.tiles(arena)]
        hops = dijkstra(self._tile_matrix, directed=False, indices=sources, unweighted=True,
                        min_only=True)
        far = self._unreachable()
        nowhere = ~np.isfinite(hops)
        hops = np.minimum(hops, far - 1)  # a path is shorter than the area: unchanged below
        hops[nowhere] = far
        rows = hops.astype(np.int16).reshape(height, width).tolist()
        grid = self._hop_grids[arena] = [array("h", row) for row in rows]
        return grid

    # -- checkpoint -----------------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        """Positions, walks under way and object states, as JSON data: who stands and walks
        by name (residents running ahead start and end their walks in any order), arenas in
        the order the town was entered in."""
        return {"standing": [[a, list(t)] for a, t in sorted(self._standing.items())],
                "walking": [[a, {"path": [list(t) for t in w.path], "t0": w.t0,
                                 "seconds_per_tile": w.seconds_per_tile, "next": w.next,
                                 "enters": [e.model_dump() for e in w.enters]}]
                            for a, w in sorted(self._walking.items())],
                "arena": [[a, str(arena)] for a, arena in self._arena.items()],
                "objects": sorted([str(o), state] for o, state in self._objects.items())}

    def set_state(self, state: dict[str, Any]) -> None:
        """Make this (new, empty) town the one `get_state` saw. Nothing is logged."""
        self._standing = {a: (int(t[0]), int(t[1])) for a, t in state["standing"]}
        self._walking, self._crossing, self._crosses = {}, {}, {}
        self._placed_for = -1
        for agent, w in state["walking"]:
            self._start_walking(agent, _Walk(
                [(int(x), int(y)) for x, y in w["path"]], w["t0"], w["seconds_per_tile"],
                [ArenaEntry(**e) for e in w["enters"]], w["next"]))
        self._arena, self._occupants = {}, {}
        for agent, arena in state["arena"]:
            address = self.world.resolve(arena)
            self._arena[agent] = address
            insort(self._occupants.setdefault(address, []), agent)
        self._objects = {self.world.resolve(o): s for o, s in state["objects"]}

    # -- objects --------------------------------------------------------------------------------
    def object_state(self, obj: Address | str) -> str:
        obj = self.world.resolve(obj)
        return self._objects.get(obj) or self.world.default_state(obj)

    def set_object_state(self, obj: Address | str, state: str, agent: str | None = None) -> None:
        """Change an object's state (the coffee machine is brewing). Logs `object_state`."""
        obj = self.world.resolve(obj)
        if obj.level != "object":
            raise AddressError(f"'{obj}' is not an object")
        self._objects[obj] = state
        self.engine.emit(ObjectStateChanged(t=self.engine.now, agent=agent, object=str(obj),
                                            state=state))
