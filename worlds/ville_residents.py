"""The reference town's residents: the bootstrap personas of a Generative Agents storage base
(`storage/base_the_ville_n25/personas/<Name>/bootstrap_memory/scratch.json`) as our resident
files, keeping the reference names. Nothing of theirs ships here; see worlds/README.md.

From each scratch file: name, age, innate, learned, currently, lifestyle and living_area as they
are (the world part of the living area becomes our world's name); `daily_plan_req` becomes the
first daily requirement. What our residents have and the scratch does not say: the occupation is
the first sentence of `learned` after "<Name> is" ("a cafe owner of Hobbs Cafe who ..."), the
wake and sleep times are read from `lifestyle` ("goes to bed around 11pm, awakes up around
6am"); no workplace, no acquaintances, no scripted routine (the reference has none: its agents
plan their day with the model).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

from pydantic import ValidationError

from sandbox.files import FileFormatError

from .address import AddressError
from .residents import Resident
from .world import World

BASE_IN_CHECKOUT = Path("environment/frontend_server/storage/base_the_ville_n25")
SCRATCH = Path("bootstrap_memory/scratch.json")
SPATIAL = Path("bootstrap_memory/spatial_memory.json")
STARTS = Path("environment/0.json")  # in the storage base, beside personas/
_CLOCK = r"(?:(\d{1,2})(?::(\d{2}))?\s*(am|pm)|(midnight|noon))"
_WAKES = re.compile(r"\b(?:awakes?|wakes?|gets? up)(?: up)?(?: at| around)? " + _CLOCK, re.I)
_SLEEPS = re.compile(r"\b(?:bed|sleeps?)(?: at| around)? " + _CLOCK, re.I)


def find_personas(path: Path | str) -> Path:
    """The personas folder: `path` itself, a storage base holding `personas/`, or a checkout
    holding the 25-resident base."""
    path = Path(path)
    for candidate in (path / "personas", path / BASE_IN_CHECKOUT / "personas", path):
        if candidate.is_dir() and any((d / SCRATCH).exists() for d in candidate.iterdir()
                                      if d.is_dir()):
            return candidate
    raise FileFormatError(path, "no persona folders (<Name>/bootstrap_memory/scratch.json) here, "
                                "in its personas/ folder, or in "
                                f"{BASE_IN_CHECKOUT}/personas")


def _clock(match: re.Match) -> str:
    """'7am' -> '07:00', '11:30pm' -> '23:30', 'midnight' -> '00:00' (as the files write them:
    'goes to bed around midnight')."""
    if match[4]:
        return "00:00" if match[4].lower() == "midnight" else "12:00"
    hours, minutes, half = int(match[1]), int(match[2] or 0), match[3].lower()
    if not 1 <= hours <= 12 or minutes > 59:
        raise ValueError(f"{match[0]!r} is not a time of day")
    return f"{hours % 12 + (12 if half == 'pm' else 0):02d}:{minutes:02d}"


def _occupation(name: str, learned: str) -> str:
    first = re.split(r"(?<=[.!?])\s", learned.strip(), maxsplit=1)[0].rstrip(".!?")
    return re.sub(rf"^{re.escape(name)}\s+is\s+", "", first).strip() or first


def read_spatial_memory(folder: Path, name: str, world: World,
                        notes: list[str]) -> list[str]:
    """The arenas a persona's spatial memory names ({world: {sector: {arena: [objects]}}}),
    as addresses of `world`, in map order; [] without the file. A place the map does not have
    is left out and noted (the reference's memories name a few rooms its map never drew)."""
    path = folder / SPATIAL
    if not path.is_file():
        return []
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"{name}: not valid JSON ({exc})") from exc
    if not isinstance(tree, dict) or not all(isinstance(v, dict) for v in tree.values()):
        raise FileFormatError(path, f"{name}: expected {{world: {{sector: {{arena: [objects]}}}}}}")
    known, missing = set(), []
    for sectors in tree.values():
        for sector, arenas in sectors.items():
            if not isinstance(arenas, dict):
                raise FileFormatError(path, f"{name}: sector {sector!r} must map arenas to "
                                            "their objects", sector)
            for arena in arenas:
                address = f"{world.name}:{sector}:{arena}"
                if world.has(address) and world.resolve(address).level == "arena":
                    known.add(world.resolve(address))
                else:
                    missing.append(f"{sector}:{arena}")
    if missing:
        notes.append(f"{name}: {len(missing)} place(s) of the spatial memory not on the map, "
                     f"left out: {', '.join(sorted(missing))}")
    return [str(a) for a in world.arenas() if a in known]


def read_starts(base: Path, world: World, notes: list[str]) -> dict[str, tuple[int, int]]:
    """Each persona's start tile from the storage base's environment/0.json ({name: {x, y}});
    {} without the file. A tile nobody can stand on is left out and noted (home instead)."""
    path = base / STARTS
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise FileFormatError(path, "expected {persona name: {maze, x, y}}")
    starts = {}
    for name, where in data.items():
        x, y = (where.get("x"), where.get("y")) if isinstance(where, dict) else (None, None)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)):
            raise FileFormatError(path, f"{name}: x and y must be whole numbers", name)
        if world.walkable((x, y)):
            starts[name] = (x, y)
        else:
            notes.append(f"{name}: start tile ({x}, {y}) in {STARTS} is not walkable; starts "
                         "at home")
    return starts


def read_persona(folder: Path, world: World, notes: list[str] | None = None) -> Resident:
    """One persona folder as a resident of `world`; FileFormatError naming the persona, the
    field and the reason. What had to be left out is added to `notes`."""
    path = folder / SCRATCH
    who = f"persona {folder.name!r}"
    if not path.is_file():
        raise FileFormatError(path, f"{who}: no bootstrap scratch file")
    try:
        scratch = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"{who}: not valid JSON ({exc})") from exc
    if not isinstance(scratch, dict):
        raise FileFormatError(path, f"{who}: expected a JSON object")
    name = scratch.get("name")
    if not isinstance(name, str) or not name.strip():
        raise FileFormatError(path, f"{who}: no name (every persona needs its full name)",
                              "name")
    for key in ("innate", "learned", "currently", "lifestyle", "living_area"):
        if not isinstance(scratch.get(key), str) or not scratch[key].strip():
            raise FileFormatError(path, f"{name}: missing or empty {key}", key)
    lifestyle = scratch["lifestyle"]
    times = {}
    for key, pattern, example in (("wakes_at", _WAKES, "awakes up around 7am"),
                                  ("sleeps_at", _SLEEPS, "goes to bed around 11pm")):
        found = pattern.search(lifestyle)
        try:
            times[key] = _clock(found) if found else None
        except ValueError as exc:
            raise FileFormatError(path, f"{name}: {exc}", "lifestyle") from exc
        if times[key] is None:
            raise FileFormatError(path, f"{name}: cannot read when they "
                                        f"{'wake' if key == 'wakes_at' else 'go to bed'} from "
                                        f"lifestyle (e.g. '{example}')", "lifestyle")
    parts = [p.strip() for p in scratch["living_area"].split(":")]
    living_area = ":".join([world.name, *parts[1:]])
    try:
        living_area = str(world.resolve(living_area))
    except AddressError as exc:
        raise FileFormatError(path, f"{name}: living_area {scratch['living_area']!r}: {exc}",
                              "living_area") from exc
    plan = str(scratch.get("daily_plan_req") or "").strip()
    data = {
        "name": name.strip(), "age": scratch.get("age"),
        "occupation": _occupation(name.strip(), scratch["learned"]),
        "innate": scratch["innate"], "learned": scratch["learned"],
        "currently": scratch["currently"], "lifestyle": lifestyle, **times,
        "living_area": living_area, "daily_requirements": [plan] if plan else [],
        "spatial_memory": read_spatial_memory(folder, name.strip(), world,
                                              [] if notes is None else notes),
    }
    try:
        return Resident.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise FileFormatError(path, f"{name}: {first['msg']}", field) from exc


def read_personas(path: Path | str, world: World,
                  notes: list[str] | None = None) -> list[Resident]:
    """Every persona of a storage base, sorted by name, with its spatial memory and its start
    tile when the base has them; the first bad one raises. A base whose reverie/meta.json lists
    personas must have a folder for each (a missing one is named). What had to be left out is
    added to `notes`."""
    notes = [] if notes is None else notes
    folder = find_personas(path)
    listed = _listed(folder.parent / "reverie" / "meta.json")
    for name in listed:
        if not (folder / name).is_dir():
            raise FileFormatError(folder / name, f"persona {name!r} is listed in "
                                                 "reverie/meta.json but has no folder")
    residents = [read_persona(d, world, notes) for d in sorted(folder.iterdir()) if d.is_dir()]
    starts = read_starts(folder.parent, world, notes)
    residents = [r.model_copy(update={"start_tile": starts.get(r.name)}) for r in residents]
    seen: dict[str, str] = {}
    for resident, d in zip(residents, sorted(p for p in folder.iterdir() if p.is_dir()),
                           strict=True):
        if resident.name in seen:
            raise FileFormatError(d / SCRATCH, f"{resident.name}: the same name as the persona "
                                               f"in {seen[resident.name]}", "name")
        seen[resident.name] = d.name
    return sorted(residents, key=lambda r: r.name)


def read_start_date(base: Path) -> date | None:
    """The day the storage base's town starts (reverie/meta.json's `start_date`, "February 13,
    2023"); None without the file or the field."""
    meta = base / "reverie" / "meta.json"
    if not meta.is_file():
        return None
    try:
        text = json.loads(meta.read_text(encoding="utf-8")).get("start_date")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
        raise FileFormatError(meta, f"not a storage base's meta file ({exc})") from exc
    if text is None:
        return None
    try:
        return datetime.strptime(str(text).strip(), "%B %d, %Y").date()
    except ValueError:
        raise FileFormatError(meta, f"start_date {text!r} is not a day as the reference writes "
                                    "one ('February 13, 2023')", "start_date") from None


def _listed(meta: Path) -> list[str]:
    if not meta.is_file():
        return []
    try:
        names = json.loads(meta.read_text(encoding="utf-8")).get("persona_names") or []
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
        raise FileFormatError(meta, f"not a storage base's meta file ({exc})") from exc
    return [str(n) for n in names]
