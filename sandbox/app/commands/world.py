"""`sandbox world FILE_OR_NAME [--render out.png]`: check a world file, summarise it, draw it.
`sandbox import-ville CHECKOUT`: the reference town and its residents from a user's checkout."""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.app.options import SEED, Count, InputDir, Name, Number, Reference
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.lock import hold_output

from .common import output_dir, output_file

# A generated town of 10,000 (400 times the reference town's 25) is made in about 15 s here;
# the time grows faster than the count, so 10^9 would never end.
GENERATED_RESIDENTS = Count(1, 10_000)
# Pixels per tile of a drawn map: 64 draws the reference town (140x100 tiles) 8,960 px wide;
# a tile of 100,000 px would ask for terabytes.
TILE_PIXELS = Count(2, 64)
# A world's name is its file's name and the first part of every address (world:sector:...).
WORLD_NAME = Name("world name", forbid=":")


def register(sub) -> None:
    p = sub.add_parser("world", help="check, summarise and draw a world map",
                       description="Load a world (a built-in name such as 'town' or "
                                   "'single_room', or a .yaml world file), check it, and print "
                                   "its sectors, arenas, objects, residents, its walkable "
                                   "areas (the town is the one where most residents live and "
                                   "spawn) and any place no walk from the town can reach. Exit "
                                   "code 1 when some place is unreachable or some resident's "
                                   "home is cut off from the town, 2 when the file is invalid.",
                       epilog="example: sandbox world town --render town.png  (`sandbox list "
                              "worlds` names the worlds there are); sandbox world generate "
                              "--residents 400 --out runs/town400 (a generated town of 400, "
                              "then --world runs/town400)")
    p.add_argument("world", type=Reference("a world"),
                   help="world name (built-in or imported) or path to a world .yaml "
                        "file; `generate` writes a generated town (--residents, --out) "
                        "and checks it")
    g = p.add_argument_group("generate (sandbox world generate)")
    g.add_argument("--residents", type=GENERATED_RESIDENTS, metavar="N",
                   help="the people of the generated town: houses of four, a workplace for "
                        "every 24, a park")
    g.add_argument("--out", type=output_dir, metavar="DIR",
                   help="where the generated town goes: DIR/NAME.yaml and DIR/residents/")
    g.add_argument("--name", type=WORLD_NAME,
                   help="the generated world's name [default: gentown]")
    g.add_argument("--seed", type=SEED,
                   help="the generator's seed (names, ages) [default: 0]")
    p.add_argument("--render", type=output_file, metavar="OUT.png",
                   help="draw the map to a PNG file")
    p.add_argument("--tile", type=TILE_PIXELS, default=12, help="pixels per tile in the PNG "
                                                        "[default: %(default)s]")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=main)

    p = sub.add_parser(
        "import-ville", help="import the reference town (Smallville) and its residents",
        description="Read the Generative Agents reference town from your checkout of that "
                    "repository (its matrix folder: the collision, sector, arena, game-object "
                    "and spawning mazes, the special-block tables, the meta info) and the "
                    "bootstrap personas of a storage base, check them, and write our world file "
                    "and resident files. Nothing of theirs ships with this project; the files "
                    "are written under worlds/imported/ (not committed) unless --out says "
                    "otherwise. Exit code 2, with the file, field and reason, when anything is "
                    "malformed or missing; nothing is written then.",
        epilog="example: sandbox import-ville ~/src/generative_agents; then sandbox world "
               "ville --render ville.png (exit 1 when some place is unreachable), and --world "
               "ville in any command that takes a world: sandbox run town_day --world ville "
               "--residents 8 --model scripted/town --embedder hashing --out runs/ville")
    p.add_argument("source", type=InputDir(), help="the checkout's root, or its matrix folder "
                                             "(environment/frontend_server/static_dirs/assets/"
                                             "the_ville/matrix)")
    p.add_argument("--personas", type=InputDir(), metavar="DIR",
                   help="a storage base (or its personas/ folder) [default: the checkout's "
                        "environment/frontend_server/storage/base_the_ville_n25]")
    p.add_argument("--name", type=WORLD_NAME, default="ville",
                   help="the world's name, the first part of every "
                        "address [default: %(default)s]")
    p.add_argument("--out", type=output_dir, metavar="DIR", help="where to write NAME.yaml and "
                   "residents/ [default: worlds/imported/NAME, so --world NAME finds it]")
    p.add_argument("--tile-meters", type=Number(0, 1_000, above=True), default=None, metavar="M",
                   help="metres per tile [default: 14, the reference's pace of one tile per "
                        "10-second step at our 1.4 m/s]")
    p.set_defaults(func=import_main)


def import_main(args) -> int:
    from worlds.catalog import IMPORTED_DIR
    from worlds.ville import REFERENCE_TILE_METERS, import_ville

    tile_meters = REFERENCE_TILE_METERS if args.tile_meters is None else args.tile_meters
    if tile_meters <= 0:
        raise UserError("--tile-meters must be more than 0")
    if not args.name or ":" in args.name or "/" in args.name:
        raise UserError(f"--name {args.name!r}: a world name is not empty and holds no ':' "
                        "or '/'")
    out = args.out or IMPORTED_DIR / args.name
    try:
        done = import_ville(args.source, out, personas=args.personas, name=args.name,
                            tile_meters=tile_meters)
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc
    world, converted = done.world, done.converted
    print(f"{world.title} ({world.name}): {world.width}x{world.height} tiles, "
          f"{len(world.tile_graph)} walkable; {len(world.sectors())} sectors, "
          f"{len(world.arenas())} arenas, {len(world.objects())} objects, "
          f"{len(world.spawns)} spawning spots -> {done.world_file}")
    if done.personas is None:
        print("  no residents: no storage base found (give --personas DIR)")
    else:
        print(f"  {len(done.residents)} residents from {done.personas} -> "
              f"{done.world_file.parent / 'residents'}; "
              f"{sum(bool(r.spatial_memory) for r in done.residents)} with a spatial memory, "
              f"{sum(r.start_tile is not None for r in done.residents)} with a start tile")
    for label, items in (("arenas in unconnected pieces (the smaller ones numbered)",
                          converted.split),
                         ("objects only on blocked tiles (left out)", converted.lost_objects),
                         ("spawning spots on blocked tiles (left out)", converted.lost_spawns),
                         ("places no walk can reach", [str(a) for a in world.unreachable]),
                         ("left out of the personas", done.notes)):
        if items:
            print(f"  {label} ({len(items)}): {', '.join(items)}")
    use = world.name if args.out is None else str(done.world_file)
    print(f"  next: sandbox world {use} --render {world.name}.png")
    return 0


GENERATE_OPTIONS = ("residents", "out", "name", "seed")


def generate(args) -> Path:
    """Write the generated town; its world file's path."""
    from worlds.generate import generate_town

    if args.residents is None or args.out is None:
        raise UserError("sandbox world generate needs --residents N and --out DIR")
    if any(args.out.glob("*.yaml")):
        raise UserError(f"--out {args.out}: holds a world already; give a new directory")
    hold_output(args.out)
    try:
        path = generate_town(args.residents, name=args.name or "gentown",
                             seed=args.seed or 0).write(args.out)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    print(f"generated {path} ({args.residents} residents in {args.out / 'residents'}); use it "
          f"with --world {path}")
    return path


def main(args) -> int:
    from worlds.catalog import load_world
    from worlds.residents import world_residents

    if args.world == "generate":
        args.world = str(generate(args))
    else:
        given = [f"--{name}" for name in GENERATE_OPTIONS if getattr(args, name) is not None]
        if given:
            raise UserError(f"{', '.join(given)}: options of `sandbox world generate`, not of "
                            f"checking the world {args.world!r}")
    try:
        world = load_world(args.world, check_reachable=False)
        residents = world_residents(world)
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc
    summary = world.summary()
    summary["residents"] = [{"name": r.name, "age": r.age, "occupation": r.occupation,
                             "living_area": r.living_area} for r in residents]
    summary["cut_off"] = [r.name for r in residents
                          if world.area_of(r.living_area) != world.town_area]
    if args.render is not None:
        if args.tile < 2:
            raise UserError("--tile must be at least 2 pixels")
        from sandbox.lock import hold_output
        from worlds.render import render_png

        hold_output(args.render, file=True)
        summary["rendered"] = str(render_png(world, args.render, tile=args.tile))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(summary)
    return 1 if summary["unreachable"] or summary["cut_off"] else 0


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
    areas = s["areas"]
    if len(areas) > 1:
        town = areas[s["town_area"] - 1]
        print(f"  walkable areas: {len(areas)}, no walk joins one to another; the town is area "
              f"{town['area']} ({s['town_rule']}: {town['tiles']} tiles, {town['arenas']} "
              f"arenas, {town['homes']} homes, {town['spawns']} spawning spots)")
        for area in areas:
            if not area["town"] and (area["arenas"] or area["homes"] or area["spawns"]):
                print(f"    area {area['area']}: {area['tiles']} tiles from tile "
                      f"{tuple(area['first_tile'])}, {area['arenas']} arenas, {area['homes']} "
                      f"homes, {area['spawns']} spawning spots")
    if s["unreachable"]:
        print(f"  unreachable places ({len(s['unreachable'])}): {', '.join(s['unreachable'])}")
    else:
        print("  unreachable places: none")
    if s["cut_off"]:
        print(f"  residents whose home no walk from the town reaches ({len(s['cut_off'])}): "
              f"{', '.join(s['cut_off'])}")
    if "rendered" in s:
        print(f"  map drawn to {s['rendered']}")
