"""The world's residents by name, as both the template checks (schema.py) and the instantiation
(instantiate.py) look them up; here so that neither module imports the other's internals."""

from __future__ import annotations

from worlds import Resident, World, world_residents

_RESIDENTS: dict[int, tuple[World, dict[str, Resident]]] = {}


def residents_of(world: World) -> dict[str, Resident]:
    """The world's residents by name, read once per world (parsing 25 files is not free)."""
    cached = _RESIDENTS.get(id(world))
    if cached is None or cached[0] is not world:
        cached = _RESIDENTS[id(world)] = (world, {r.name: r for r in world_residents(world)})
    return cached[1]
