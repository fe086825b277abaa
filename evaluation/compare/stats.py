"""Paired statistics over matched items: the mean difference B - A with a bootstrap interval
that resamples what was sampled, a sign-flip permutation p-value, wins / ties / losses, and
the matched items a paired t-test needs to detect a difference at 80% power.

Plain functions over `Pair`s; every random draw comes from one seeded generator, so the same
pairs and seed give the same numbers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean, stdev

import numpy as np

from evaluation.kit import MIN_UNITS, RESAMPLES
from evaluation.kit.aggregate import cluster_sums

TIE = 1e-9  # two values this close are a tie (scores are means of judge ratings)
EXACT_FLIPS = 16  # up to 2^16 sign patterns are enumerated; beyond, drawn
POWER = 0.8
ALPHA = 0.05


@dataclass(frozen=True)
class Pair:
    """One matched item: its value on side A and on side B, the type it is reported under
    (`stratum`, "" for none) and the unit it was sampled in (`cluster`: an STSS template, an
    interviewed agent; the item itself when items were drawn independently)."""

    key: str
    a: float
    b: float
    stratum: str = ""
    cluster: str = ""

    @property
    def diff(self) -> float:
        return self.b - self.a


def _layout(pairs: Sequence[Pair], stratified: bool) -> list[list[list[float]]]:
    """Strata -> clusters -> differences (one stratum of everything unless `stratified`)."""
    strata: dict[str, dict[str, list[float]]] = {}
    for p in pairs:
        stratum = p.stratum if stratified else ""
        strata.setdefault(stratum, {}).setdefault(p.cluster or p.key, []).append(p.diff)
    return [list(clusters.values()) for clusters in strata.values()]


def units(pairs: Sequence[Pair]) -> int:
    """The independent units the pairs come in: their distinct clusters."""
    return len({p.cluster or p.key for p in pairs})


def difference_interval(pairs: Sequence[Pair], *, stratified: bool = False, seed: int = 0,
                        resamples: int = RESAMPLES, level: float = 0.95
                        ) -> tuple[float, float] | None:
    """Percentile interval of the mean difference: within each stratum (when `stratified`: the
    board weighs types by their counts, so each resample keeps them) clusters are drawn with
    replacement, then the items of each drawn cluster. None below MIN_UNITS clusters."""
    if units(pairs) < MIN_UNITS:
        return None
    rng = np.random.default_rng(seed)
    totals = np.zeros(resamples)
    counts = np.zeros(resamples)
    for clusters in _layout(pairs, stratified):
        t, c = cluster_sums(clusters, rng, resamples)
        totals += t
        counts += c
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(totals / counts, [tail, 100 - tail])
    return (float(lo), float(hi))


def sign_flip_p(diffs: Sequence[float], seed: int = 0, draws: int = 20000) -> float | None:
    """Two-sided p of the paired sign-flip permutation test: under "A and B are the same", each
    item's difference is as likely to have either sign, so the observed |mean| is compared
    with the |mean| under every sign pattern (exact up to EXACT_FLIPS items, else `draws`
    random patterns, the observed one counted among them). None without a difference."""
    d = np.asarray([x for x in diffs if abs(x) > TIE], dtype=float)  # zeros flip to themselves
    n_all = len(diffs)
    if not n_all:
        return None
    if not len(d):
        return 1.0
    observed = abs(d.sum()) - TIE
    if len(d) <= EXACT_FLIPS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
        return float(np.mean(np.abs(signs @ d) >= observed))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(draws, len(d)))
    hits = int(np.sum(np.abs(signs @ d) >= observed))
    return (hits + 1) / (draws + 1)


def tally(pairs: Sequence[Pair]) -> dict[str, int]:
    """B's wins, ties and losses against A, item by item."""
    return {"wins": sum(p.diff > TIE for p in pairs), "ties": sum(abs(p.diff) <= TIE
                                                                  for p in pairs),
            "losses": sum(p.diff < -TIE for p in pairs)}


def t_test_power(n: int, effect: float, sd: float, alpha: float = ALPHA) -> float:
    """Power of the two-sided paired t-test on n items whose differences have mean `effect`
    and standard deviation `sd` (the noncentral t)."""
    from scipy import stats

    if n < 2:
        return 0.0
    df = n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)
    nc = effect / sd * math.sqrt(n)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def items_needed(effect: float, sd: float, power: float = POWER, alpha: float = ALPHA,
                 limit: int = 1_000_000) -> int | None:
    """The fewest matched items for a two-sided paired t-test at `alpha` to detect a mean
    difference `effect` with probability `power`, differences spread by `sd`. None when there
    is no difference to detect (effect 0) or more than `limit` would be needed."""
    if not effect or not math.isfinite(effect) or sd <= 0:
        return None  # no difference, or no spread to plan from (seeds_needed says which)
    z = 1.959963984540054 if alpha == ALPHA else _z(1 - alpha / 2)
    guess = max(2, int(((z + 0.8416212335729143) * sd / abs(effect)) ** 2))
    # The power grows with n: from the normal guess (a little low), find an n with enough
    # and one below without by doubling steps, then the exact minimum between them.
    low, step = max(1, guess - 2), 1
    while t_test_power(low, abs(effect), sd, alpha) >= power and low > 1:
        low, step = max(1, low - step), step * 2
    high, step = low + 1, 1
    while t_test_power(high, abs(effect), sd, alpha) < power:
        low, high, step = high, high + step, step * 2
        if low > limit:
            return None
    while high - low > 1:
        mid = (low + high) // 2
        if t_test_power(mid, abs(effect), sd, alpha) >= power:
            high = mid
        else:
            low = mid
    return high if high <= limit else None


def _z(q: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(q))


def seeds_needed(pairs: Sequence[Pair], effect: float | None = None) -> dict:
    """From the observed differences' spread: the matched items needed at 80% power (alpha
    0.05, paired t-test) to detect the observed mean difference, and `effect` if given; with
    clusters holding several items (STSS: seeds of a template), the same as items per cluster
    over the clusters there are."""
    diffs = [p.diff for p in pairs]
    out: dict = {"power": POWER, "alpha": ALPHA, "test": "two-sided paired t-test",
                 "sd": None, "observed": None, "effect": None}
    if len(diffs) < 2:
        out["why"] = "fewer than 2 matched items: no spread to plan from"
        return out
    sd = float(stdev(diffs))
    observed = float(mean(diffs))
    out["sd"] = sd
    if sd == 0:  # every item differs by the same amount: no spread, no estimate
        out["why"] = ("the differences have no spread (every matched item differs by the same "
                      "amount): the items needed cannot be estimated")
        return out
    clusters = units(pairs)
    for name, target in (("observed", observed), ("effect", effect)):
        if target is None:
            continue
        n = items_needed(target, sd)
        entry = {"difference": target, "items": n}
        if n is not None and clusters < len(diffs):
            entry["per_cluster"] = math.ceil(n / clusters)
        out[name] = entry
    return out


def paired_summary(pairs: Sequence[Pair], *, stratified: bool = False, seed: int = 0,
                   resamples: int = RESAMPLES) -> dict:
    """The mean difference B - A, its interval, the sign-flip p, wins / ties / losses, n and
    the units the interval resampled."""
    if not pairs:
        return {"n": 0, "units": 0, "mean_a": None, "mean_b": None, "difference": None,
                "ci": None, "p": None, "wins": 0, "ties": 0, "losses": 0}
    ci = difference_interval(pairs, stratified=stratified, seed=seed, resamples=resamples)
    return {"n": len(pairs), "units": units(pairs), "mean_a": float(mean(p.a for p in pairs)),
            "mean_b": float(mean(p.b for p in pairs)),
            "difference": float(mean(p.diff for p in pairs)),
            "ci": None if ci is None else list(ci),
            "p": sign_flip_p([p.diff for p in pairs], seed), **tally(pairs)}
