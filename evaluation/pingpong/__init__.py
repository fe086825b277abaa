"""PingPong judging, aggregation and leaderboard, on the single-room kit (evaluation.kit).

Public names: `PINGPONG_JUDGE` (the kit's JudgeSpec), `conversation_of`, `score_conversation`,
`length_factor`, `leaderboard`, `build_board`, `board_markdown`, `board_json`, `board_plot`.
Running the benchmark is `sandbox.app.suites.pingpong`; nothing here calls a player.
"""

from .aggregate import (
    Arithmetic,
    ConversationScore,
    PlayerData,
    PlayerScore,
    leaderboard,
    length_factor,
    player_score,
    ranks,
    score_conversation,
)
from .board import MANIFEST, Board, board_json, board_markdown, board_plot, build_board, read_player
from .judge import (
    CRITERIA,
    JUDGE,
    JUDGE_TAG,
    PINGPONG_JUDGE,
    Conversation,
    Exchange,
    TurnScore,
    conversation_of,
    criterion_means,
    read_conversation,
    refused,
    verdict_schema,
)

__all__ = [
    "CRITERIA", "JUDGE", "JUDGE_TAG", "MANIFEST", "PINGPONG_JUDGE", "Arithmetic", "Board",
    "Conversation", "ConversationScore", "Exchange", "PlayerData", "PlayerScore", "TurnScore",
    "board_json", "board_markdown", "board_plot", "build_board", "conversation_of",
    "criterion_means", "leaderboard", "length_factor", "player_score", "ranks",
    "read_conversation", "read_player",
    "refused", "score_conversation", "verdict_schema",
]
