"""STSS action-level scoring: rule-based scorers that read only a run's log, and the suite
runner and its Table-4-style table.

    from evaluation.stss import write_score, score_run
    score = write_score("runs/x")          # score.json with the evidence
    print(score.score, score.rule)

See evaluation/README.md.
"""

from .scoring import (
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
from .suite import (
    SUITE_FILE,
    Episode,
    SuiteError,
    SuiteOptions,
    check_options,
    finished,
    plan_suite,
    record_options,
    run_suite,
    run_task,
    template_files,
    write_table,
)
from .table import SuiteTable, TableRow, suite_table, table_markdown
from .timeline import Activity, activities, conversation_partners, episode_end

__all__ = [
    "SCORE_FILE", "SUITE_FILE", "Activity", "Episode", "Evidence", "STSSScore", "ScoreError",
    "ScoringOptions", "SuiteError", "SuiteOptions", "SuiteTable", "TableRow", "activities",
    "check_options", "conversation_partners", "episode_end", "finished", "plan_suite", "read_score",
    "record_options", "run_suite", "run_task", "score_run", "suite_table", "table_markdown",
    "task_of", "template_files", "write_score", "write_table",
]
