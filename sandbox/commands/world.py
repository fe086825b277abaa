"""`sandbox world FILE_OR_NAME [--render out.png]`: check a world file, summarise it, draw it."""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.errors import UserError
from sandbox.files import FileFormatError


def register(sub) -> None:
    p = sub.add_parser("world", help="check, summarise and draw a world map",
                       description="Load a world (a built-in name such as 'town' or "
                                   "'single_room', or a .yaml world file), check it, and print "
                                   "its sectors, arenas, objects, residents and any place no "
                                   "walk can reach. Exit code 1 when some place is unreachable, "
                                   "2 when the file is invalid.")
    p.add_argument("world", help="built-in world name or path to a world .yaml file")
    p.add_argument("--render", type=Path, metavar="OUT.png", help="draw the map to a PNG file")
    p.add_argument("--tile", type=int, default=12, help="pixels per tile in the PNG "
                                                        "[default: %(default)s]")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=main)


def main(args) -> int:
    from worlds.catalog import load_world
    from worlds.residents import world_residents

    try:
        world = load_world(args.world, check_reachable=False)
        residents = world_residents(world)
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc
    summary = world.summary()
    summary["residents"] = [{"name": r.name, "age": r.age, "occupation": r.occupation,
                             "living_area": r.living_area} for r in residents]
    if args.render is not None:
        if args.tile < 2:
            raise UserError("--tile must be at least 2 pixels")
        from worlds.render import render_png

        summary["rendered"] = str(render_png(world, args.render, tile=args.tile))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(summary)
    return 1 if summary["unreachable"] else 0


def _print_summary(s: dict) -> None:
    width, height = s["size"]
    print(f"{s['title']} ({s['name']}) from {s['file']}")
    print(f"  {width}x{height} tiles, {s['walkable_tiles']} walkable; {s['sectors']} sectors, "
          f"{s['arenas']} arenas, {s['objects']} objects, {len(s['residents'])} residents")
    print()
    for sector, arenas in s["places"].items():
        print(f"  {sector}")
        for arena, objects in arenas.items():
            things = f": {', '.join(objects)}" if objects else ""
            print(f"    {arena}{things}")
    if s["residents"]:
        print()
        print("  residents")
        for r in s["residents"]:
            print(f"    {r['name']} ({r['age']}), {r['occupation']}; lives at {r['living_area']}")
    print()
    if s["unreachable"]:
        print(f"  unreachable places ({len(s['unreachable'])}): {', '.join(s['unreachable'])}")
    else:
        print("  unreachable places: none")
    if "rendered" in s:
        print(f"  map drawn to {s['rendered']}")
