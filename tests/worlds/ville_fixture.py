"""A small town written in the reference (Generative Agents) checkout layout, by the test: the
matrix folder (meta info, five maze CSVs, four special-block tables) and a storage base with two
bootstrap personas. Names follow the reference town's; the map and the people's text are ours.

The map, one character per tile (x = column, y = row):

    ################      # collision (no sector: 'obstacle')
    #cccC#mmmB#kkkK#      c Hobbs Cafe:cafe, C its counter, S its seating, % a piano on a
    #cScc#msmm#kkkk#        collision tile; x Hobbs Cafe with no arena ('grounds')
    #ccc%#mmbb#kk#k#      m Isabella Rodriguez's apartment:main room, B its bed, s spawn sp-A,
    ##cx###m######k#        b its bathroom
    ..........qq....      k Dorm for Oak Hill College:Klaus Mueller's room, K its bed
    ..pppppppp......      p Johnson Park:park, G its park garden; q the park again, apart
    ..ppppGppp......        from the rest ('park (2)')
    ..pppppppp......      . no sector at all ('outdoors')
    ................
"""

from __future__ import annotations

import json
from pathlib import Path

MATRIX = Path("environment/frontend_server/static_dirs/assets/the_ville/matrix")
BASE = Path("environment/frontend_server/storage/base_the_ville_n25")
ART = """\
################
#cccC#mmmB#kkkK#
#cScc#msmm#kkkk#
#ccc%#mmbb#kk#k#
##cx###m######k#
..........qq....
..pppppppp......
..ppppGppp......
..pppppppp......
................"""
CAFE, HOME, DORM, PARK = ("Hobbs Cafe", "Isabella Rodriguez's apartment",
                          "Dorm for Oak Hill College", "Johnson Park")
# art character -> (collision, sector, arena, object, spawning spot)
TILES = {
    "#": (True, None, None, None, None), ".": (False, None, None, None, None),
    "c": (False, CAFE, "cafe", None, None),
    "C": (False, CAFE, "cafe", "behind the cafe counter", None),
    "S": (False, CAFE, "cafe", "cafe customer seating", None),
    "%": (True, CAFE, "cafe", "piano", None), "x": (False, CAFE, None, None, None),
    "m": (False, HOME, "main room", None, None), "B": (False, HOME, "main room", "bed", None),
    "s": (False, HOME, "main room", None, "sp-A"), "b": (False, HOME, "bathroom", None, None),
    "w": (True, HOME, "bathroom", None, None),  # a wall the arena maze gives to the bathroom
    "y": (True, PARK, "park", None, None),  # a fence the arena maze gives to the park
    "k": (False, DORM, "Klaus Mueller's room", None, None),
    "K": (False, DORM, "Klaus Mueller's room", "bed", None),
    "p": (False, PARK, "park", None, None), "q": (False, PARK, "park", None, None),
    "G": (False, PARK, "park", "park garden", None),
}
PERSONAS = {
    "Isabella Rodriguez": {
        "name": "Isabella Rodriguez", "first_name": "Isabella", "last_name": "Rodriguez",
        "age": 34, "innate": "warm, lively, welcoming",
        "learned": "Isabella Rodriguez is the owner of Hobbs Cafe. She likes a full room.",
        "currently": "Isabella Rodriguez is trying out a new pastry for the cafe.",
        "lifestyle": "Isabella Rodriguez goes to bed around 11pm, awakes up around 6am.",
        "living_area": f"the Ville:{HOME}:main room",
        "daily_plan_req": "Isabella Rodriguez opens Hobbs Cafe at 8am and closes it at 8pm.",
        "vision_r": 8, "act_address": None},
    "Klaus Mueller": {
        "name": "Klaus Mueller", "first_name": "Klaus", "last_name": "Mueller", "age": 20,
        "innate": "curious, earnest, patient",
        "learned": "Klaus Mueller is a student at Oak Hill College. He reads a great deal.",
        "currently": "Klaus Mueller is writing an essay about his neighbourhood.",
        "lifestyle": "Klaus Mueller goes to bed around 11:30pm, awakes up around 7amam.",
        "living_area": f"the Ville:{DORM}:Klaus Mueller's room", "daily_plan_req": ""},
}


def walled_town(margin: int = 12) -> str:
    """The same town inside a boundary wall, with bare ground all around it: as in the real
    reference map, the ground outside the boundary (no sector: 'outdoors') is a walkable area
    larger than the town itself, and no walk joins the two. The streets inside keep the plain
    name; the ground outside is the other piece of 'outdoors' ('outdoors (2)')."""
    town = ART.split("\n")
    inner = [town[0], *town[1:5]] + ["#" + row[1:-1] + "#" for row in town[5:]] + ["#" * 16]
    width = 16 + 2 * margin
    ground = "." * width
    rows = [ground] * 3 + ["." * margin + row + "." * margin for row in inner] + [ground] * 3
    return "\n".join(rows)


def _ids(values: list[tuple], first: int) -> dict[tuple, int]:
    return {v: first + i for i, v in enumerate(dict.fromkeys(values))}


def write_checkout(root: Path, art: str = ART, personas: dict | None = None, *,
                   spatial: dict[str, dict] | None = None,
                   starts: dict[str, tuple[int, int]] | None = None) -> Path:
    """Write the reference layout under `root`; returns `root`. `spatial`: persona name ->
    its spatial_memory.json ({world: {sector: {arena: [objects]}}}); `starts`: persona name ->
    its start tile in the storage base's environment/0.json."""
    rows = art.split("\n")
    height, width = len(rows), len(rows[0])
    cells = [TILES[ch] for row in rows for ch in row]
    sectors = _ids([c[1] for c in cells if c[1]], 32135)
    arenas = _ids([(c[1], c[2]) for c in cells if c[2]], 32138)
    objects = _ids([c[3] for c in cells if c[3]], 32227)
    spawns = _ids([(c[1], c[2], c[4]) for c in cells if c[4]], 32285)
    matrix = root / MATRIX
    (matrix / "maze").mkdir(parents=True)
    (matrix / "special_blocks").mkdir()
    (matrix / "maze_meta_info.json").write_text(json.dumps({
        "world_name": "the Ville", "maze_width": width, "maze_height": height,
        "sq_tile_size": 32, "special_constraint": ""}))
    mazes = {
        "collision": [32125 if c[0] else 0 for c in cells],
        "sector": [sectors.get(c[1], 0) for c in cells],
        "arena": [arenas.get((c[1], c[2]), 0) for c in cells],
        "game_object": [objects.get(c[3], 0) for c in cells],
        "spawning_location": [spawns.get((c[1], c[2], c[4]), 0) for c in cells],
    }
    for name, values in mazes.items():  # one line, as the reference exports them
        (matrix / "maze" / f"{name}_maze.csv").write_text(", ".join(map(str, values)))
    tables = {
        "world": ["32134, the Ville"],
        "sector": [f"{i}, the Ville, {s}" for s, i in sectors.items()],
        "arena": [f"{i}, the Ville, {s}, {a}" for (s, a), i in arenas.items()],
        "game_object": [f"{i}, the Ville, <all>, {o}" for o, i in objects.items()],
        "spawning_location": [f"{i}, the Ville, {s}, {a}, {p}"
                              for (s, a, p), i in spawns.items()],
    }
    for name, lines in tables.items():
        (matrix / "special_blocks" / f"{name}_blocks.csv").write_text("\n".join(lines) + "\n")
    people = PERSONAS if personas is None else personas
    base = root / BASE
    for name, scratch in people.items():
        folder = base / "personas" / name / "bootstrap_memory"
        folder.mkdir(parents=True)
        (folder / "scratch.json").write_text(json.dumps(scratch, indent=2))
        if spatial and name in spatial:
            (folder / "spatial_memory.json").write_text(json.dumps(spatial[name], indent=2))
    if starts:
        (base / "environment").mkdir(parents=True)
        (base / "environment" / "0.json").write_text(json.dumps(
            {name: {"maze": "the_ville", "x": x, "y": y} for name, (x, y) in starts.items()}))
    (base / "reverie").mkdir(parents=True)
    (base / "reverie" / "meta.json").write_text(json.dumps({
        "fork_sim_code": "base_the_ville_n25", "start_date": "February 13, 2023",
        "curr_time": "February 13, 2023, 00:00:00", "sec_per_step": 10, "maze_name": "the_ville",
        "persona_names": list(people)}))
    return root
