"""SimulBench's judges, aggregation and board (the kit's evaluation side). Nothing here runs a
dialogue: collecting and answering are sandbox.suites.simulbench.

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
    ChallengeTurn,
    PairVerdict,
    Rating,
    answer_of,
    collected_turns,
    judge_dialogue_json,
    parse_challenge,
    parse_pairwise,
    parse_rating,
    swap_rule,
)

__all__ = [
    "CHALLENGE", "CHALLENGE_JUDGE", "CHALLENGE_TAG", "PAIRWISE_TAG", "SCORE", "SCORE_JUDGE",
    "SCORE_TAG", "SUBSETS", "ChallengeTurn", "PairTally", "PairVerdict", "Rating",
    "ScriptScore", "SubsetMean", "answer_of", "board_markdown", "board_plot", "build_board",
    "collected_turns", "grouped_means", "judge_dialogue_json", "parse_challenge",
    "parse_pairwise", "parse_rating", "read_scores", "subset_mean", "subset_means",
    "swap_rule",
]
