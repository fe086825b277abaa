"""SimulBench aggregation: plain means of per-script scores over a subset (no per-task
weighting), as the original's score calculator, with seeded bootstrap 95% intervals.

Subsets (../shared/specs/simulbench.md 3.6): All, Hard (= FirstChan + SubseqChan), LastOnly,
FirstChan, SubseqChan; Stateless/Stateful over FirstChan only (the paper's Table 5) and over all
scripts (the published stateful/stateless sets); by turn_num 1..4 (Table 4); by task (Table 2);
by request_type. A script's score is the mean of its usable judges' in-range ratings; a script
no judge could rate enters no mean and is counted as unscored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaluation.kit import by_item, item_interval, mean_or_none


@dataclass
class ScriptScore:
    """One answered script and its score (None: no judge gave a usable rating)."""

    item: str
    category: str  # lastonly | firstchan | subseqchan
    type: str  # stateful | stateless
    turn_num: int
    act: str
    request_type: str
    score: float | None


SUBSETS: dict[str, Callable[[ScriptScore], bool]] = {
    "all": lambda s: True,
    "hard": lambda s: s.category != "lastonly",
    "lastonly": lambda s: s.category == "lastonly",
    "firstchan": lambda s: s.category == "firstchan",
    "subseqchan": lambda s: s.category == "subseqchan",
    # the paper's Table 5: over FirstChan only
    "stateless_firstchan": lambda s: s.category == "firstchan" and s.type == "stateless",
    "stateful_firstchan": lambda s: s.category == "firstchan" and s.type == "stateful",
    # the published stateful/stateless sets: over every script
    "stateless": lambda s: s.type == "stateless",
    "stateful": lambda s: s.type == "stateful",
}


@dataclass
class SubsetMean:
    mean: float | None
    n: int
    ci: tuple[float, float] | None = None


def subset_mean(scores: Sequence[ScriptScore], keep: Callable[[ScriptScore], bool],
                seed: int = 0, resamples: int = 1000) -> SubsetMean:
    found = [(s.item, s.score) for s in scores if keep(s) and s.score is not None]
    if not found:
        return SubsetMean(None, 0)
    # a script under several seeds (a row pooling a sweep's cells) is one unit, its seeds
    # drawn together
    return SubsetMean(mean_or_none(v for _, v in found), len(found),
                      item_interval(by_item(found), seed, resamples))


def subset_means(scores: Sequence[ScriptScore], seed: int = 0, resamples: int = 1000
                 ) -> dict[str, SubsetMean]:
    return {name: subset_mean(scores, keep, seed, resamples) for name, keep in SUBSETS.items()}


def grouped_means(scores: Sequence[ScriptScore], key: Callable[[ScriptScore], object]
                  ) -> dict[str, SubsetMean]:
    """The mean per group (by turn, by task, by request type), groups in sorted order."""
    groups: dict[str, list[float]] = {}
    for s in scores:
        if s.score is not None:
            groups.setdefault(str(key(s)), []).append(s.score)
    return {g: SubsetMean(mean_or_none(v), len(v)) for g, v in sorted(groups.items())}


@dataclass
class PairTally:
    """Pairwise results of a first model against a second over a subset's scripts."""

    win: int = 0
    tie: int = 0
    lose: int = 0
    inconsistent: int = 0  # both orders picked the same position (A/A or B/B)
    unjudged: int = 0  # a verdict fell back in at least one order

    @property
    def total(self) -> int:
        return self.win + self.tie + self.lose

    def rates(self) -> dict[str, float | None]:
        if not self.total:
            return {"win": None, "tie": None, "lose": None, "delta": None,
                    "inconsistent": None}
        win, tie, lose = (100 * x / self.total for x in (self.win, self.tie, self.lose))
        return {"win": win, "tie": tie, "lose": lose, "delta": win - lose,
                "inconsistent": 100 * self.inconsistent / self.total}
