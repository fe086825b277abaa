"""The reference town: read Smallville ('the Ville') from a user's checkout of the Generative
Agents repository into our world format. Nothing of theirs ships here; see worlds/README.md.

The reference keeps its map as Tiled exports in a `matrix/` folder:

    maze_meta_info.json            world_name, maze_width, maze_height (tiles), sq_tile_size
    maze/collision_maze.csv        one block id per tile, row by row; non-zero: nobody walks here
    maze/sector_maze.csv           the sector block of each tile (0: none)
    maze/arena_maze.csv            the arena block of each tile
    maze/game_object_maze.csv      the game-object block of each tile
    maze/spawning_location_maze.csv  the spawning-spot block of each tile
    special_blocks/*_blocks.csv    what a block id names: "id, world, sector[, arena[, name]]"
                                   (objects use "<all>" for the arena: the tile's own arena)

What becomes what: a collision tile is blocked (`wall` inside a sector, `obstacle` outside);
one the reference labels with an arena is a wall seen as part of that arena (its perception
learns a room through its wall), of the piece of the arena it touches; every other tile
is the floor of its arena (sector and arena named as in the reference). Walkable
tiles the reference leaves without an arena still need one here: a sector's own become its
`grounds`, tiles outside every sector the `outdoors` sector. An arena drawn in several
unconnected pieces keeps its name on its piece in the town (the walkable ground holding the most
spawning spots), else on its largest; the others are `name (2)`, `name (3)`: the town's streets
are `outdoors:outdoors`, the bare ground outside its walls `outdoors (2)`.
Objects belong to the arena they lie in (tied legend entries, so none is guessed); an object
only on collision tiles cannot be stood at and is left out (reported). Spawning spots become
`spawns` named `sector:arena:sp-A`, each its own tile. Places no walk can reach are kept and listed
(`allow_unreachable`); a walk there fails and the agent stays where it is.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import yaml

from sandbox.files import FileFormatError

from .address import Address
from .mapfile import WorldFile
from .residents import Resident
from .ville_residents import find_personas, read_personas, read_start_date
from .world import World

MATRIX_IN_CHECKOUT = Path("environment/frontend_server/static_dirs/assets/the_ville/matrix")
META_FILE = "maze_meta_info.json"
MAZES = ("collision", "sector", "arena", "game_object", "spawning_location")
# Fields after the id in each special-blocks table: world, sector, arena, name.
BLOCK_FIELDS = {"sector": 2, "arena": 3, "game_object": 3, "spawning_location": 4}
OUTDOORS = "outdoors"  # sector and arena of walkable tiles outside every sector
GROUNDS = "grounds"  # arena of a sector's walkable tiles that no arena of the reference names
# Moving one tile per 10-second step, as the reference does, is 14 m at our 1.4 m/s walking
# pace: with this tile size walks take as long as in the reference.
REFERENCE_TILE_METERS = 14.0
WALL, OBSTACLE = "#", "^"


def invented(arena: Address) -> bool:
    """Whether an arena of an imported town is one the reference has no name for (a sector's
    `grounds`, the `outdoors` ground, and their pieces): its residents never know or learn it,
    since the reference's perception only records places its map names."""
    name = re.sub(r" \(\d+\)$", "", arena.arena or "")
    return name == GROUNDS or (arena.sector == OUTDOORS and name == OUTDOORS)


def _symbol_pool() -> list[str]:
    """Visible one-character symbols for the legend: ASCII first, then letters of other
    scripts (the town has a few hundred places; none of these needs quoting inside the grid)."""
    ascii_ = [c for c in string.ascii_letters + string.digits + string.punctuation
              if c not in f"{WALL}{OBSTACLE}\"'\\"]
    ranges = [(0x00C0, 0x024F), (0x0391, 0x03A9), (0x03B1, 0x03C9), (0x0410, 0x044F),
              (0x4E00, 0x9FFF)]
    others = [chr(c) for lo, hi in ranges for c in range(lo, hi + 1)
              if chr(c).isprintable() and chr(c) not in "×÷"]
    return ascii_ + others


@dataclass
class Matrix:
    """The reference matrix folder as read: grids of block ids and what each id names."""

    folder: Path
    title: str
    width: int
    height: int
    mazes: dict[str, list[list[int]]]  # maze -> rows of block ids
    blocks: dict[str, dict[int, tuple[str, ...]]]  # maze -> id -> (sector, arena, name) parts


def find_matrix(path: Path | str) -> Path:
    """The matrix folder: `path` itself, or where it lies in a checkout of the repository."""
    path = Path(path)
    for candidate in (path, path / MATRIX_IN_CHECKOUT):
        if (candidate / "maze").is_dir() or (candidate / META_FILE).exists():
            return candidate
    raise FileFormatError(path, f"not a matrix folder (no maze/ or {META_FILE}) and not a "
                                f"checkout holding {MATRIX_IN_CHECKOUT}")


def read_matrix(path: Path | str) -> Matrix:
    """Read and check every file of the matrix folder; FileFormatError names the file, the
    row/column or line, and the reason."""
    folder = find_matrix(path)
    title, width, height = _read_meta(folder / META_FILE)
    mazes = {m: _read_maze(folder / "maze" / f"{m}_maze.csv", width, height) for m in MAZES}
    blocks = {m: _read_blocks(folder / "special_blocks" / f"{m}_blocks.csv", n)
              for m, n in BLOCK_FIELDS.items()}
    for maze, table in blocks.items():
        path = folder / "maze" / f"{maze}_maze.csv"
        for y, row in enumerate(mazes[maze]):
            for x, block in enumerate(row):
                if block and block not in table:
                    raise FileFormatError(path, f"block id {block} is not in "
                                                f"special_blocks/{maze}_blocks.csv",
                                          f"row {y + 1}, column {x + 1}")
    return Matrix(folder, title, width, height, mazes, blocks)


def _read_meta(path: Path) -> tuple[str, int, int]:
    if not path.is_file():
        raise FileFormatError(path, "no such file: the matrix folder needs its meta info "
                                    "(world_name, maze_width, maze_height)")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"not valid JSON: {exc}") from exc
    if not isinstance(meta, dict):
        raise FileFormatError(path, "expected a JSON object")
    for key in ("maze_width", "maze_height"):
        value = meta.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise FileFormatError(path, f"{key} must be a positive whole number, not {value!r}",
                                  key)
    return str(meta.get("world_name") or "the Ville"), meta["maze_width"], meta["maze_height"]


def _read_maze(path: Path, width: int, height: int) -> list[list[int]]:
    """All block ids of a maze CSV (one line, as exported, or one line per row)."""
    if not path.is_file():
        raise FileFormatError(path, "no such file")
    values: list[int] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for cell in line.split(","):
            if not cell.strip():
                continue
            try:
                values.append(int(cell))
            except ValueError:
                n = len(values)
                raise FileFormatError(path, f"{cell.strip()!r} is not a block id (a whole "
                                            "number)", f"line {number}, row {n // width + 1}, "
                                                       f"column {n % width + 1}") from None
    if len(values) != width * height:
        raise FileFormatError(path, f"{len(values)} tiles, but {META_FILE} says {width} x "
                                    f"{height} = {width * height}")
    return [values[y * width:(y + 1) * width] for y in range(height)]


def _read_blocks(path: Path, fields: int) -> dict[int, tuple[str, ...]]:
    """id -> the names after the world (sector, arena, name), from 'id, world, ...' lines."""
    if not path.is_file():
        raise FileFormatError(path, "no such file")
    table: dict[int, tuple[str, ...]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != fields + 1 or not all(cells):
            raise FileFormatError(path, f"expected {fields + 1} comma-separated fields (id, "
                                        f"world, ...), found {len(cells)}", f"line {number}")
        try:
            block = int(cells[0])
        except ValueError:
            raise FileFormatError(path, f"{cells[0]!r} is not a block id", f"line {number}") \
                from None
        if block in table:
            raise FileFormatError(path, f"block id {block} is given twice", f"line {number}")
        names = tuple(cells[2:])
        for name in names:
            if ":" in name:
                raise FileFormatError(path, f"{name!r}: a place name here cannot hold ':'",
                                      f"line {number}")
        table[block] = names
    return table


@dataclass
class VilleWorld:
    """The converted town: the world file's data and what the conversion had to change."""

    data: dict  # a world file (worlds/mapfile.py) as Python data, grid included
    split: list[str] = field(default_factory=list)  # "sector:arena" drawn in pieces
    lost_objects: list[str] = field(default_factory=list)  # objects only on blocked tiles
    lost_spawns: list[str] = field(default_factory=list)  # spawning spots on blocked tiles


def convert(matrix: Matrix, name: str = "ville",
            tile_meters: float = REFERENCE_TILE_METERS) -> VilleWorld:
    """Our world file for the reference matrix (see the module docstring for the mapping)."""
    mazes, blocks = matrix.mazes, matrix.blocks

    def reference_place(x: int, y: int) -> tuple[str, str]:
        if mazes["arena"][y][x]:
            sector, arena = blocks["arena"][mazes["arena"][y][x]][:2]
            return sector, arena
        if mazes["sector"][y][x]:
            return blocks["sector"][mazes["sector"][y][x]][0], GROUNDS
        return OUTDOORS, OUTDOORS

    arena_of: dict[tuple[int, int], tuple[str, str]] = {}
    blocked: dict[tuple[int, int], str] = {}
    walls: dict[tuple[int, int], tuple[str, str]] = {}  # collision tiles the arena maze labels
    for y in range(matrix.height):
        for x in range(matrix.width):
            if mazes["collision"][y][x]:
                blocked[(x, y)] = "wall" if mazes["sector"][y][x] else "obstacle"
                if mazes["arena"][y][x]:
                    walls[(x, y)] = reference_place(x, y)
            else:
                arena_of[(x, y)] = reference_place(x, y)
    result = VilleWorld(data={})
    # Objects belong to the arena of their tile, as in the reference's addresses.
    objects: dict[tuple[int, int], str] = {}
    on_floor, on_blocked = set(), set()
    for y in range(matrix.height):
        for x in range(matrix.width):
            block = mazes["game_object"][y][x]
            if not block:
                continue
            obj = blocks["game_object"][block][-1]
            address = ":".join((*reference_place(x, y), obj))
            if (x, y) in blocked:
                on_blocked.add(address)
            else:
                on_floor.add(address)
                objects[(x, y)] = obj
    result.lost_objects = sorted(on_blocked - on_floor)
    named = dict(arena_of)  # the reference's names, before pieces are told apart
    _split_pieces(arena_of, result, _town_tiles(matrix, arena_of))
    seen = _wall_arenas(walls, named, arena_of)
    data = _world_file(matrix, name, tile_meters, arena_of, blocked, objects, seen)
    data["spawns"] = _spawns(matrix, name, arena_of, objects, result)
    result.data = data
    return result


def _town_tiles(matrix: Matrix, arena_of: dict[tuple[int, int], tuple[str, str]]
                ) -> set[tuple[int, int]]:
    """The walkable ground the residents spawn on (the piece of the map holding the most
    spawning spots): the town, whatever the size of the bare ground outside its walls."""
    graph = nx.Graph()
    graph.add_nodes_from(arena_of)
    for x, y in arena_of:
        for n in ((x + 1, y), (x, y + 1)):
            if n in arena_of:
                graph.add_edge((x, y), n)
    spawns = {(x, y) for y, row in enumerate(matrix.mazes["spawning_location"])
              for x, block in enumerate(row) if block and (x, y) in arena_of}
    pieces = sorted(nx.connected_components(graph), key=lambda p: (-len(spawns & p), -len(p)))
    return set(pieces[0]) if pieces and spawns else set()


def _split_pieces(arena_of: dict[tuple[int, int], tuple[str, str]], result: VilleWorld,
                  town: set[tuple[int, int]]) -> None:
    """Rename the other unconnected pieces of an arena `name (2)`, `name (3)`, ...: the plain
    name goes to its piece in the town (the largest such), else to its largest piece, so that
    `outdoors:outdoors` names the town's streets, not the ground outside its walls."""
    graph = nx.Graph()
    graph.add_nodes_from(arena_of)
    for (x, y), place in arena_of.items():
        for n in ((x + 1, y), (x, y + 1)):
            if arena_of.get(n) == place:
                graph.add_edge((x, y), n)
    pieces: dict[tuple[str, str], list[list[tuple[int, int]]]] = {}
    for piece in nx.connected_components(graph):
        tiles = sorted(piece, key=lambda t: (t[1], t[0]))
        pieces.setdefault(arena_of[tiles[0]], []).append(tiles)
    for (sector, arena), parts in sorted(pieces.items()):
        if len(parts) == 1:
            continue
        result.split.append(f"{sector}:{arena} ({len(parts)} pieces)")
        parts.sort(key=lambda p: (p[0] not in town, -len(p), p[0][1], p[0][0]))
        for number, piece in enumerate(parts[1:], 2):
            for tile in piece:
                arena_of[tile] = (sector, f"{arena} ({number})")


def _wall_arenas(walls: dict[tuple[int, int], tuple[str, str]],
                 named: dict[tuple[int, int], tuple[str, str]],
                 arena_of: dict[tuple[int, int], tuple[str, str]]
                 ) -> dict[tuple[int, int], tuple[str, str]]:
    """The arena each labelled collision tile is seen as: the piece of its arena whose floor it
    touches (of its eight neighbours, the first in map order), else the arena's own name; none
    when the arena has no floor at all (it is no place here)."""
    floors = set(arena_of.values())
    seen: dict[tuple[int, int], tuple[str, str]] = {}
    for (x, y), place in walls.items():
        touching = [arena_of[n] for n in ((x + dx, y + dy) for dy in (-1, 0, 1)
                                          for dx in (-1, 0, 1))
                    if named.get(n) == place]
        if touching:
            seen[(x, y)] = touching[0]
        elif place in floors:
            seen[(x, y)] = place
    return seen


def _world_file(matrix: Matrix, name: str, tile_meters: float,
                arena_of: dict[tuple[int, int], tuple[str, str]],
                blocked: dict[tuple[int, int], str], objects: dict[tuple[int, int], str],
                seen: dict[tuple[int, int], tuple[str, str]]) -> dict:
    pool = iter(_symbol_pool())
    legend: dict[str, dict] = {WALL: {"blocked": "wall"}, OBSTACLE: {"blocked": "obstacle"}}
    symbol_of: dict[tuple[str, ...], str] = {}

    def symbol(key: tuple[str, ...], entry: dict) -> str:
        if key not in symbol_of:
            try:
                symbol_of[key] = next(pool)
            except StopIteration:
                raise FileFormatError(matrix.folder, "more places than legend symbols") from None
            legend[symbol_of[key]] = entry
        return symbol_of[key]

    rows = []
    for y in range(matrix.height):
        row = []
        for x in range(matrix.width):
            tile = (x, y)
            if tile in seen:
                sector, arena = seen[tile]
                row.append(symbol((blocked[tile], sector, arena, ""),
                                  {"blocked": blocked[tile], "sector": sector, "arena": arena}))
            elif tile in blocked:
                row.append(WALL if blocked[tile] == "wall" else OBSTACLE)
            elif tile in objects:
                sector, arena = arena_of[tile]
                row.append(symbol((sector, arena, objects[tile]),
                                  {"sector": sector, "arena": arena, "object": objects[tile]}))
            else:
                sector, arena = arena_of[tile]
                row.append(symbol((sector, arena), {"sector": sector, "arena": arena}))
        rows.append("".join(row))
    used = {c for row in rows for c in row}
    legend = {s: e for s, e in legend.items() if s in used}
    return {
        "name": name, "title": matrix.title,
        "description": "Imported from the Generative Agents reference matrix "
                       f"({matrix.width}x{matrix.height} tiles) by sandbox import-ville.",
        "tile_meters": tile_meters, "allow_unreachable": True, "legend": legend,
        "grid": "\n".join(rows),
    }


def _spawns(matrix: Matrix, name: str, arena_of: dict, objects: dict,
            result: VilleWorld) -> dict[str, list[int]]:
    spawns: dict[str, list[int]] = {}
    counts: Counter[str] = Counter()
    for y in range(matrix.height):
        for x in range(matrix.width):
            block = matrix.mazes["spawning_location"][y][x]
            if not block:
                continue
            sector, arena, spot = matrix.blocks["spawning_location"][block]
            label = f"{sector}:{arena}:{spot}"
            if (x, y) not in arena_of:
                result.lost_spawns.append(label)
                continue
            counts[label] += 1
            if counts[label] > 1:
                label = f"{label} ({counts[label]})"
            spawns[label] = [x, y]  # the spot itself: two spots in one place stay two
    return spawns


def world_yaml(data: dict) -> str:
    """The world file's text: fields as YAML, the grid as a literal block, one row a line."""
    head = {k: v for k, v in data.items() if k != "grid"}
    text = "# Imported from a checkout of the Generative Agents repository (not part of this\n" \
           "# project; see worlds/README.md). Re-create it with `sandbox import-ville`.\n"
    text += yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=100)
    rows = data["grid"].split("\n")
    return text + "grid: |\n" + "".join(f"  {row}\n" for row in rows)


@dataclass
class Imported:
    """What `import_ville` wrote: the world file, the loaded world, the residents."""

    world_file: Path
    world: World
    residents: list[Resident]
    converted: VilleWorld
    personas: Path | None  # where the residents came from (None: no storage base found)
    notes: list[str] = field(default_factory=list)  # what the personas' files lost on the way


def import_ville(source: Path | str, out: Path | str, *, personas: Path | str | None = None,
                 name: str = "ville", tile_meters: float = REFERENCE_TILE_METERS) -> Imported:
    """Read the reference matrix (a checkout or the matrix folder) and, when given or found in
    the checkout, its storage base's personas; check everything; then write `out/<name>.yaml`
    and `out/residents/*.yaml`. Nothing is written when anything is wrong."""
    out = Path(out)
    converted = convert(read_matrix(source), name, tile_meters)
    if personas is None:
        try:
            personas = find_personas(source)
        except FileFormatError:
            personas = None  # a bare matrix folder: the town without its people
    data = converted.data
    if personas is not None:
        data["residents"] = "residents"
        start = read_start_date(find_personas(personas).parent)
        if start is not None:  # the day the reference's own runs of this town start
            data["start_date"] = start
    world_file = out / f"{name}.yaml"
    # homes=[]: where people live is not known until the personas are read (and a residents/
    # folder left by an earlier import must not count); the spawning spots say it meanwhile.
    world = World(WorldFile.model_validate(data), world_file, homes=[])
    notes: list[str] = []
    residents = read_personas(personas, world, notes) if personas is not None else []
    out.mkdir(parents=True, exist_ok=True)
    world_file.write_text(world_yaml(data), encoding="utf-8")
    if personas is not None:
        folder = out / "residents"
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.yaml"):  # a re-import must not keep people no longer there
            old.unlink()
        for resident in residents:
            slug = "_".join(w for w in "".join(c if c.isalnum() else " " for c in
                                               resident.name.lower()).split())
            text = yaml.safe_dump(resident.model_dump(mode="json", exclude_defaults=True),
                                  sort_keys=False,
                                  allow_unicode=True, width=100)
            (folder / f"{slug}.yaml").write_text(text, encoding="utf-8")
    return Imported(world_file, World.load(world_file), residents, converted,
                    Path(personas) if personas is not None else None, notes)
