"""A day of generative agents (scripted model) on a map shaped like the reference town: the
bare ground outside the boundary is larger than the town. People move and talk there as they
do in Larkhaven, and a run in which nobody moves or talks says so instead of looking like a
measurement."""

from __future__ import annotations

import pytest
import yaml

from sandbox.cli import main
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
    kinds = [e.kind for e in run.events]
    assert kinds.count("move") >= 6 and kinds.count("utterance") >= 2
    assert "walk_failed" not in kinds
    assert run.result.warnings == []
    # Nobody tried to reach the ground outside, nor set foot in someone else's home.
    for e in run.events:
        if e.kind == "move":
            assert e.destination != "ville:outdoors:outdoors"
            if e.agent == "Klaus Mueller":
                assert "Isabella Rodriguez's apartment" not in e.destination
