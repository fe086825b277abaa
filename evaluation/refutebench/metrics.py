"""RefuteBench's metrics, from saved judgments only (no model is called).

Every judged dialogue becomes a `Scored` row: its seed, family, setting and C, and the rating of
each judged pair (the mean over the judge models kept; a fallback judgment gives no rating and
is counted as missing). The paper's tables are means over dialogues of one model and family:

    T4  overall transient   per dialogue the mean of revision_1..3, then the mean
    T5  Turn1, Turn3, Δ     revision_1 and kept_3 (R(a_1, r_1), R(a_3, r_1))
    T6  Initial, Final, Δ   fidelity_0 and fidelity_3 (R(q, a_0), R(q, a_3))
    T7  C=0, C=3, Δ         persistent_direct of the C=0 dialogues, persistent_final of the C=3
                            ones (and of C=1, C=2 when run)
    Fig. 6                  R(a_k, r_1) for k = 1..3 and R(q, a_k) for k = 0..3

Δ is the difference of the two means (the paper's); its interval is a bootstrap over seeds
that resamples both columns together. Every mean has n and a seeded 95% bootstrap interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import mean

import numpy as np

from evaluation.kit import MIN_UNITS, RESAMPLES, by_item, interval, item_interval
from evaluation.kit.aggregate import cluster_sums
from sandbox.judgments import Judgment

from .judge import RATING, K, RefuteDialogue

OVERALL = "overall"
REVISIONS = [f"revision_{k}" for k in range(1, K + 1)]
KEPT_CURVE = ["revision_1", *(f"kept_{k}" for k in range(2, K + 1))]  # R(a_k, r_1), k = 1..K
FIDELITY_CURVE = [f"fidelity_{k}" for k in range(K + 1)]  # R(q, a_k), k = 0..K
PAIRS = {  # table -> (first column, second column); Δ = first - second
    "turn": ("revision_1", f"kept_{K}"),
    "task": ("fidelity_0", f"fidelity_{K}"),
}


@dataclass
class Scored:
    """One dialogue's ratings by judged pair."""

    seed: str
    family: str
    setting: str
    c: int
    ratings: dict[str, float] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)  # pair -> fallback judgments
    judgments: int = 0  # judgments read (usable or not)
    item: str = ""  # the item's id in its directory (what `sandbox compare` matches by)
    run_seed: int = 0  # the seed its directory was run under (a sweep's cell per seed)

    def overall(self) -> float | None:
        have = [self.ratings[n] for n in REVISIONS if n in self.ratings]
        return mean(have) if have else None

    def metric(self, name: str) -> float | None:
        """A rating of this dialogue by the metric names of the tables: a judged pair's name,
        `overall`, or `c<C>` (persistent: C=0 is the direct answer, C>0 the re-ask's)."""
        if name == OVERALL:
            return self.overall() if self.setting == "transient" else None
        if name.startswith("c") and name[1:].isdigit():
            if self.setting != "persistent" or self.c != int(name[1:]):
                return None
            return self.ratings.get("persistent_direct" if self.c == 0 else "persistent_final")
        return self.ratings.get(name)


def scored(d: RefuteDialogue, judgments: Iterable[Judgment] = ()) -> Scored:
    """One dialogue's ratings from its judgments (those a board kept: evaluation.kit.Ledger
    leaves out stale and unreadable ones and counts them)."""
    row = Scored(seed=d.seed, family=d.family, setting=d.setting, c=d.c)
    if d.setting == "v1":  # a public 1.0 file: checked by its rules, no judge
        from .v1 import rule_rates

        row.ratings = rule_rates(d)
        return row
    by_pair: dict[str, list[float]] = {}
    for judgment in judgments:
        row.judgments += 1
        if judgment.usable and RATING in judgment.scores:
            by_pair.setdefault(judgment.judge, []).append(judgment.scores[RATING])
        else:
            row.missing[judgment.judge] = row.missing.get(judgment.judge, 0) + 1
    row.ratings = {pair: mean(values) for pair, values in by_pair.items()}
    return row


@dataclass
class Cell:
    """A mean with its interval and how many dialogues it is over."""

    mean: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = 0

    def text(self, interval: bool = True) -> str:
        if self.mean is None:
            return "-"
        if not interval:
            return f"{self.mean:.2f}"
        if self.lo is None:  # too few dialogues for an interval (kit.MIN_UNITS)
            return f"{self.mean:.2f} n={self.n}"
        return f"{self.mean:.2f} [{self.lo:.2f}, {self.hi:.2f}] n={self.n}"

    def as_dict(self) -> dict:
        return {"mean": self.mean, "ci": [self.lo, self.hi] if self.lo is not None else None,
                "n": self.n}


def cell(values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES,
         items: Sequence[str] | None = None) -> Cell:
    """The mean of `values` with its interval; `items` (one per value) are the items they
    are of: an item run under several seeds (a row pooling a sweep's cells) is drawn with all
    its seeds, one unit (kit.item_interval)."""
    if not values:
        return Cell(None)
    found = interval(values, seed=seed, resamples=resamples) if items is None else \
        item_interval(by_item(zip(items, values, strict=True)), seed, resamples)
    if found is None:  # too few dialogues for an interval (kit.MIN_UNITS)
        return Cell(mean(values), n=len(values))
    return Cell(mean(values), *found, len(values))


def delta(rows: Iterable[Scored], first: str, second: str, seed: int = 0,
          resamples: int = RESAMPLES) -> Cell:
    """mean(first) - mean(second) over the rows, with a bootstrap over seeds that keeps each
    seed's two ratings together (they may come from two dialogues, as C=0 and C=3 do). Under
    several run seeds (a row pooling a sweep's cells) a seed's ratings of each run seed are a
    pair, and the seed is drawn with all of them (then its run seeds within it, as
    kit.cluster_interval), never one run seed's pair in place of the others'."""
    by_seed: dict[str, dict[int, list[float]]] = {}
    for row in rows:
        pair = by_seed.setdefault(row.seed, {}).setdefault(row.run_seed, [np.nan, np.nan])
        for i, name in enumerate((first, second)):
            value = row.metric(name)
            if value is not None:
                pair[i] = value
    clusters = [np.array(list(runs.values()), dtype=float) for runs in by_seed.values()]
    if not clusters:
        return Cell(None)
    every = np.concatenate(clusters)
    a, b = every[:, 0], every[:, 1]
    if not np.isfinite(a).any() or not np.isfinite(b).any():
        return Cell(None)
    point = float(np.nanmean(a) - np.nanmean(b))
    both = int((np.isfinite(a) & np.isfinite(b)).sum())
    if len(clusters) < MIN_UNITS:
        return Cell(point, n=both)
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():  # a resample may hold no rating of one column
        warnings.simplefilter("ignore", RuntimeWarning)
        if len(every) == len(clusters):  # one run seed: the seeds drawn as they always were
            picks = rng.integers(0, len(a), size=(resamples, len(a)))
            diffs = np.nanmean(a[picks], axis=1) - np.nanmean(b[picks], axis=1)
        else:
            totals, counts = cluster_sums(clusters, rng, resamples)
            diffs = totals[:, 0] / counts[:, 0] - totals[:, 1] / counts[:, 1]
    diffs = diffs[np.isfinite(diffs)]
    if not len(diffs):
        return Cell(point, n=both)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return Cell(point, float(lo), float(hi), both)


def metric_cell(rows: Iterable[Scored], name: str, seed: int = 0,
                resamples: int = RESAMPLES) -> Cell:
    found = [(r.item, v) for r in rows if (v := r.metric(name)) is not None]
    return cell([v for _, v in found], seed, resamples, [item for item, _ in found])


@dataclass
class Tables:
    """Tables 4-7 and the Fig. 6 curves for one configuration (model), by family."""

    cells: dict[str, dict[str, Cell]]  # family -> metric -> cell
    counts: list[int]  # the C values of the persistent dialogues
    missing: int  # fallback judgments (no rating)
    judged: int  # judgments read


def tables(rows: Sequence[Scored], families: Sequence[str], seed: int = 0,
           resamples: int = RESAMPLES) -> Tables:
    counts = sorted({r.c for r in rows if r.setting == "persistent"})
    cells: dict[str, dict[str, Cell]] = {}
    for family in families:
        mine = [r for r in rows if r.family == family]
        out = {name: metric_cell(mine, name, seed, resamples)
               for name in [OVERALL, *KEPT_CURVE, *FIDELITY_CURVE]}
        for table, (first, second) in PAIRS.items():
            out[f"{table}_delta"] = delta(mine, first, second, seed, resamples)
        for c in counts:
            out[f"c{c}"] = metric_cell(mine, f"c{c}", seed, resamples)
        if len(counts) >= 2:
            out["c_delta"] = delta(mine, f"c{counts[0]}", f"c{counts[-1]}", seed, resamples)
        cells[family] = out
    missing = sum(sum(r.missing.values()) for r in rows)
    judged = sum(r.judgments for r in rows)
    return Tables(cells=cells, counts=counts, missing=missing, judged=judged)
