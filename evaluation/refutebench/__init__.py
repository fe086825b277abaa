"""RefuteBench's evaluator, metrics and board (the paper's Tables 4-7 and Fig. 6), from saved
dialogues and judgments. Nothing here runs a dialogue: that is sandbox.app.suites.refutebench.

    from evaluation.refutebench import JUDGES, parse_rating, build_board, board_markdown
"""

from .board import (
    MANIFEST,
    Board,
    board_data,
    board_json,
    board_markdown,
    board_plot,
    build_board,
    curves_png,
)
from .judge import (
    BENCHMARK,
    FIDELITY_TAG,
    JUDGE_NAMES,
    JUDGE_TAG,
    JUDGES,
    NO_RATING,
    RATING,
    Rating,
    RatingAnswer,
    RefuteDialogue,
    judges,
    parse_rating,
    read_refute_dialogue,
    refute_dialogue,
)
from .metrics import Cell, Scored, Tables, delta, scored, tables

__all__ = [
    "BENCHMARK", "FIDELITY_TAG", "JUDGES", "JUDGE_NAMES", "JUDGE_TAG",
    "MANIFEST", "NO_RATING", "RATING", "Board", "Cell", "Rating", "RatingAnswer",
    "RefuteDialogue", "Scored", "Tables", "board_data", "board_json", "board_markdown",
    "board_plot", "build_board", "curves_png", "delta", "judges", "parse_rating",
    "read_refute_dialogue", "refute_dialogue", "scored", "tables",
]
