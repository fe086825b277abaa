"""`sandbox import-ville`: the reference town's matrix and personas become our world and
residents; a malformed or missing file is one line and exit 2, and nothing is written."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from sandbox.app.cli import main
from worlds import World, load_world, world_residents
from worlds.ville import import_ville

from .ville_fixture import ART, BASE, MATRIX, PERSONAS, write_checkout


@pytest.fixture
def checkout(tmp_path):
    return write_checkout(tmp_path / "generative_agents")


def test_the_town_and_its_residents_import_with_the_reference_names(checkout, tmp_path):
    done = import_ville(checkout, tmp_path / "out")
    world = World.load(tmp_path / "out" / "ville.yaml")
    assert world.title == "the Ville" and (world.width, world.height) == (16, 10)
    assert [s.sector for s in world.sectors()] == [
        "Hobbs Cafe", "Isabella Rodriguez's apartment", "Dorm for Oak Hill College", "outdoors",
        "Johnson Park"]
    assert {str(a) for a in world.arenas()} == {
        "ville:Hobbs Cafe:cafe", "ville:Hobbs Cafe:grounds",
        "ville:Isabella Rodriguez's apartment:main room",
        "ville:Isabella Rodriguez's apartment:bathroom",
        "ville:Dorm for Oak Hill College:Klaus Mueller's room", "ville:outdoors:outdoors",
        "ville:Johnson Park:park", "ville:Johnson Park:park (2)"}
    assert {str(o) for o in world.objects()} == {
        "ville:Hobbs Cafe:cafe:behind the cafe counter",
        "ville:Hobbs Cafe:cafe:cafe customer seating",
        "ville:Isabella Rodriguez's apartment:main room:bed",
        "ville:Dorm for Oak Hill College:Klaus Mueller's room:bed",
        "ville:Johnson Park:park:park garden"}
    assert world.tiles("ville:Hobbs Cafe:cafe:behind the cafe counter") == [(4, 1)]
    assert not world.walkable((4, 3))  # the piano's tile is a collision tile
    assert done.converted.lost_objects == ["Hobbs Cafe:cafe:piano"]
    assert done.converted.split == ["Johnson Park:park (2 pieces)"]
    assert {k: str(v) for k, v in world.spawns.items()} == {
        "Isabella Rodriguez's apartment:main room:sp-A":
            "ville:Isabella Rodriguez's apartment:main room"}
    assert world.spawn_tiles == {"Isabella Rodriguez's apartment:main room:sp-A": (7, 2)}
    assert world.tile_for("ville:Isabella Rodriguez's apartment:main room:bed") == (9, 1)
    path = world.path((2, 2), "Johnson Park:park:park garden")  # out of the cafe, to the park
    assert path[0] == (2, 2) and path[-1] == (6, 7)
    assert len(path) - 1 == nx.shortest_path_length(world.tile_graph, (2, 2), (6, 7)) == 9

    isabella, klaus = world_residents(world)
    assert isabella.name == "Isabella Rodriguez" and isabella.age == 34
    assert isabella.occupation == "the owner of Hobbs Cafe"
    assert (isabella.wakes_at, isabella.sleeps_at) == ("06:00", "23:00")
    assert isabella.living_area == "ville:Isabella Rodriguez's apartment:main room"
    assert isabella.daily_requirements == [PERSONAS["Isabella Rodriguez"]["daily_plan_req"]]
    assert isabella.innate == "warm, lively, welcoming"
    assert (klaus.wakes_at, klaus.sleeps_at) == ("07:00", "23:30")  # '7amam' as in the files
    assert klaus.daily_requirements == [] and klaus.routine == [] and klaus.knows == {}


def test_two_spawning_spots_in_one_room_stay_two_spots(tmp_path):
    """Before, each spot became its place, and the reference's 40 spawning spots collapsed
    into 23 places."""
    art = ART.replace("#cccC#mmmB#", "#cccC#smmB#")
    import_ville(write_checkout(tmp_path / "ga", art=art), tmp_path / "out")
    world = World.load(tmp_path / "out" / "ville.yaml")
    room = "Isabella Rodriguez's apartment:main room"
    assert world.spawn_tiles == {f"{room}:sp-A": (6, 1), f"{room}:sp-A (2)": (7, 2)}
    assert {str(p) for p in world.spawns.values()} == {f"ville:{room}"}


def test_the_imported_town_loads_by_name_and_renders(checkout, tmp_path, capsys, monkeypatch):
    import worlds.catalog as catalog

    monkeypatch.setattr(catalog, "IMPORTED_DIR", tmp_path / "imported")
    assert main(["import-ville", str(checkout)]) == 0
    out = capsys.readouterr().out
    assert "the Ville (ville): 16x10 tiles" in out and "2 residents" in out
    assert "objects only on blocked tiles (left out) (1): Hobbs Cafe:cafe:piano" in out
    assert (tmp_path / "imported" / "ville" / "residents" / "klaus_mueller.yaml").is_file()
    assert load_world("ville").name == "ville"
    png = tmp_path / "ville.png"
    assert main(["world", "ville", "--render", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "2 residents" in printed and "unreachable places: none" in printed


def test_places_no_walk_reaches_are_kept_and_reported(tmp_path, capsys):
    no_door = ART.replace("##cx###m######k#", "##cx###m########")  # the dorm's door walled up
    walled = write_checkout(tmp_path / "ga", art=no_door)
    assert main(["import-ville", str(walled), "--out", str(tmp_path / "out")]) == 0
    assert "places no walk can reach (1): ville:Dorm for Oak Hill College:Klaus Mueller's " \
           "room" in capsys.readouterr().out
    assert main(["world", str(tmp_path / "out" / "ville.yaml")]) == 1
    assert "unreachable places (1): ville:Dorm for Oak Hill College:Klaus Mueller's room" in \
        capsys.readouterr().out


def test_the_matrix_folder_alone_imports_the_town_without_people(checkout, tmp_path, capsys):
    assert main(["import-ville", str(checkout / MATRIX), "--out", str(tmp_path / "out")]) == 0
    assert "no residents" in capsys.readouterr().out
    assert world_residents(World.load(tmp_path / "out" / "ville.yaml")) == []


def _fails(args, capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_a_malformed_maze_is_one_line_naming_file_and_tile(checkout, tmp_path, capsys):
    maze = checkout / MATRIX / "maze" / "arena_maze.csv"
    values = maze.read_text().split(", ")
    values[17] = "3213x"
    maze.write_text(", ".join(values))
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert str(maze) in err and "row 2, column 2" in err and "'3213x' is not a block id" in err
    assert not (tmp_path / "out").exists()


def test_a_maze_of_the_wrong_size_is_refused(checkout, tmp_path, capsys):
    maze = checkout / MATRIX / "maze" / "collision_maze.csv"
    maze.write_text(maze.read_text() + ", 0")
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert "161 tiles, but maze_meta_info.json says 16 x 10 = 160" in err


def test_an_unknown_block_id_is_refused(checkout, tmp_path, capsys):
    table = checkout / MATRIX / "special_blocks" / "game_object_blocks.csv"
    table.write_text("\n".join(table.read_text().splitlines()[1:]) + "\n")  # drop one object
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert "game_object_maze.csv" in err and "is not in special_blocks/game_object_blocks" in err


def test_a_missing_meta_file_is_one_line(checkout, tmp_path, capsys):
    (checkout / MATRIX / "maze_meta_info.json").unlink()
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert "maze_meta_info.json: no such file" in err


def test_a_persona_without_a_name_is_named_by_its_folder(checkout, tmp_path, capsys):
    scratch = checkout / BASE / "personas" / "Klaus Mueller" / "bootstrap_memory" / \
        "scratch.json"
    data = json.loads(scratch.read_text())
    del data["name"]
    scratch.write_text(json.dumps(data))
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert "persona 'Klaus Mueller': no name" in err and str(scratch) in err
    assert not (tmp_path / "out").exists()


def test_a_listed_persona_without_its_folder_is_named(checkout, tmp_path, capsys):
    meta = checkout / BASE / "reverie" / "meta.json"
    data = json.loads(meta.read_text())
    data["persona_names"].append("Maria Lopez")
    meta.write_text(json.dumps(data))
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert "persona 'Maria Lopez' is listed in reverie/meta.json but has no folder" in err


@pytest.mark.parametrize("change, reason", [
    ({"lifestyle": "Klaus Mueller sleeps whenever he likes."}, "cannot read when they wake"),
    ({"living_area": "the Ville:Dorm for Oak Hill College:the attic"}, "no place"),
    ({"age": "twenty"}, "Klaus Mueller: Input should be a valid integer"),
])
def test_a_malformed_persona_is_named(checkout, tmp_path, capsys, change, reason):
    scratch = checkout / BASE / "personas" / "Klaus Mueller" / "bootstrap_memory" / \
        "scratch.json"
    scratch.write_text(json.dumps({**json.loads(scratch.read_text()), **change}))
    err = _fails(["import-ville", str(checkout), "--out", str(tmp_path / "out")], capsys)
    assert reason in err and "Klaus Mueller" in err


@pytest.mark.parametrize("lifestyle, wakes, sleeps", [
    ("goes to bed around midnight, awakes up around 8am, eats dinner around 6pm.",
     "08:00", "00:00"),
    ("goes to bed around 2am, awakes up around 10am, eats dinner around 17:30pm.",
     "10:00", "02:00"),
    ("goes to bed around 9:45pm, awakes up around 7amam.", "07:00", "21:45"),
])
def test_wake_and_sleep_times_as_the_reference_writes_them(checkout, tmp_path, lifestyle,
                                                          wakes, sleeps):
    scratch = checkout / BASE / "personas" / "Klaus Mueller" / "bootstrap_memory" / \
        "scratch.json"
    scratch.write_text(json.dumps({**json.loads(scratch.read_text()),
                                   "lifestyle": f"Klaus Mueller {lifestyle}"}))
    klaus = import_ville(checkout, tmp_path / "out").residents[1]
    assert (klaus.wakes_at, klaus.sleeps_at) == (wakes, sleeps)
