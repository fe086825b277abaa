"""The built-in worlds: the town has what the social tasks need; the single room matches its
scenario's address."""

from __future__ import annotations

from worlds import load_world, world_residents

NEEDED = [
    "town:Copper Kettle Cafe", "town:Fox and Fiddle Pub", "town:Harrow Park:lawn",
    "town:Harrow Park:bandstand", "town:Ashford College:classroom 1",
    "town:Ashford College:classroom 2", "town:Ashford College:lecture hall",
    "town:Ashford College Library:reading room", "town:Birchwood Dormitory",
    "town:Hartley Supply Store", "town:Larkhaven Market:market hall",
    "town:Larkhaven Market:pharmacy", "town:Town Square:plaza", "town:Town Hall:meeting hall",
    "town:Juniper Gallery:gallery",
]


def test_town_is_big_enough_and_every_place_is_reachable():
    town = load_world("town")
    assert len(town.sectors()) >= 15 and len(town.arenas()) >= 40
    assert town.unreachable == []
    for place in NEEDED:
        assert town.has(place), place


def test_town_objects_for_social_tasks():
    town = load_world("town")
    for obj in ("town:Copper Kettle Cafe:dining room:counter",
                "town:Copper Kettle Cafe:dining room:piano",
                "town:Ashford College Library:stacks:bookshelf",
                "town:Harrow Park:bandstand:stage", "town:Larkhaven Market:pharmacy:counter",
                "town:Birchwood Dormitory:room 1:bed"):
        assert town.has(obj), obj


def test_twenty_five_residents_with_homes_and_varied_work():
    town = load_world("town")
    people = world_residents(town)
    assert len(people) == 25
    assert len({p.occupation for p in people}) >= 20
    jobs = " ".join(p.occupation for p in people).lower()
    for job in ("cafe", "professor", "student", "pharmacist", "painter", "pub", "librarian",
                "store"):
        assert job in jobs, job
    homes = {str(town.resolve(p.living_area).up_to("sector")) for p in people}
    assert len(homes) >= 10
    for person in people:
        assert person.routine and person.knows
        assert town.resolve(person.living_area).level in ("arena", "object")


def test_single_room_matches_the_scenario_address():
    from tasks.scenarios.single_room import PLACE

    room = load_world("single_room")
    assert room.resolve(PLACE).object == "table"
    assert str(room.resolve(PLACE)) == PLACE


def test_a_world_is_found_by_name_or_path_and_a_run_names_it_so(tmp_path):
    from worlds import find_world, world_ref

    town = find_world("town")
    assert town is not None and find_world(str(town)) == town
    assert find_world("atlantis") is None and find_world(tmp_path / "no.yaml") is None
    assert world_ref(load_world("town")) == "town"
    copy = tmp_path / "single_room.yaml"  # the same name, another file: the path is recorded
    copy.write_text(find_world("single_room").read_text(encoding="utf-8"), encoding="utf-8")
    assert world_ref(load_world(copy)) == str(copy.resolve())
