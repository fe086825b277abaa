"""The STSS language level, evaluation side: goal conditions per task type, the yes/no judges
of the conversation and of the partner's summary, SR and GCSR micro and macro (the paper's
equations 1 and 2), and the Table 3 board. Reads run directories and judgments only.

    from evaluation.stss_lang import JUDGES, conditions, table3
"""

from .aggregate import METRICS, Cell, Judged, cell, combine, groups
from .board import MANIFEST, by_type, read_judged, table3
from .conditions import Condition, conditions, place_name
from .judge import CONVERSATION, JUDGE_SAMPLING, JUDGES, LEVELS, SUMMARY, answer_schema

__all__ = [
    "CONVERSATION", "JUDGES", "JUDGE_SAMPLING", "LEVELS", "MANIFEST", "METRICS", "SUMMARY",
    "Cell", "Condition", "Judged", "answer_schema", "by_type", "cell", "combine", "conditions",
    "groups", "place_name", "read_judged", "table3",
]
