"""SimulBench's judges, aggregation and boards (the kit's evaluation side): reading collection
directories and extracting their scripts (`collection`), the board of answer directories
(`board`), and the pairwise comparison on the kit's judge loop (`pairwise`). Nothing here runs a
dialogue: collecting and answering are the kit's runner, with the declarations of the plug-in
(tasks/simulbench/plugin.py).

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
from .board import (
    MANIFEST,
    answers_report,
    board_markdown,
    board_plot,
    build_board,
    read_scores,
    request_types,
    run_task_files,
)
from .collection import (
    COLLECT_MANIFEST,
    CollectedDir,
    collected,
    collection_report,
    extract_dir,
    strategy_counts,
)
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
    "CHALLENGE", "CHALLENGE_JUDGE", "CHALLENGE_TAG", "COLLECT_MANIFEST", "MANIFEST",
    "PAIRWISE_TAG", "SCORE", "SCORE_JUDGE", "SCORE_TAG", "SUBSETS", "ChallengeAnswer",
    "ChallengeTurn", "CollectedDir", "PairAnswer", "PairTally", "PairVerdict", "Rating",
    "RatingAnswer", "ScriptScore", "SubsetMean", "answer_of", "answers_report",
    "board_markdown", "board_plot", "build_board", "challenge_judge", "collected",
    "collected_turns", "collection_report", "extract_dir", "grouped_means",
    "judge_dialogue_json", "parse_challenge", "parse_pairwise", "parse_rating", "read_scores",
    "request_types", "run_task_files", "score_judge", "strategy_counts", "subset_mean",
    "subset_means", "swap_rule", "winner_of",
]
