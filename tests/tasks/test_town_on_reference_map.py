"""A day of generative agents (scripted model) on a map shaped like the reference town: the
bare ground outside the boundary is larger than the town. People move and talk there as they
do in Larkhaven, and a run in which nobody moves or talks says so instead of looking like a
measurement."""

from __future__ import annotations

import json
from datetime import date, datetime

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.log import load_run
from tests.worlds.ville_fixture import PERSONAS, walled_town, write_checkout
from worlds.ville import import_ville

# A third resident, so the cafe at lunch has company to talk with.
MEI = {**PERSONAS["Isabella Rodriguez"], "name": "Mei Lin", "first_name": "Mei",
       "last_name": "Lin", "learned": "Mei Lin is a professor at Oak Hill College.",
       "currently": "Mei Lin is preparing a lecture.",
       "lifestyle": "Mei Lin goes to bed around 11pm, awakes up around 7am.",
       "daily_plan_req": ""}


@pytest.fixture(scope="module")
def walled(tmp_path_factory):
    root = tmp_path_factory.mktemp("walled")
    people = {**PERSONAS, "Mei Lin": MEI}
    return import_ville(write_checkout(root / "ga", art=walled_town(), personas=people),
                        root / "out").world


def _day(tmp_path, world, **changes):
    config = {"world": str(world.source), "hours": 14, "embedder": "hashing", **changes}
    path = tmp_path / "day.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    code = main(["run", "town_day", "--config", str(path), "--model", "scripted/town",
                 "--out", str(out), "--quiet"])
    return code, load_run(out)


def test_a_scripted_day_on_the_reference_shaped_town_has_moves_and_talk(tmp_path, walled):
    code, run = _day(tmp_path, walled)
    assert code == 0 and run.result.status == "completed"
    # On the day the storage base starts (its meta.json), which the residents' lines speak of:
    # before, every day in the imported town started on 2024-02-13.
    assert walled.start_date == date(2023, 2, 13)
    assert run.header.start_time == datetime(2023, 2, 13, 6, 0)
    kinds = [e.kind for e in run.events]
    assert kinds.count("move") >= 6 and kinds.count("utterance") >= 2
    assert "walk_failed" not in kinds
    assert run.result.warnings == []
    # Nobody tried to reach the ground outside, nor set foot in someone else's home.
    for e in run.events:
        if e.kind == "move":
            assert e.destination != "ville:outdoors:outdoors (2)"
            if e.agent == "Klaus Mueller":
                assert "Isabella Rodriguez's apartment" not in e.destination


def test_a_day_in_which_nobody_moves_or_talks_ends_with_warnings(tmp_path, walled, capsys):
    # One resident for one early hour: asleep at home, so no walk and nobody to talk to.
    code, run = _day(tmp_path, walled, residents=["Klaus Mueller"], hours=1)
    assert code == 0
    assert run.result.warnings == [
        "nobody moved: no agent walked anywhere (no 'move' event)",
        "nobody talked: no conversation happened (no 'utterance' event)"]
    out = capsys.readouterr().out
    assert "warning: nobody moved" in out and "warning: nobody talked" in out
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["warnings"] == run.result.warnings


def test_a_resident_who_cannot_get_home_logs_each_failed_walk(tmp_path, capsys):
    # Klaus starts in the cafe (his start tile) but his dorm room's door is walled up.
    walled_dorm = walled_town().replace("##cx###m######k#", "##cx###m########")
    world = import_ville(write_checkout(tmp_path / "ga", art=walled_dorm,
                                        starts={"Klaus Mueller": (14, 5)}),
                         tmp_path / "out").world
    code, run = _day(tmp_path, world, hours=3)
    assert code == 0
    failed = [e for e in run.events if e.kind == "walk_failed"]
    assert failed and {e.agent for e in failed} == {"Klaus Mueller"}
    assert failed[0].destination == "ville:Dorm for Oak Hill College:Klaus Mueller's room"
    assert failed[0].origin.startswith("ville:Hobbs Cafe:cafe")
    assert "cannot be reached" in failed[0].reason
    remembered = [e.description for e in run.events if e.kind == "memory_added"
                  and e.agent == "Klaus Mueller" and "could not get to" in e.description]
    assert remembered  # he knows he did not arrive
    actions = [e for e in run.events if e.kind == "action_started" and e.agent == "Klaus Mueller"]
    assert all(a.location.startswith("ville:Hobbs Cafe") for a in actions)  # done where he is
    capsys.readouterr()
    assert main(["log", str(tmp_path / "run")]) == 0
    assert f"walks that could not happen: {len(failed)}" in capsys.readouterr().out


def test_a_resident_learns_the_places_it_passes_within_its_vision(tmp_path):
    """The reference's perception adds the places within its vision radius to the spatial
    memory as a resident walks; before, an imported memory never grew."""
    people = {**PERSONAS, "Mei Lin": MEI}
    spatial = {"Klaus Mueller": {"the Ville": {  # his room and the cafe, nothing else
        "Dorm for Oak Hill College": {"Klaus Mueller's room": ["bed"]},
        "Hobbs Cafe": {"cafe": ["behind the cafe counter"]}}}}
    world = import_ville(write_checkout(tmp_path / "ga", art=walled_town(), personas=people,
                                        spatial=spatial), tmp_path / "out").world
    code, run = _day(tmp_path, world)
    assert code == 0
    learned = [e for e in run.events if e.kind == "places_learned"]
    assert learned and {e.agent for e in learned} == {"Klaus Mueller"}  # the others know all
    places = [p for e in learned for p in e.places]
    assert learned[0].radius == 8 and len(places) == len(set(places))
    assert "ville:Johnson Park:park" in places
    assert "ville:Isabella Rodriguez's apartment:main room" in places  # seen from the street
    # Never a place the reference's map has no name for, nor the ground no walk reaches.
    assert not [p for p in places if "outdoors" in p or "grounds" in p]
    off = tmp_path / "off"
    off.mkdir()
    code, run = _day(off, world, params={"memory": {"vision_radius": 0}})
    assert code == 0 and not [e for e in run.events if e.kind == "places_learned"]


def test_the_shipped_day_in_an_imported_town_starts_on_the_towns_own_date(tmp_path, walled):
    """`sandbox run town_day --world ville.yaml`: the shipped town_day file gives no date, so
    the imported town's own (its storage base's February 13, 2023) wins; a date the user
    writes in a config file still wins over the town's."""
    out = tmp_path / "run"
    code = main(["run", "town_day", "--world", str(walled.source), "--model", "scripted/town",
                 "--hours", "1", "--embedder", "hashing", "--out", str(out), "--quiet"])
    assert code == 0
    run = load_run(out)
    assert run.header.start_time == datetime(2023, 2, 13, 6, 0)
    # The shipped file's Larkhaven residents and task do not live there: the town's own do
    # (before, the command stopped: "no resident(s) Grace Okonkwo, ... in world ville").
    assert run.header.config["residents"] is None and run.header.config["tasks"] == {}
    assert {e.agent for e in run.events if e.kind == "agent_joined"} == {
        "Isabella Rodriguez", "Klaus Mueller", "Mei Lin"}
    (tmp_path / "given").mkdir()
    code, run = _day(tmp_path / "given", walled, hours=1, start_time="2023-02-14T09:00:00")
    assert code == 0 and run.header.start_time == datetime(2023, 2, 14, 9, 0)
