"""`sandbox pingpong` runs the PingPong role-play benchmark for one player;
`sandbox pingpong-board` builds the leaderboard from one or more benchmark directories.
Both are the kit's benchmark commands (sandbox/app/commands/benchmark.py) for `PINGPONG`."""

from __future__ import annotations

from sandbox.app.commands.benchmark import register_benchmark


def register(sub) -> None:
    from sandbox.app.suites.pingpong import PINGPONG

    register_benchmark(
        sub, PINGPONG,
        example="sandbox pingpong --player local/smollm2-135m --interrogator "
                "local/smollm2-135m --judge local/smollm2-135m --every 8 --out runs/pp-smol",
        board_example="sandbox pingpong-board runs/pp-a runs/pp-b --arithmetic reference "
                      "--plot board.png")
