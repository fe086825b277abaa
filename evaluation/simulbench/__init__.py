"""SimulBench's judges, aggregation and board (the kit's evaluation side). Nothing here runs a
dialogue: collecting and answering are sandbox.app.suites.simulbench.

    from evaluation.simulbench import SCORE_JUDGE, CHALLENGE_JUDGE, parse_rating, swap_rule
"""

from .aggregate import (
    SUBSETS,
    PairTally,
    ScriptScore,
    SubsetMean,
    grouped_means,
    subset_mean,
    subset_means,
)
from .board import board_markdown, board_plot, build_board, read_scores
from .judges import (
    CHALLENGE,
    CHALLENGE_JUDGE,
    CHALLENGE_TAG,
    PAIRWISE_TAG,
    SCORE,
    SCORE_JUDGE,
    SCORE_TAG,
    ChallengeAnswer,
    ChallengeTurn,
    PairAnswer,
    PairVerdict,
    Rating,
    RatingAnswer,
    answer_of,
    challenge_judge,
    collected_turns,
    judge_dialogue_json,
    parse_challenge,
    parse_pairwise,
    parse_rating,
    score_judge,
    swap_rule,
    winner_of,
)

__all__ = [
    "CHALLENGE", "CHALLENGE_JUDGE", "CHALLENGE_TAG", "PAIRWISE_TAG", "SCORE",
    "SCORE_JUDGE", "SCORE_TAG", "SUBSETS", "ChallengeAnswer", "ChallengeTurn", "PairAnswer",
    "PairTally", "PairVerdict", "Rating", "RatingAnswer", "ScriptScore", "SubsetMean",
    "answer_of", "board_markdown", "board_plot", "build_board", "challenge_judge",
    "collected_turns", "grouped_means", "judge_dialogue_json", "parse_challenge",
    "parse_pairwise", "parse_rating", "read_scores", "score_judge", "subset_mean",
    "subset_means", "swap_rule", "winner_of",
]
