"""The kit's aggregation helpers against numbers worked out by hand."""

from __future__ import annotations

import pytest

from evaluation.kit import macro_average, mean_or_none, metric_means, micro_average


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
