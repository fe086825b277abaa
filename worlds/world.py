"""The World: a tile grid labelled with sectors, arenas and objects, its walkable-tile graph, the
location graph of places, and shortest paths from a tile to an address.

A World is immutable once built and checks everything while building: a bad file raises
`FileFormatError` (file, grid row/column or field, reason) and no World exists half-way.
Live facts (who stands where now, object states) live in `WorldState`.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from collections import Counter, OrderedDict, deque
from pathlib import Path

import networkx as nx

from sandbox.files import FileFormatError, read_data

from .address import Address, AddressError
from .mapfile import LegendEntry, WorldFile, load_world_file

Tile = tuple[int, int]  # (x, y) = (column, row), 0-based
DEFAULT_OBJECT_STATE = "idle"
_SINK = ("target",)  # a node no tile can be: the super-source of a multi-target search
# Search trees kept, one per destination (about 0.3 MB each on the town). 256 holds every place
# of the town (62 arenas + 192 objects); with 128, a day visiting more places than that evicted
# trees it needed again, and a 'cached' query cost as much as a cold one.
PATH_CACHE_SIZE = 256


def _natural(place: Address) -> list:
    """Sort key that puts 'room 2' before 'room 10'."""
    return [int(part) if part.isdigit() else part.lower()
            for part in re.split(r"(\d+)", str(place))]


def _grid_graph(tiles: list[Tile]) -> nx.Graph:
    """The 4-connected graph over `tiles`, given row-major: each tile's right and lower edges
    added in that order, so every graph built from the same tiles lists each tile's neighbours
    in the same order, and searches (and so paths) are the same from run to run."""
    graph = nx.Graph()
    graph.add_nodes_from(tiles)
    for x, y in tiles:
        for n in ((x + 1, y), (x, y + 1)):
            if n in graph:
                graph.add_edge((x, y), n)
    return graph


class World:
    """A loaded, validated tile world. Build one with `World.load(path)` or `load_world(name)`."""

    def __init__(self, spec: WorldFile, source: Path | str | None = None, *,
                 first_row_line: int = 0, check_reachable: bool = True,
                 homes: list[str] | None = None):
        self.spec = spec
        self.source = Path(source) if source else Path(f"<{spec.name}>")
        self.name = spec.name
        self.title = spec.title or spec.name
        self.start_date = spec.start_date  # the day a day here starts by default (None: ours)
        self.tile_meters = spec.tile_meters
        self._line0 = first_row_line
        self.rows = spec.rows()
        if not self.rows:
            self._fail("the grid is empty", "grid")
        self.height = len(self.rows)
        self.width = len(self.rows[0])
        self.root = Address((self.name,))
        self._check_shape()
        self._symbols = self._symbol_places()
        self.blocked: dict[Tile, str] = {}  # tile -> terrain name
        self._arena_of: dict[Tile, Address] = {}
        self._object_of: dict[Tile, Address] = {}
        self._wall_of: dict[Tile, Address] = {}  # blocked tiles seen as part of an arena
        self._label_tiles()
        self.tile_graph = self._build_tile_graph()
        self._tiles: dict[Address, list[Tile]] = self._index_places()
        self._check_walls()
        # What a tile shows someone looking at it: its arena, walls included.
        self._seen_as: dict[Tile, Address] = {**self._arena_of, **self._wall_of}
        # The places of a level, and those within a place, asked for again and again (a town
        # of 1,000 residents asks each sector's arenas a million times while it builds their
        # known places): computed once each, the world being immutable.
        self._places_of: dict[str, tuple[Address, ...]] = {}
        self._within: dict[tuple[str, Address], tuple[Address, ...]] = {}
        self._check_arenas_connected()
        self.location_graph = self._build_location_graph()
        self._by_lower = {str(a).lower(): a for a in self._tiles}
        # Spawning spots: each its tile (a spot given as a tile stays that tile, so two spots in
        # one arena stay two) and the place it is in.
        self.spawn_tiles: dict[str, Tile] = {}
        self.spawns: dict[str, Address] = {}
        for who, where in spec.spawns.items():
            if isinstance(where, tuple):
                if where not in self.tile_graph:
                    self._fail(f"tile {list(where)} is not a walkable tile", f"spawns.{who}")
                self.spawn_tiles[who], self.spawns[who] = where, self.place_at(where)
            else:
                self.spawns[who] = self._resolve_field(where, f"spawns.{who}")
                self.spawn_tiles[who] = self.tile_for(self.spawns[who])
        # Walkable areas: pieces of ground no walk joins, each in map order of its first tile.
        self.areas: list[list[Tile]] = sorted(
            (sorted(piece, key=lambda t: (t[1], t[0]))
             for piece in nx.connected_components(self.tile_graph)),
            key=lambda tiles: (tiles[0][1], tiles[0][0]))
        self._area_index = {tile: i for i, area in enumerate(self.areas) for tile in area}
        self.homes: list[Address] = self._resident_homes() if homes is None else [
            self.resolve(h) for h in homes]
        self.town_area, self.town_rule = self._town_area()
        self.unreachable: list[Address] = [a for a in self.arenas()
                                           if self.area_of(a) != self.town_area]
        if check_reachable and self.unreachable and not spec.allow_unreachable:
            arena = self.unreachable[0]
            self._fail(f"arena '{arena}' cannot be reached from {self.town_rule} "
                       "(walled in, or no door)", self._cell(*self._tiles[arena][0]))
        self._default_states = self._check_object_states()
        self._trees: OrderedDict[Address, dict[Tile, Tile]] = OrderedDict()
        # One world serves the episodes a suite runs side by side (--jobs): the cache of
        # search trees is shared, so its reads and writes take turns.
        self._trees_lock = threading.Lock()
        self._insides: dict[Address, nx.Graph] = {}  # path_inside's graphs, under the same lock

    # -- loading --------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path | str, *, check_reachable: bool = True) -> World:
        spec, first_row_line = load_world_file(path)
        return cls(spec, path, first_row_line=first_row_line, check_reachable=check_reachable)

    def _fail(self, reason: str, where: str = "") -> None:
        raise FileFormatError(self.source, reason, where)

    def _cell(self, x: int, y: int) -> str:
        line = f" (file line {self._line0 + y})" if self._line0 else ""
        return f"grid row {y + 1}, column {x + 1}{line}"

    def _check_shape(self) -> None:
        for y, row in enumerate(self.rows):
            if len(row) != self.width:
                self._fail(f"ragged grid: this row has {len(row)} columns, the first row has "
                           f"{self.width}", self._cell(min(len(row), self.width), y))
            for x, symbol in enumerate(row):
                if symbol not in self.spec.legend:
                    what = "a space" if symbol == " " else f"symbol {symbol!r}"
                    self._fail(f"{what} that the legend does not define", self._cell(x, y))

    def _symbol_places(self) -> dict[str, Address]:
        """Address of each floor symbol and each object symbol tied to an arena."""
        places: dict[str, Address] = {}
        first: dict[Address, str] = {}
        used = {symbol for row in self.rows for symbol in row}
        for symbol, entry in self.spec.legend.items():
            if symbol not in used and entry.blocked is None:
                self._fail(f"{self._describe(entry)} is never drawn on the grid, so no tile "
                           "would reach it", f"legend.{symbol}")
            if entry.arena is None or entry.blocked is not None:  # a wall names no new place
                continue
            address = Address.of(self.name, entry.sector, entry.arena, entry.object)
            if address in first:
                self._fail(f"duplicate place: '{address}' is also symbol {first[address]!r}",
                           f"legend.{symbol}")
            first[address] = symbol
            places[symbol] = address
        return places

    @staticmethod
    def _describe(entry: LegendEntry) -> str:
        if entry.arena:
            return f"'{entry.sector}:{entry.arena}" + (f":{entry.object}'" if entry.object
                                                       else "'")
        return f"object '{entry.object}'"

    def _label_tiles(self) -> None:
        legend = self.spec.legend
        loose: list[Tile] = []  # object tiles whose arena is the floor around them
        for y, row in enumerate(self.rows):
            for x, symbol in enumerate(row):
                entry = legend[symbol]
                if entry.blocked is not None:
                    self.blocked[(x, y)] = entry.blocked
                    if entry.arena is not None:
                        self._wall_of[(x, y)] = Address.of(self.name, entry.sector, entry.arena)
                elif entry.arena is not None:
                    place = self._symbols[symbol]
                    self._arena_of[(x, y)] = place.up_to("arena")
                    if place.object:
                        self._object_of[(x, y)] = place
                else:
                    loose.append((x, y))
        # Neighbouring loose object tiles form one piece of furniture; it belongs to the one
        # arena whose floor touches it.
        for piece in nx.connected_components(_grid_graph(loose)):
            piece = sorted(piece, key=lambda t: (t[1], t[0]))
            arenas = sorted({self._arena_of[n] for t in piece for n in self._neighbours(t)
                             if n in self._arena_of})
            if len(arenas) != 1:
                name = legend[self.rows[piece[0][1]][piece[0][0]]].object
                reason = (f"object '{name}' touches no arena floor" if not arenas else
                          f"object '{name}' touches {len(arenas)} arenas "
                          f"({', '.join(str(a) for a in arenas)}); place it inside one")
                self._fail(reason, self._cell(*piece[0]))
            for x, y in piece:
                self._arena_of[(x, y)] = arenas[0]
                self._object_of[(x, y)] = Address.of(*arenas[0].parts,
                                                     legend[self.rows[y][x]].object)

    def _neighbours(self, tile: Tile) -> list[Tile]:
        x, y = tile
        return [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= x + dx < self.width and 0 <= y + dy < self.height]

    def _build_tile_graph(self) -> nx.Graph:
        return _grid_graph([(x, y) for y in range(self.height) for x in range(self.width)
                            if (x, y) not in self.blocked])

    def _index_places(self) -> dict[Address, list[Tile]]:
        tiles: dict[Address, list[Tile]] = {self.root: []}
        for tile in self.tile_graph:  # row-major
            arena = self._arena_of[tile]
            places = [self.root, arena.up_to("sector"), arena]
            if tile in self._object_of:
                places.append(self._object_of[tile])
            for place in places:
                tiles.setdefault(place, []).append(tile)
        return tiles

    def _check_walls(self) -> None:
        """A wall seen as part of an arena names an arena whose floor is drawn."""
        for (x, y), arena in self._wall_of.items():
            if arena not in self._tiles:
                self._fail(f"a wall seen as part of '{arena}', which has no floor on the grid",
                           self._cell(x, y))

    def _check_arenas_connected(self) -> None:
        for arena in self.arenas():
            pieces = sorted((sorted(p, key=lambda t: (t[1], t[0])) for p in
                             nx.connected_components(self.tile_graph.subgraph(self._tiles[arena]))),
                            key=len, reverse=True)
            if len(pieces) > 1:
                self._fail(f"arena '{arena}' is split into {len(pieces)} unconnected pieces; "
                           f"a smaller piece ({len(pieces[-1])} tiles) starts here",
                           self._cell(*pieces[-1][0]))

    def _resident_homes(self) -> list[Address]:
        """The living areas of the residents the file points to (`residents:`), read here only
        to know where people live; `world_residents` checks those files in full."""
        if not self.spec.residents:
            return []
        folder = (self.source.parent / self.spec.residents).resolve()
        if not folder.is_dir():
            return []  # world_residents reports the missing directory with its path
        homes = []
        for path in sorted(folder.glob("*.yaml")):
            data = read_data(path)
            where = data.get("living_area") if isinstance(data, dict) else None
            if not isinstance(where, str):
                raise FileFormatError(path, "a resident needs a living_area (an address in "
                                            f"world '{self.name}')", "living_area")
            try:
                homes.append(self.resolve(where))
            except AddressError as exc:
                raise FileFormatError(path, str(exc), "living_area") from exc
        return homes

    def _town_area(self) -> tuple[int, str]:
        """The walkable area people live in: the one holding the most homes and spawning
        spots. Never the largest by tiles: an imported map's bare ground outside the town's
        boundary can be bigger than the town. A map with neither homes nor spawns has only its
        places to go by: the area holding the most arenas."""
        if len(self.areas) == 1:
            return 0, "the rest of the map"
        people = Counter([*(self.area_of(h) for h in self.homes),
                          *(self._area_index[t] for t in self.spawn_tiles.values())])
        if people:
            area = min(people, key=lambda a: (-people[a], a))
            return area, "where the residents live and spawn"
        arenas = Counter(self.area_of(a) for a in self.arenas())
        return min(arenas, key=lambda a: (-arenas[a], a)), "the area holding most places"

    def areas_of(self, place: Address | str) -> set[int]:
        """The indexes in `areas` of the walkable areas a place lies in: one for an arena or an
        object (each is one piece), those of its arenas for a sector (or the world)."""
        address = self.resolve(place)
        if address.level in ("arena", "object"):
            return {self._area_index[self._tiles[address][0]]}
        return {self._area_index[self._tiles[a][0]] for a in self.arenas(address)}

    def area_of(self, place: Address | str) -> int:
        """The index in `areas` of the walkable area holding a place. A sector is judged by
        its arenas, never by its first tile (which may lie on a cut-off piece of its ground):
        the town's area when any of its arenas is there, else the first of theirs."""
        areas = self.areas_of(place)
        town = getattr(self, "town_area", None)  # (not yet known while the town is found)
        return town if town in areas else min(areas)

    def reachable(self, place: Address | str, start: Address | str) -> bool:
        """Whether a walk from `start` can get to `place` (a sector: to any of its arenas)."""
        return bool(self.areas_of(place) & self.areas_of(start))

    def areas_summary(self) -> list[dict]:
        """Each walkable area: its size, arenas, homes and spawning spots (`sandbox world`)."""
        rows = []
        for i, tiles in enumerate(self.areas):
            arenas = [str(a) for a in self.arenas() if self.area_of(a) == i]
            rows.append({"area": i + 1, "tiles": len(tiles), "first_tile": list(tiles[0]),
                         "arenas": len(arenas),
                         "homes": sum(self.area_of(h) == i for h in self.homes),
                         "spawns": sum(self._area_index[t] == i
                                       for t in self.spawn_tiles.values()),
                         "town": i == self.town_area})
        return rows

    def _build_location_graph(self) -> nx.DiGraph:
        graph = nx.DiGraph()
        for place in self._tiles:
            graph.add_node(str(place), level=place.level)
            if len(place.parts) > 1:
                graph.add_edge(str(Address(place.parts[:-1])), str(place), relation="contains")
        for a, b in self.tile_graph.edges:
            arena_a, arena_b = self._arena_of[a], self._arena_of[b]
            if arena_a != arena_b:
                graph.add_edge(str(arena_a), str(arena_b), relation="door")
                graph.add_edge(str(arena_b), str(arena_a), relation="door")
        return graph

    def _resolve_field(self, text: str, field: str) -> Address:
        try:
            return self.resolve(text)
        except AddressError as exc:
            self._fail(str(exc), field)

    def _check_object_states(self) -> dict[str, str]:
        names = {a.object for a in self._tiles if a.object}
        states: dict[str, str] = {}
        for key, state in self.spec.object_states.items():
            if key in names:
                states[key] = state
            else:
                states[str(self._resolve_field(key, f"object_states.{key}"))] = state
        return states

    # -- places ---------------------------------------------------------------------------------
    def places(self, level: str) -> list[Address]:
        """Every place of one level (sector, arena, object), in map order."""
        return list(self._places(level))

    def _places(self, level: str) -> tuple[Address, ...]:
        if level not in self._places_of:
            self._places_of[level] = tuple(sorted((a for a in self._tiles if a.level == level),
                                                  key=self._map_order))
        return self._places_of[level]

    def _places_within(self, level: str, within: Address | str) -> list[Address]:
        scope = self.resolve(within)
        key = (level, scope)
        if key not in self._within:
            self._within[key] = tuple(a for a in self._places(level) if scope.contains(a))
        return list(self._within[key])

    def _map_order(self, place: Address) -> tuple:
        x, y = self._tiles[place][0]
        return (y, x, place.parts)

    def sectors(self) -> list[Address]:
        return self.places("sector")

    def arenas(self, within: Address | str | None = None) -> list[Address]:
        """Arenas of the world, or of one sector."""
        return self.places("arena") if within is None else self._places_within("arena", within)

    def objects(self, within: Address | str | None = None) -> list[Address]:
        return self.places("object") if within is None else self._places_within("object",
                                                                                 within)

    def doors(self, arena: Address | str) -> list[Address]:
        """Arenas one step from `arena` (they share a walkable edge: a door or open ground)."""
        arena = self.resolve(arena)
        return sorted(Address.parse(n) for n in self.location_graph.successors(str(arena))
                      if self.location_graph.edges[str(arena), n]["relation"] == "door")

    def tiles(self, place: Address | str) -> list[Tile]:
        """The walkable tiles of a place, in map order (row by row)."""
        return list(self._tiles[self.resolve(place)])

    def has(self, place: Address | str) -> bool:
        try:
            self.resolve(place)
        except AddressError:
            return False
        return True

    def resolve(self, text: Address | str) -> Address:
        """The address `text` names in this world, ignoring case and spaces around parts.

        The world part may be left out (`Copper Kettle Cafe:dining room`). Raises AddressError
        naming the closest known addresses when there is no such place.
        """
        if isinstance(text, Address) and text in self._tiles:
            return text
        address = Address.parse(text)
        found = self._by_lower.get(str(address).lower())
        if found is None and address.world.lower() != self.name.lower() and len(address.parts) < 4:
            found = self._by_lower.get(f"{self.name}:{address}".lower())
        if found is None:
            close = difflib.get_close_matches(str(address).lower(), list(self._by_lower), n=3)
            hint = f"; did you mean {', '.join(repr(str(self._by_lower[c])) for c in close)}?" \
                if close else ""
            raise AddressError(f"no place '{address}' in world '{self.name}'{hint}")
        return found

    # -- tiles ----------------------------------------------------------------------------------
    def walkable(self, tile: Tile) -> bool:
        return tile in self.tile_graph

    def arena_at(self, tile: Tile) -> Address | None:
        """The arena a walkable tile belongs to (None for a blocked or outside tile)."""
        return self._arena_of.get(tile)

    def place_at(self, tile: Tile) -> Address | None:
        """The most precise address of a tile: its object if it has one, else its arena."""
        return self._object_of.get(tile) or self._arena_of.get(tile)

    def tile_for(self, place: Address | str) -> Tile:
        """A fixed tile to put someone at a place: the middle tile of the place in map order."""
        tiles = self._tiles[self.resolve(place)]
        return tiles[len(tiles) // 2]

    def arenas_near(self, tiles: list[Tile], radius: int) -> set[Address]:
        """The arenas seen within `radius` tiles of any of `tiles`, as the reference perceives
        (its maze.get_nearby_tiles): a square of side 2 * radius + 1, walls seen as part of an
        arena included (a room is learned through its wall at the square's edge), and never
        the map's last column or row (the reference's bound stops one short there)."""
        rows: dict[int, list[tuple[int, int]]] = {}  # row -> x intervals the squares cover
        for x, y in tiles:
            for row in range(max(0, y - radius), min(self.height - 1, y + radius + 1)):
                rows.setdefault(row, []).append((max(0, x - radius),
                                                 min(self.width - 2, x + radius)))
        found: set[Address] = set()
        for y, spans in rows.items():
            spans.sort()
            reach = -1  # columns up to here are done: overlapping squares are read once
            for lo, hi in spans:
                for x in range(max(lo, reach + 1), hi + 1):
                    arena = self._seen_as.get((x, y))
                    if arena is not None:
                        found.add(arena)
                reach = max(reach, hi)
        return found

    def default_state(self, obj: Address | str) -> str:
        obj = self.resolve(obj)
        return self._default_states.get(str(obj), self._default_states.get(
            obj.object or "", DEFAULT_OBJECT_STATE))

    # -- colours --------------------------------------------------------------------------------
    def arena_colours(self) -> dict[Address, tuple[int, int, int]]:
        """The floor colour the legend gives an arena (`color` on its floor symbol), for
        renderers; arenas without one are left out (each renderer picks its own)."""
        return {Address.of(self.name, e.sector, e.arena): e.rgb
                for e in self.spec.legend.values()
                if e.arena and not e.object and e.blocked is None and e.rgb}

    def terrain_colours(self) -> dict[str, tuple[int, int, int]]:
        """The colour the legend gives a blocked terrain (`{blocked: water, color: ...}`)."""
        return {e.blocked: e.rgb for e in self.spec.legend.values()
                if e.blocked is not None and e.rgb}

    # -- paths ----------------------------------------------------------------------------------
    def path(self, start: Tile, to: Address | str) -> list[Tile]:
        """The shortest walk from `start` to the nearest tile of `to`, both ends included.

        4-connected moves over walkable tiles. One breadth-first search per destination is
        cached (networkx, from all the destination's tiles at once), so a repeated destination
        costs only the walk along the tree.
        """
        target = self.resolve(to)
        start = (int(start[0]), int(start[1]))
        if start not in self.tile_graph:
            raise AddressError(f"tile {start} is not a walkable tile of world '{self.name}'")
        tree = self._tree(target)
        if start not in tree:
            raise AddressError(f"'{target}' cannot be reached from tile {start}")
        path = [start]
        step = tree[start]
        while step is not _SINK:  # each tile's parent is its next step; targets hang off _SINK
            path.append(step)
            step = tree[step]
        return path

    def _tree(self, target: Address) -> dict[Tile, Tile]:
        with self._trees_lock:
            tree = self._trees.get(target)
            if tree is not None:
                self._trees.move_to_end(target)
                return tree
        tree = self._search(target)
        with self._trees_lock:
            self._trees[target] = tree
            if len(self._trees) > PATH_CACHE_SIZE:
                self._trees.popitem(last=False)
        return tree

    def _search(self, target: Address) -> dict[Tile, Tile]:
        """Breadth-first search out of every tile of `target` at once: each tile reached ->
        its next step towards the place (the place's own tiles -> _SINK). The same tree as a
        search from a super-source joined to those tiles, without adding that node to the
        graph, which other episodes may be reading meanwhile."""
        graph = self.tile_graph
        tree: dict[Tile, Tile] = {}
        queue: deque[Tile] = deque()
        for tile in self._tiles[target]:
            if tile not in tree:
                tree[tile] = _SINK
                queue.append(tile)
        while queue:
            tile = queue.popleft()
            for step in graph[tile]:
                if step not in tree:
                    tree[step] = tile
                    queue.append(step)
        return tree

    def spot(self, place: Address | str, who: str) -> Tile:
        """Where `who` stands in a place: a tile of its own, fixed by a hash of the name and the
        place, so people spread over a room instead of piling up on its door tile."""
        tiles = self._tiles[self.resolve(place)]
        digest = hashlib.sha256(f"{who}|{place}".encode()).digest()
        return tiles[int.from_bytes(digest[:4], "big") % len(tiles)]

    def path_inside(self, start: Tile, goal: Tile, place: Address | str) -> list[Tile]:
        """The shortest walk between two tiles of one place, not leaving it (both ends
        included); just [start] when the place splits them apart."""
        try:
            return nx.shortest_path(self._inside(self.resolve(place)), start, goal)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return [start]

    def _inside(self, place: Address) -> nx.Graph:
        """A place's walkable tiles as a graph of their own, built once and kept: searching the
        town's graph through a view kept to the place filtered every neighbour of every step
        (a 4,000-resident day spent 33 s there). Built as the town's graph is (`_grid_graph`,
        row-major), each tile lists its neighbours in the same order, so a search takes the
        same steps, to the same path."""
        with self._trees_lock:
            graph = self._insides.get(place)
        if graph is not None:
            return graph
        graph = _grid_graph(sorted((t for t in self._tiles[place] if t in self.tile_graph),
                                   key=lambda t: (t[1], t[0])))
        with self._trees_lock:
            self._insides[place] = graph
        return graph

    def seconds_per_tile(self, speed: float) -> float:
        """Seconds to cross one tile at `speed` metres per second."""
        return self.tile_meters / speed

    def travel_time(self, path: list[Tile], speed: float) -> float:
        """Seconds to walk `path` at `speed` metres per second."""
        return max(len(path) - 1, 0) * self.seconds_per_tile(speed)

    # -- summary --------------------------------------------------------------------------------
    def summary(self) -> dict:
        """Counts and the place tree, for `sandbox world` and for people reading a map."""
        sectors = {}
        for sector in sorted(self.sectors(), key=_natural):
            sectors[sector.sector] = {
                arena.arena: [o.object for o in self.objects(arena)]
                for arena in sorted(self.arenas(sector), key=_natural)}
        return {
            "name": self.name, "title": self.title, "file": str(self.source),
            "size": [self.width, self.height], "walkable_tiles": len(self.tile_graph),
            "sectors": len(self.sectors()), "arenas": len(self.arenas()),
            "objects": len(self.objects()), "places": sectors,
            "unreachable": [str(a) for a in self.unreachable],
            "town_area": self.town_area + 1, "town_rule": self.town_rule,
            "areas": self.areas_summary(),
            "spawns": {k: str(v) for k, v in self.spawns.items()},
            "spawn_tiles": {k: list(t) for k, t in self.spawn_tiles.items()},
        }

    def __repr__(self) -> str:
        return (f"World({self.name!r}, {self.width}x{self.height}, {len(self.sectors())} sectors,"
                f" {len(self.arenas())} arenas)")
