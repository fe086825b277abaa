"""A generated town of any size is a valid world: every resident has a home, a workplace and a
routine, every place is reachable, and a scripted day runs on it."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from worlds import load_world
from worlds.generate import generate_town
from worlds.residents import world_residents


@pytest.mark.parametrize("n", [1, 25, 130])
def test_a_generated_town_loads_with_every_resident_housed_and_employed(tmp_path, n):
    path = generate_town(n, seed=3).write(tmp_path)
    world = load_world(path)  # checks reachability too
    people = world_residents(world)
    assert len(people) == n and len({p.name for p in people}) == n
    assert all(p.workplace and p.routine for p in people)
    summary = world.summary()
    assert summary["unreachable"] == []
    assert summary["arenas"] >= n / 4 + 2  # a house of four each, a workplace, the park


def test_the_same_seed_gives_the_same_town_and_another_seed_other_people(tmp_path):
    one, two = generate_town(40, seed=1), generate_town(40, seed=1)
    assert one.world == two.world and one.residents == two.residents
    assert generate_town(40, seed=2).residents != one.residents


def test_sandbox_world_generate_writes_a_town_a_scripted_day_runs_on(tmp_path, capsys):
    out = tmp_path / "town"
    assert main(["world", "generate", "--residents", "30", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert len(summary["residents"]) == 30 and summary["cut_off"] == []
    run = tmp_path / "run"
    assert main(["run", "town_day", "--world", str(out / "gentown.yaml"), "--residents", "30",
                 "--model", "scripted/town", "--embedder", "hashing", "--hours", "3",
                 "--quiet", "--out", str(run)]) == 0
    kinds = {json.loads(line)["kind"] for line in (run / "events.jsonl").read_text().splitlines()}
    assert "move" in kinds
    assert main(["world", "generate", "--residents", "30", "--out", str(out)]) == 2
