"""The single-room benchmark kit, evaluation side: reading a finished dialogue, judges with
stored judgments, the judge loop (`judge_run`, and under it `judge_asks`, one verdict at a
time), aggregation helpers and boards (Markdown, JSON, PNG). Nothing here runs an episode: the
runner is `sandbox.app.suites.benchmark`.

    from evaluation.kit import JudgeSpec, Verdict, judge_dialogue, read_dialogue
    from evaluation.kit import bootstrap_ci, micro_average, macro_average, markdown_table
"""

from .accounting import FinishedRun, Ledger, accounting_markdown
from .aggregate import (
    MIN_UNITS,
    MIN_UNITS_WHY,
    RESAMPLES,
    bootstrap_ci,
    by_item,
    cluster_interval,
    interval,
    item_interval,
    macro_average,
    mean_or_none,
    metric_means,
    micro_average,
)
from .board import (
    BenchDir,
    BoardError,
    BoardReport,
    Column,
    Plot,
    PlotPoint,
    RoleUsage,
    check_dirs,
    check_judges,
    manifest_data,
    markdown_table,
    plot_png,
    read_bench_dir,
    role_usage,
    test_doubles,
    told_apart,
    uncounted_note,
    usage_table,
)
from .dialogue import Dialogue, NotABenchmarkRun, read_dialogue
from .judges import (
    JudgeSpec,
    Verdict,
    dialogue_digest,
    judge_dialogue,
    judge_seed,
    judgment_problem,
)
from .judging import Ask, JudgeTally, Panel, judge_asks, judge_run
from .ratings import JUDGE_FORMATS, bracketed_number
from .rows import RowDirs, pool_rows, pooling_notes

__all__ = [
    "Ask", "BenchDir", "BoardError", "BoardReport", "Column", "Dialogue", "FinishedRun",
    "JUDGE_FORMATS", "MIN_UNITS", "MIN_UNITS_WHY", "by_item", "cluster_interval", "interval",
    "item_interval",
    "test_doubles", "JudgeSpec", "JudgeTally", "Ledger", "NotABenchmarkRun", "Panel", "Plot",
    "PlotPoint", "RESAMPLES", "RoleUsage", "Verdict", "accounting_markdown", "bootstrap_ci",
    "bracketed_number", "check_dirs", "check_judges", "dialogue_digest", "judge_asks",
    "judge_dialogue", "judge_run", "judge_seed", "judgment_problem", "macro_average",
    "manifest_data", "markdown_table", "mean_or_none", "metric_means", "micro_average", "plot_png",
    "read_bench_dir", "read_dialogue", "role_usage", "told_apart", "uncounted_note", "usage_table",
    "RowDirs", "pool_rows", "pooling_notes",
]
