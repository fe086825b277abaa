"""Paired comparisons of two run sets of one benchmark (`sandbox compare A B`): items matched
by what both sets share, the mean difference with a bootstrap interval over what was sampled,
a sign-flip p, wins / ties / losses per type, the items a difference needs, and every item one
side lacks named. Reads run sets with the boards' own readers; calls no model.

    from evaluation.compare import compare_dirs
    report = compare_dirs("runs/suite:ga", "runs/suite:ga_tdp", seed=0, effect=0.1)
"""

from .report import compare, compare_dirs, compare_sets, one_side_only, pairs_of
from .sides import MARKERS, Item, Side, benchmark_of, merge_sides, read_side, split_spec
from .stats import (
    Pair,
    difference_interval,
    items_needed,
    paired_summary,
    seeds_needed,
    sign_flip_p,
    t_test_power,
)

__all__ = ["MARKERS", "Item", "Pair", "Side", "benchmark_of", "compare", "compare_dirs",
           "compare_sets", "merge_sides",
           "difference_interval", "items_needed", "one_side_only", "paired_summary",
           "pairs_of", "read_side", "seeds_needed", "sign_flip_p", "split_spec",
           "t_test_power"]
