"""The map as the viewer draws it, laid out from the worlds package's own parsed world.

worlds/ reads and checks the map file (`worlds.load_world`: the YAML format of
worlds/README.md) and finds a world by name; this module only indexes what the drawing needs:
each tile's terrain, arena and object, the tiles of every sector, arena and object, and the
colours the legend gives.

    path = find_world_file(replay.header.world, run_dir)     # None: no such world
    world = load_world_map(path)                              # ReplayError: a bad map
    world.arena_of[(x, y)]; world.arenas["town:Harrow Park:lawn"].anchor_tile()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sandbox.errors import UserError
from sandbox.files import FileFormatError
from worlds import Address, World, find_world, load_world

from .source import ReplayError

SEP = ":"


@dataclass
class Place:
    """A sector, arena or object: its address and the tiles it covers."""

    address: str
    name: str
    tiles: list[tuple[int, int]] = field(default_factory=list)

    @property
    def centre(self) -> tuple[float, float]:
        """The mean of its tiles (in tile units, tile centres at +0.5)."""
        n = len(self.tiles) or 1
        return (sum(x for x, _ in self.tiles) / n + 0.5, sum(y for _, y in self.tiles) / n + 0.5)

    def anchor_tile(self) -> tuple[int, int]:
        """The tile of this place nearest its centre: where to put someone 'at' the place."""
        cx, cy = self.centre
        return min(self.tiles, key=lambda p: ((p[0] + 0.5 - cx) ** 2 + (p[1] + 0.5 - cy) ** 2,
                                              p))


@dataclass
class WorldMap:
    """What the drawing reads of a world: tiles -> terrain, arena and object address; the
    sectors, arenas and objects with their tiles (in map order); the legend's colours."""

    name: str
    title: str
    width: int
    height: int
    path: Path
    blocked: dict[tuple[int, int], str] = field(default_factory=dict)  # tile -> terrain
    arena_of: dict[tuple[int, int], str] = field(default_factory=dict)  # tile -> arena address
    object_of: dict[tuple[int, int], str] = field(default_factory=dict)  # tile -> object address
    sectors: dict[str, Place] = field(default_factory=dict)
    arenas: dict[str, Place] = field(default_factory=dict)
    objects: dict[str, Place] = field(default_factory=dict)
    # Colours the file gives (legend `color: "#rrggbb"`): per arena address, per terrain name.
    arena_colours: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    terrain_colours: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def sector_of(self, arena_address: str) -> str:
        return arena_address.rsplit(SEP, 1)[0]

    def place(self, address: str) -> Place | None:
        """The sector, arena or object an address names (longest known prefix)."""
        parts = address.split(SEP)
        for n in range(len(parts), 1, -1):
            key = SEP.join(parts[:n])
            for table in (self.objects, self.arenas, self.sectors):
                if key in table:
                    return table[key]
        return None

    def tile_of(self, address: str) -> tuple[int, int] | None:
        place = self.place(address)
        return place.anchor_tile() if place and place.tiles else None


def find_world_file(world: str | None, run_dir: Path) -> Path | None:
    """The map file a run's header names: a world name or a path, as the worlds package finds
    them (`worlds.find_world`), else a path relative to the run directory; None when neither."""
    if not world:
        return None
    return find_world(world) or find_world(run_dir / world)


def load_world_map(path: Path | str) -> WorldMap:
    """The map of a world file; a `ReplayError` names the file and the problem."""
    try:
        # Reachability is the engine's concern: a map is drawn even with a walled-in room.
        return world_map(load_world(path, check_reachable=False))
    except (FileFormatError, UserError) as exc:  # each names the file and the reason
        raise ReplayError(f"world map {exc}") from exc
    except OSError as exc:
        raise ReplayError(f"world map {path}: cannot read it ({exc})") from exc


def world_map(world: World) -> WorldMap:
    """The viewer's index of a loaded world, in the world's map order."""
    out = WorldMap(name=world.name, title=world.title, width=world.width, height=world.height,
                   path=world.source, blocked=dict(world.blocked),
                   arena_colours={str(a): c for a, c in world.arena_colours().items()},
                   terrain_colours=world.terrain_colours())
    for sector in world.sectors():
        out.sectors[str(sector)] = _place(world, sector)
    for address in world.arenas():
        arena = out.arenas[str(address)] = _place(world, address)
        out.arena_of.update(dict.fromkeys(arena.tiles, arena.address))
    for address in world.objects():
        obj = out.objects[str(address)] = _place(world, address)
        out.object_of.update(dict.fromkeys(obj.tiles, obj.address))
    return out


def _place(world: World, address: Address) -> Place:
    return Place(str(address), address.parts[-1], world.tiles(address))
