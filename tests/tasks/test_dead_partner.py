"""A dialogue whose partner cannot answer stops at once: a PingPong interrogator whose
endpoint refuses every call costs the player nothing, and the live progress counts the pair
failed."""

from __future__ import annotations

import json

import yaml

from sandbox.app.cli import main
from sandbox.llm.loopback import Loopback


def test_a_dead_interrogator_never_spends_the_player_and_the_progress_says_failed(
        tmp_path, capsys):
    with Loopback("pingpong") as player, Loopback("pingpong", refuse_chat=401) as dead:
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({
            "player": {"model": "openai/pingpong", "base_url": player.url},
            "asker": {"model": "openai/pingpong", "base_url": dead.url}}))
        argv = ["pingpong", "--models", str(models), "--player", "player", "--interrogator",
                "asker", "--judge", "player", "--every", "32", "--out", str(tmp_path / "pp")]
        assert main(argv) == 1
        asked_player, asked_dead = player.calls(), dead.calls()
    said = capsys.readouterr()
    printed = said.out
    runs = sorted((tmp_path / "pp" / "runs").iterdir())
    pairs = len(runs)
    # One refused call per pair (the interrogator speaks first), then nothing: no player turn,
    # no judge.
    assert len(asked_dead) == pairs and asked_player == []
    assert f"failed {pairs}" in printed and "failed 0" not in printed.splitlines()[-1]
    # Each pair's failure names the role that failed, its alias and model, and its endpoint's
    # URL (the header records every role's endpoint, not only the player's), on stderr.
    for run in runs:
        header = json.loads((run / "header.json").read_text())
        assert {name: e["base_url"] for name, e in header["config"]["endpoints"].items()} == {
            "player (openai/pingpong)": player.url, "asker (openai/pingpong)": dead.url}
        assert (f"unavailable: {run.name}: no LLM call reached a model: the interrogator role: "
                f"asker (openai/pingpong) at {dead.url}, 1 of 1 calls") in said.err
    assert not [line for line in printed.splitlines() if line.startswith("unavailable: ")]
