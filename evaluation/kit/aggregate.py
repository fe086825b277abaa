"""Aggregation helpers every single-room benchmark shares: means per metric, micro and macro
averages over groups, and seeded bootstrap intervals. Plain functions over numbers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import mean

import numpy as np

RESAMPLES = 1000


def mean_or_none(values: Iterable[float]) -> float | None:
    """The mean, or None when there is nothing to average (shown as '-' on a board)."""
    values = list(values)
    return mean(values) if values else None


def metric_means(rows: Sequence[Mapping[str, float]], metrics: Sequence[str]
                 ) -> dict[str, float | None]:
    """The mean of each metric over the rows that have it."""
    return {m: mean_or_none(r[m] for r in rows if r.get(m) is not None) for m in metrics}


def micro_average(groups: Mapping[str, Sequence[float]]) -> float | None:
    """Every value counts once, whatever its group (a big group weighs more)."""
    return mean_or_none(v for values in groups.values() for v in values)


def macro_average(groups: Mapping[str, Sequence[float]]) -> float | None:
    """Every group counts once: the mean of the groups' means (empty groups are skipped)."""
    return mean_or_none(mean(values) for values in groups.values() if values)


def bootstrap_ci(values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean. The same seed gives the same interval."""
    if not values:
        return (float("nan"), float("nan"))
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return (float(lo), float(hi))
