"""PingPong on the kit: its items, roles, dialogue, judge and board, tied together."""

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
from tasks.kit import Cast, Role
from tasks.pingpong import (
    INTERROGATOR_SAMPLING,
    JUDGE_SAMPLING,
    PLAYER_SAMPLING,
    Pair,
    PingPongScenario,
    load_settings,
    pair_items,
)

from .benchmark import Benchmark, BoardReport


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
    under_test="player", load_items=_items, scenario=_scenario, judges=[PINGPONG_JUDGE],
    judge_sampling=JUDGE_SAMPLING, board=_board, item_key="pair", items_option="settings",
    items_help="characters and situations: our YAML or a public PingPong settings JSON "
               "[default: the built-in 8 x 8 set]",
    options={"language": "en"},
    option_help={"language": "language block of the settings file"},
    board_options={"arithmetic": {
        "choices": ["paper", "reference"], "default": "paper",
        "help": "paper: the paper's means (default); reference: the public leaderboard code's "
                "(final = sum of 0.333 x criterion, integer mean length, ranks shared within "
                "0.06); point estimates stay exact means"}},
    noun="conversations", item_noun="pairs")
