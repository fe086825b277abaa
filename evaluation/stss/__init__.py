"""STSS action-level scoring: rule-based scorers that read only a run's log, and the
Table-4-style table of a suite's scores (running a suite is tasks.stss.plugin.suite).

    from evaluation.stss import write_score, score_run
    score = write_score("runs/x")          # score.json with the evidence
    print(score.score, score.rule)

See evaluation/README.md.
"""

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
    "REFERENCE_SCORE", "RULES", "SCORE_FILE", "Activity", "Evidence", "STSSScore", "ScoreError",
    "ScoringOptions", "SuiteTable", "TableRow", "activities", "conversation_partners",
    "differences_markdown", "episode_end", "read_score", "rule_differences", "score_run",
    "suite_table", "table_markdown", "tables_by_rules", "task_of", "write_score",
]
