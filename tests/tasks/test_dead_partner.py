"""A dialogue whose partner cannot answer stops at once: a PingPong interrogator whose
endpoint refuses every call costs the player nothing, and the live progress counts the pair
failed."""

from __future__ import annotations

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
    printed = capsys.readouterr().out
    pairs = len(list((tmp_path / "pp" / "runs").iterdir()))
    # One refused call per pair (the interrogator speaks first), then nothing: no player turn,
    # no judge.
    assert len(asked_dead) == pairs and asked_player == []
    assert f"failed {pairs}" in printed and "failed 0" not in printed.splitlines()[-1]
