"""SR and GCSR, micro and macro, exactly as the STSS paper's equations (1) and (2).

A conversation c of task t has a score s_c per level (conversation, summary) and metric
(SR: 1 when every goal condition is met, else 0; GCSR: the share met). With C_t the judged
conversations of task t and T the tasks that have any:

    micro = sum_t sum_{c in C_t} s_c / sum_t |C_t|          (1)
    macro = 1/|T| sum_t ( sum_{c in C_t} s_c / |C_t| )       (2)

Several judge models: s_c is the mean of their usable verdicts. A conversation no judge gave a
usable verdict on is left out (and counted). Intervals: percentile bootstrap of the mean over
conversations (micro; a scenario's conversations under several seeds drawn together) and
over task means (macro), seeded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import mean

from evaluation.kit import by_item, interval, item_interval, macro_average, micro_average

METRICS = ("sr", "gcsr")


@dataclass
class Judged:
    """One replayed conversation: its task and, per level, its scores (None: not judged)."""

    item: str
    task: str
    task_type: str
    scores: dict[str, dict[str, float] | None] = field(default_factory=dict)
    action_score: float | None = None  # of the run it was harvested from
    source_run: str = ""
    source_arch: str = ""  # the performer's architecture in that run


def groups(conversations: Sequence[Judged], level: str, metric: str) -> dict[str, list[float]]:
    """Task -> the scores of its judged conversations (tasks in first-seen order)."""
    found: dict[str, list[float]] = {}
    for c in conversations:
        scores = c.scores.get(level)
        if scores is not None:
            found.setdefault(c.task, []).append(scores[metric])
    return found


@dataclass
class Cell:
    micro: float | None
    macro: float | None
    micro_ci: tuple[float, float] | None
    macro_ci: tuple[float, float] | None
    conversations: int
    tasks: int


def by_scenario(conversations: Sequence[Judged], level: str, metric: str
                ) -> list[list[float]]:
    """The scores of each scenario's judged conversations: one under each seed of a row
    pooling a sweep's cells."""
    return by_item((c.item, c.scores[level][metric]) for c in conversations
                   if c.scores.get(level) is not None)


def cell(by_task: Mapping[str, Sequence[float]], *, seed: int = 0, resamples: int = 1000,
         scenarios: Sequence[Sequence[float]] | None = None) -> Cell:
    """Micro and macro with their intervals. The micro interval resamples conversations,
    or, given `scenarios` (`by_scenario`), scenarios with every seed's conversation of each
    drawn together: a scenario run under two seeds is one unit, not two."""
    values = [v for vs in by_task.values() for v in vs]
    task_means = [mean(vs) for vs in by_task.values() if vs]
    return Cell(micro=micro_average(by_task), macro=macro_average(by_task),
                micro_ci=interval(values, seed, resamples) if scenarios is None else
                item_interval(scenarios, seed, resamples),
                macro_ci=interval(task_means, seed, resamples),
                conversations=len(values), tasks=len(task_means))


def combine(judgments: Sequence[Mapping[str, float]]) -> dict[str, float] | None:
    """Several judge models' scores of one conversation: their mean per metric."""
    if not judgments:
        return None
    return {m: mean(j[m] for j in judgments) for m in METRICS}
