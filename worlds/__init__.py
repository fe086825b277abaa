"""The tile world: map files, the location graph, paths, movement, residents, and positions
rebuilt from a log. See worlds/README.md."""

from .address import Address, AddressError
from .catalog import builtin_worlds, find_world, load_world, world_path, world_ref
from .mapfile import LegendEntry, WorldFile, load_world_file
from .residents import Resident, RoutineStep, load_resident, load_residents, world_residents
from .state import WALKING_SPEED, WorldState
from .trajectory import Leg, Trajectories, Visit, tile_index
from .world import Tile, World

__all__ = [
    "WALKING_SPEED", "Address", "AddressError", "Leg", "LegendEntry", "Resident", "RoutineStep",
    "Tile", "Trajectories", "Visit", "World", "WorldFile", "WorldState", "builtin_worlds",
    "find_world", "load_resident", "load_residents", "load_world", "load_world_file", "tile_index",
    "world_path", "world_ref", "world_residents",
]
