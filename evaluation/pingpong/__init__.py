"""PingPong judging, aggregation and leaderboard; the benchmark loop that runs and judges.

Public names: `judge_conversation`, `read_conversation`, `Judgment`, `score_conversation`,
`length_factor`, `bootstrap_ci`, `leaderboard`, `build_board`, `board_markdown`, `board_json`,
`run_benchmark`, `ModelPool`. Importing this package registers the `scripted/pingpong*` test
backends.
"""

from . import scripted  # noqa: F401  (registers scripted/pingpong*)
from .aggregate import (
    ConversationScore,
    PlayerData,
    PlayerScore,
    bootstrap_ci,
    leaderboard,
    length_factor,
    player_score,
    score_conversation,
)
from .benchmark import BenchmarkMismatch, BenchmarkReport, Manifest, ModelPool, run_benchmark
from .board import Board, BoardError, board_json, board_markdown, build_board, read_player
from .judge import (
    CRITERIA,
    JUDGE_TAG,
    Conversation,
    Judgment,
    TurnScore,
    judge_conversation,
    load_judgments,
    read_conversation,
    save_judgment,
)

__all__ = [
    "CRITERIA", "JUDGE_TAG", "BenchmarkMismatch", "BenchmarkReport", "Board", "BoardError",
    "Conversation", "ConversationScore", "Judgment", "Manifest", "ModelPool", "PlayerData",
    "PlayerScore", "TurnScore", "board_json", "board_markdown", "bootstrap_ci", "build_board",
    "judge_conversation", "leaderboard", "length_factor", "load_judgments", "player_score",
    "read_conversation", "read_player", "run_benchmark", "save_judgment", "score_conversation",
]
