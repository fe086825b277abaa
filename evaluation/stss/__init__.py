"""STSS action-level scoring: rule-based scorers that read only a run's log, the
Table-4-style table of a suite's scores (running a suite is tasks.stss.plugin.suite), and the
board of one or more suites (`suite_board`: intervals, n, every planned episode accounted).

    from evaluation.stss import write_score, score_run
    score = write_score("runs/x")          # score.json with the evidence
    print(score.score, score.rule)

See evaluation/README.md.
"""

from .board import SUITE_FILE, PlannedEpisode, SuiteDir, read_suite, suite_board
from .scoring import (
    REFERENCE_SCORE,
    RULES,
    SCORE_FILE,
    Evidence,
    ScoreError,
    ScoringOptions,
    STSSScore,
    read_score,
    score_run,
    task_of,
    write_score,
)
from .table import (
    SuiteTable,
    TableRow,
    differences_markdown,
    rule_differences,
    suite_table,
    table_markdown,
    tables_by_rules,
)
from .timeline import Activity, activities, conversation_partners, episode_end

__all__ = [
    "REFERENCE_SCORE", "RULES", "SCORE_FILE", "SUITE_FILE", "Activity", "Evidence",
    "PlannedEpisode", "STSSScore", "ScoreError", "ScoringOptions", "SuiteDir", "SuiteTable",
    "TableRow", "activities", "conversation_partners", "differences_markdown", "episode_end",
    "read_score", "read_suite", "rule_differences", "score_run", "suite_board", "suite_table",
    "table_markdown", "tables_by_rules", "task_of", "write_score",
]
