"""`sandbox refutebench` runs RefuteBench 2.0 for one model under test and one setting;
`sandbox refutebench-board` prints the paper's Tables 4-7 over benchmark directories. Both are
the kit's benchmark commands (sandbox/app/commands/benchmark.py) for `REFUTEBENCH`."""

from __future__ import annotations

from sandbox.app.commands.benchmark import register_benchmark


def register(sub) -> None:
    from sandbox.app.suites.refutebench import REFUTEBENCH

    register_benchmark(
        sub, REFUTEBENCH,
        example="sandbox refutebench --model local/smollm2-135m --refuter local/smollm2-135m "
                "--judge local/smollm2-135m --judge-format json --tasks mt --every 27 "
                "--model-max-tokens 256 --out runs/rb-transient",
        board_example="sandbox refutebench-board runs/rb-smol-transient "
                      "runs/rb-smol-persistent --curves curves.png --plot board.png")
