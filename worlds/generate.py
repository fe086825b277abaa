"""A town of any size, generated: houses along streets, a workplace for every twenty-odd
residents, a park; and its residents, each with a home, a job, a routine and neighbours.

For measuring how the engine's cost grows with the population (bench/growth.py): the town is
plain on purpose, the same at every size but for its number of blocks, so what grows is the
number of people and places, not their kind. Written in our world format (worlds/mapfile.py)
and resident format (worlds/residents.py), checked like any world when loaded.

Layout: rows of blocks, each a street row and a row of buildings below it (a house or a
workplace, each with a door onto the street above); a street column on each side joins the
street rows. Names of places and people are made up here from small word lists of our own.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from sandbox.pathnames import safe_component

from .ville import _symbol_pool

PER_HOUSE = 4  # residents sharing a house
PER_WORKPLACE = 24  # residents a workplace employs
HOUSE_W, WORK_W = 6, 12  # building widths, walls included
BUILDING_H = 5  # a building's rows below its street row, walls included
PER_ROW = 120  # columns of buildings in a block row (between the two street columns)

FIRST = ["Ada", "Bram", "Cleo", "Dev", "Edda", "Femi", "Gus", "Hana", "Ivo", "Juno", "Kai",
         "Lina", "Milo", "Nia", "Otto", "Pia", "Quin", "Rosa", "Sami", "Tova", "Ugo", "Vera",
         "Wren", "Xavi", "Yara", "Zeno"]
LAST = ["Abbot", "Birk", "Calder", "Dunn", "Ellery", "Fenn", "Garrow", "Holt", "Ibsen",
        "Jarvi", "Kerr", "Lund", "Marsh", "Nyberg", "Orme", "Pryce", "Quill", "Rook", "Strand",
        "Thorne", "Uller", "Vance", "Wick", "Yeats"]
TRADES = [("bakery", "baker", "baking bread"), ("workshop", "carpenter", "building shelves"),
          ("clinic", "nurse", "seeing patients"), ("school", "teacher", "teaching a class"),
          ("print shop", "printer", "setting type"), ("grocer", "grocer", "stocking shelves"),
          ("post office", "clerk", "sorting letters"), ("studio", "potter", "shaping clay")]


@dataclass
class Town:
    """A generated town: the world file's data and one resident file's data per resident."""

    world: dict
    residents: dict[str, dict] = field(default_factory=dict)  # file stem -> resident data

    def write(self, directory: Path | str) -> Path:
        """Write WORLD.yaml and residents/*.yaml into `directory`; the world file's path."""
        directory = Path(directory)
        # Every name that becomes a file is checked first: nothing is written outside
        # `directory`, and nothing at all when one is bad.
        safe_component(self.world["name"], "world name")
        for stem in self.residents:
            safe_component(stem, "resident file name")
        (directory / "residents").mkdir(parents=True, exist_ok=True)
        for stem, data in self.residents.items():
            (directory / "residents" / f"{stem}.yaml").write_text(
                yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        path = directory / f"{self.world['name']}.yaml"
        path.write_text(yaml.safe_dump(self.world, sort_keys=False, allow_unicode=True,
                                       width=10_000), encoding="utf-8")
        return path


def _names(n: int, rng: random.Random) -> list[str]:
    pairs = [f"{f} {la}" for la in LAST for f in FIRST]
    rng.shuffle(pairs)
    if n > len(pairs):  # more people than pairs: a numbered second generation
        pairs += [f"{p} {i // len(pairs) + 1}" for i, p in enumerate(pairs * math.ceil(
            n / len(pairs)))][: n - len(pairs)]
    return pairs[:n]


def generate_town(residents: int, *, name: str = "gentown", seed: int = 0) -> Town:
    """A town for `residents` people (1 or more)."""
    if residents < 1:
        raise ValueError("a town needs at least one resident")
    rng = random.Random(seed)
    houses = math.ceil(residents / PER_HOUSE)
    workplaces = max(1, math.ceil(residents / PER_WORKPLACE))
    buildings = [("house", i + 1) for i in range(houses)]
    buildings += [("work", i + 1) for i in range(workplaces)]
    rng.shuffle(buildings)
    buildings.insert(0, ("park", 1))  # the park by the first street, where everyone may meet

    symbols = iter(s for s in _symbol_pool() if s not in "#.=_|")
    legend: dict[str, dict] = {"#": {"blocked": "wall"},
                               ".": {"sector": "streets", "arena": "road", "color": "#d9d4c7"},
                               "=": {"object": "bed"}, "_": {"object": "table"},
                               "|": {"object": "counter"}}
    rows: list[list[str]] = []
    homes: list[str] = []
    jobs: list[tuple[str, str, str]] = []  # (address, occupation, doing)
    park = ""

    def new_rows() -> list[list[str]]:
        block = [["."] * (PER_ROW + 2)] + [["."] + ["#"] * PER_ROW + ["."]
                                           for _ in range(BUILDING_H)]
        rows.extend(block)
        return block

    block, col = new_rows(), 1
    for kind, number in buildings:
        width = HOUSE_W if kind == "house" else WORK_W
        if col + width > PER_ROW + 1:
            block, col = new_rows(), 1
        symbol = next(symbols)
        if kind == "house":
            sector, arena = f"House {number}", "home"
            homes.append(f"{name}:{sector}:{arena}")
        elif kind == "work":
            place, occupation, doing = TRADES[(number - 1) % len(TRADES)]
            sector, arena = f"{place.title()} {number}", "floor"
            jobs.append((f"{name}:{sector}:{arena}", occupation, doing))
        else:
            sector, arena = "Green Park", "lawn"
            park = f"{name}:{sector}:{arena}"
        legend[symbol] = {"sector": sector, "arena": arena}
        for r in range(2, BUILDING_H):  # the floor, inside the walls
            for c in range(col + 1, col + width - 1):
                block[r][c] = symbol
        block[1][col + width // 2] = symbol  # the door, onto the street above
        furniture = "=" if kind == "house" else ("_" if kind == "park" else "|")
        block[2][col + 1] = furniture
        col += width

    grid = "\n".join("".join(row) for row in rows + [["."] * (PER_ROW + 2)])
    world = {"name": name, "title": f"Generated town of {residents}",
             "description": f"A generated town (worlds/generate.py, seed {seed}): {houses} "
                            f"houses, {workplaces} workplaces and a park.",
             "tile_meters": 4.0, "residents": "residents", "legend": legend, "grid": grid}
    town = Town(world)
    people = _names(residents, rng)
    for i, person in enumerate(people):
        home = homes[i // PER_HOUSE]
        work, occupation, doing = jobs[i % len(jobs)]
        housemates = [p for j, p in enumerate(people) if j // PER_HOUSE == i // PER_HOUSE
                      and p != person]
        town.residents[person.lower().replace(" ", "_")] = {
            "name": person, "age": rng.randint(19, 75), "occupation": occupation,
            "innate": rng.choice(["calm, curious", "busy, cheerful", "shy, careful",
                                  "talkative, warm"]),
            "learned": f"{person} works as a {occupation} and lives in {home.split(':')[1]}.",
            "currently": f"{person} is getting through an ordinary week.",
            "lifestyle": f"{person.split()[0]} wakes at 7:00, works until 17:00 and goes to "
                         "bed at 22:00.",
            "wakes_at": "07:00", "sleeps_at": "22:00", "living_area": home, "workplace": work,
            "daily_requirements": [doing, "eat lunch", "go for a walk in the park"],
            "knows": {p: "a housemate" for p in housemates},
            "routine": [{"at": "07:00", "place": f"{home}:bed", "doing": "waking up"},
                        {"at": "08:30", "place": work, "doing": doing},
                        {"at": "12:30", "place": park, "doing": "eating lunch in the park"},
                        {"at": "13:15", "place": work, "doing": doing},
                        {"at": "17:30", "place": park, "doing": "walking in the park"},
                        {"at": "19:00", "place": home, "doing": "cooking dinner"},
                        {"at": "21:45", "place": f"{home}:bed", "doing": "going to sleep"}]}
    return town
