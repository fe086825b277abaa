"""PingPong on the kit gives what it gave before the kit: the full scripted benchmark (64 pairs,
two players, two judges) against fingerprints recorded with the code before the refit
(golden/pingpong_before.json: per run directory, its events, header, answer cache and status)
and the board it printed (golden/pingpong_before_board.md), byte for byte. The board now goes
on with the calls and tokens of every role, judges included, which the old code never counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.app.cli import main
from tests.tasks.pingpong_fingerprint import fingerprint

GOLDEN = Path(__file__).with_name("golden")


def test_the_refit_benchmark_gives_the_same_runs_and_board(tmp_path, capsys):
    common = ["--interrogator", "scripted/pingpong", "--judge", "scripted/pingpong",
              "--judge", "scripted/pingpong-strict"]
    assert main(["pingpong", "--player", "scripted/pingpong", *common,
                 "--out", str(tmp_path / "a")]) == 0
    assert main(["pingpong", "--player", "scripted/pingpong-verbose", "--label", "verbose",
                 *common, "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    golden = json.loads((GOLDEN / "pingpong_before.json").read_text())
    assert fingerprint(tmp_path / "a") == golden["pingpong"]
    assert fingerprint(tmp_path / "b") == golden["verbose"]

    assert main(["pingpong-board", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    board = capsys.readouterr().out
    before = (GOLDEN / "pingpong_before_board.md").read_text()
    assert board.startswith(before)
    usage = board[len(before):]
    assert "| scripted/pingpong | judge | 128 |" in usage  # 64 pairs x 2 judges
    assert "| verbose | player | 280 |" in usage
