"""Worlds by name or path: the built-in ones (`town`, `single_room`, files in `maps/`), worlds
imported from another project into `imported/<name>/<name>.yaml` (never committed: `sandbox
import-ville` writes the reference town there), or any world file by path."""

from __future__ import annotations

from pathlib import Path

from sandbox.errors import UserError

from .world import World

MAPS_DIR = Path(__file__).with_name("maps")
IMPORTED_DIR = Path(__file__).with_name("imported")
_loaded: dict[tuple[Path, float, bool], World] = {}


def builtin_worlds() -> list[str]:
    """Names of the worlds loadable by name: those in worlds/maps/ and those imported."""
    imported = [p.parent.name for p in IMPORTED_DIR.glob("*/*.yaml") if p.stem == p.parent.name]
    return sorted({p.stem for p in MAPS_DIR.glob("*.yaml")} | set(imported))


def find_world(name_or_path: str | Path) -> Path | None:
    """The file of a world name (built-in or imported), or the path itself (a world file, or a
    directory holding one world file named like the directory, as an import writes); None
    when there is no such world."""
    text = str(name_or_path)
    for candidate in (MAPS_DIR / f"{text}.yaml", IMPORTED_DIR / text / f"{text}.yaml"):
        if "/" not in text and candidate.is_file():
            return candidate
    path = Path(text)
    if path.is_file():
        return path
    if path.is_dir() and (path / f"{path.name}.yaml").is_file():
        return path / f"{path.name}.yaml"
    return None


def world_path(name_or_path: str | Path) -> Path:
    """`find_world`, or a UserError listing the worlds known by name."""
    found = find_world(name_or_path)
    if found is None:
        raise UserError(f"no world file {str(name_or_path)!r} and no world of that name "
                        f"(by name: {', '.join(builtin_worlds())}; import the reference town "
                        "with `sandbox import-ville`)")
    return found


def world_ref(world: World) -> str:
    """How a run names its world so that it loads again: the name when the name finds this very
    file, else the file's absolute path."""
    found = find_world(world.name)
    if found is not None and found.resolve() == world.source.resolve():
        return world.name
    return str(world.source.resolve())


def load_world(name_or_path: str | Path, *, check_reachable: bool = True) -> World:
    """Load a world by name or path. Loaded worlds are shared (they are immutable apart from
    their path cache), so many episodes in one process build the map once."""
    path = world_path(name_or_path).resolve()
    key = (path, path.stat().st_mtime, check_reachable)
    if key not in _loaded:
        _loaded[key] = World.load(path, check_reachable=check_reachable)
    return _loaded[key]
