"""Built-in worlds by name (`town`, `single_room`) or any world file by path."""

from __future__ import annotations

from pathlib import Path

from sandbox.errors import UserError

from .world import World

MAPS_DIR = Path(__file__).with_name("maps")
_loaded: dict[tuple[Path, float, bool], World] = {}


def builtin_worlds() -> list[str]:
    """Names of the worlds that ship in worlds/maps/."""
    return sorted(p.stem for p in MAPS_DIR.glob("*.yaml"))


def world_path(name_or_path: str | Path) -> Path:
    """The file of a built-in world name, or the path itself."""
    text = str(name_or_path)
    if (MAPS_DIR / f"{text}.yaml").is_file():
        return MAPS_DIR / f"{text}.yaml"
    path = Path(text)
    if path.is_file():
        return path
    raise UserError(f"no world file {text!r} and no built-in world of that name "
                    f"(built-in: {', '.join(builtin_worlds())})")


def load_world(name_or_path: str | Path, *, check_reachable: bool = True) -> World:
    """Load a world by built-in name or path. Loaded worlds are shared (they are immutable
    apart from their path cache), so many episodes in one process build the map once."""
    path = world_path(name_or_path).resolve()
    key = (path, path.stat().st_mtime, check_reachable)
    if key not in _loaded:
        _loaded[key] = World.load(path, check_reachable=check_reachable)
    return _loaded[key]
