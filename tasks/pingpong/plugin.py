"""PingPong declared as a benchmark plug-in (entry point `sandbox.benchmarks: pingpong`): its
items, roles, dialogue, judge and board tied together; the command line makes `sandbox
pingpong` and `sandbox pingpong-board` from this declaration.

Like every benchmark's plugin module, this is the benchmark's composition root: the one module
of tasks/pingpong that may name its scorers (evaluation/pingpong) and the app's plug-in API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.roleplay import INTERROGATOR_TAG, PLAYER_TAG
from evaluation.pingpong import (
    PINGPONG_JUDGE,
    board_json,
    board_markdown,
    board_plot,
    build_board,
)
from sandbox.app.options import Words
from sandbox.app.plugins import Benchmark, Board, BoardReport, Items, Judging, Option, Plugin
from tasks.kit import Cast, Role

from . import (
    INTERROGATOR_SAMPLING,
    JUDGE_SAMPLING,
    PLAYER_SAMPLING,
    Pair,
    PingPongScenario,
    load_settings,
    pair_items,
)


def _items(path: Path | None, options: dict[str, Any]):
    return pair_items(load_settings(path, options.get("language", "en")))


def _scenario(pair: Pair, pair_id: str, cast: Cast, options: dict[str, Any]):
    character, situation = pair
    return PingPongScenario(character, situation, cast, language=options.get("language", "en"))


def _board(dirs, judges=None, seed: int = 0, resamples: int = 1000,
           arithmetic: str = "paper") -> BoardReport:
    board = build_board(dirs, judges=judges, seed=seed, resamples=resamples,
                        arithmetic=arithmetic)
    return BoardReport(markdown=board_markdown(board), data=json.loads(board_json(board)),
                       plot=board_plot(board))


PINGPONG = Benchmark(
    name="pingpong", title="PingPong role-play benchmark",
    roles=[Role("player", PLAYER_SAMPLING, PLAYER_TAG, "model under test", "per reply"),
           Role("interrogator", INTERROGATOR_SAMPLING, INTERROGATOR_TAG,
                "model that plays the user", "per line")],
    under_test="player",
    items=Items(_items, flag="settings", noun="pairs", header_key="pair",
                help="characters and situations: our YAML or a public PingPong settings JSON "
                     "[default: the built-in 8 x 8 set]"),
    scenario=_scenario, judging=Judging([PINGPONG_JUDGE], JUDGE_SAMPLING),
    board=Board(_board, options={"arithmetic": {
        "choices": ["paper", "reference"], "default": "paper",
        "help": "paper: the paper's means (default); reference: the public leaderboard code's "
                "(final = sum of 0.333 x criterion, integer mean length, ranks shared within "
                "0.06); point estimates stay exact means"}},
        example="sandbox pingpong-board runs/pp-a runs/pp-b --arithmetic reference "
                "--plot board.png"),
    options={"language": Option("en", "language block of the settings file",
                                type=Words("a language"))},
    noun="conversations",
    example="sandbox pingpong --player local/smollm2-135m --interrogator local/smollm2-135m "
            "--judge local/smollm2-135m --every 8 --out runs/pp-smol",
    rates=Path(__file__).with_name("rates.json"))

PLUGIN = Plugin("pingpong", "PingPong: role-play of a character card, judged per turn",
                benchmarks=[PINGPONG])
