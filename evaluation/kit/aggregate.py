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


# Below this many independent units (the top level of what was sampled: templates, agents,
# conversations) a board prints the mean with no interval. A percentile bootstrap of n units
# can only draw from C(2n-1, n) distinct resamples (3 for n = 2, 35 for n = 4), and its 95%
# interval covers the true mean far less often than 95% (about half the time at n = 2): a
# bracket drawn there would claim a precision the data cannot give.
MIN_UNITS = 5
MIN_UNITS_WHY = (f"no interval below {MIN_UNITS} independent units (templates, agents, items): "
                 "a bootstrap of so few covers far less than its nominal 95%")


def interval(values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES,
             level: float = 0.95) -> tuple[float, float] | None:
    """`bootstrap_ci` of independent values, or None below MIN_UNITS of them."""
    if len(values) < MIN_UNITS:
        return None
    return bootstrap_ci(values, seed, resamples, level)


def cluster_sums(clusters: Sequence[Sequence[float]], rng: np.random.Generator,
                 resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """(sum, count) of every value drawn in each of `resamples` two-level bootstrap resamples:
    clusters drawn with replacement, then, inside each cluster drawn, its values drawn with
    replacement (afresh each time it is drawn). sum / count is a resample's mean, over every
    value drawn, so each value weighs as in the plain mean; strata add their sums and counts.
    A cluster's values may be rows of several columns drawn together (RefuteBench's two
    ratings of one run), a NaN an absent value: the sums and counts are then per column."""
    groups = [np.asarray(c, dtype=float) for c in clusters if len(c)]
    k = len(groups)
    shape = (resamples, *groups[0].shape[1:]) if groups else (resamples,)
    picks = rng.integers(0, k, size=(resamples, k))
    totals = np.zeros(shape)
    counts = np.zeros(shape)
    for j in range(k):
        for c, group in enumerate(groups):
            rows = np.flatnonzero(picks[:, j] == c)
            if not len(rows):
                continue
            draws = group[rng.integers(0, len(group), size=(len(rows), len(group)))]
            totals[rows] += np.nansum(draws, axis=1)
            counts[rows] += np.isfinite(draws).sum(axis=1)
    return totals, counts


def cluster_means(clusters: Sequence[Sequence[float]], rng: np.random.Generator,
                  resamples: int) -> np.ndarray:
    """`resamples` means of a two-level bootstrap (cluster_sums)."""
    totals, counts = cluster_sums(clusters, rng, resamples)
    return totals / counts


def cluster_interval(clusters: Sequence[Sequence[float]], seed: int = 0,
                     resamples: int = RESAMPLES, level: float = 0.95
                     ) -> tuple[float, float] | None:
    """The percentile interval of the mean of values sampled in clusters (STSS: seeds within a
    template; interviews: questions within an agent), resampling the cluster, then the value
    within it: values of one cluster are not independent, so counting them as such would
    narrow the interval. None below MIN_UNITS clusters."""
    clusters = [c for c in clusters if len(c)]
    if len(clusters) < MIN_UNITS:
        return None
    means = cluster_means(clusters, np.random.default_rng(seed), resamples)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return (float(lo), float(hi))


def by_item(values: Iterable[tuple[str, float]]) -> list[list[float]]:
    """(item, value) pairs as one list per item, items in first-seen order: an item's values
    under each seed of a row that pools a sweep's cells (kit.rows) together."""
    found: dict[str, list[float]] = {}
    for item, value in values:
        found.setdefault(item, []).append(value)
    return list(found.values())


def item_interval(items: Sequence[Sequence[float]], seed: int = 0,
                  resamples: int = RESAMPLES, level: float = 0.95
                  ) -> tuple[float, float] | None:
    """The interval of the mean over items, each item with every seed it was run under (its
    list of values): the items are what was sampled, so an item's seeds are drawn together
    (`cluster_interval`), never as independent units (2 seeds of 5 items are 5 items' worth
    of evidence, not 10). When no item has more than one value this is the plain bootstrap,
    draw for draw (`interval`). None below MIN_UNITS items."""
    items = [list(v) for v in items if len(v)]
    if all(len(v) == 1 for v in items):
        return interval([v[0] for v in items], seed, resamples, level)
    return cluster_interval(items, seed, resamples, level)
