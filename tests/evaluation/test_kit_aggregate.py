"""The kit's aggregation helpers against numbers worked out by hand."""

from __future__ import annotations

import pytest

from evaluation.kit import bootstrap_ci, macro_average, mean_or_none, metric_means, micro_average


def test_micro_weighs_every_value_and_macro_every_group():
    groups = {"public": [1.0, 1.0, 1.0, 0.0], "appointment": [0.0], "help": []}
    assert micro_average(groups) == pytest.approx(3 / 5)
    assert macro_average(groups) == pytest.approx((0.75 + 0.0) / 2)  # the empty group skipped
    assert micro_average({}) is None and macro_average({"x": []}) is None


def test_metric_means_skip_missing_values():
    rows = [{"sr": 1.0, "gcsr": 0.5}, {"sr": 0.0}, {"sr": 1.0, "gcsr": None}]
    assert metric_means(rows, ["sr", "gcsr", "other"]) == {
        "sr": pytest.approx(2 / 3), "gcsr": 0.5, "other": None}
    assert mean_or_none([]) is None


def test_no_interval_below_five_units_and_clusters_resampled_as_units():
    from evaluation.kit import MIN_UNITS, cluster_interval, interval

    assert MIN_UNITS == 5
    assert interval([1.0, 2.0, 3.0, 4.0]) is None
    assert interval([1.0, 2.0, 3.0, 4.0, 5.0], seed=1) == bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.0],
                                                                         1)
    # four clusters of many agreeing values: too few units, however many values
    assert cluster_interval([[float(c)] * 10 for c in range(4)]) is None
    lo, hi = cluster_interval([[float(c)] * 10 for c in range(6)], seed=0, resamples=500)
    naive = bootstrap_ci([float(c) for c in range(6) for _ in range(10)], 0, 500)
    assert hi - lo > 1.5 * (naive[1] - naive[0])  # 6 units, not 60
    assert cluster_interval([[1.0, 3.0]] * 5, seed=0) != (2.0, 2.0)  # values within resampled
