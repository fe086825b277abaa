"""bench/stss.py's model of what an episode's calls would cost answered one after another,
at best batched, and batched with each decode pass's measured cost: the figures the issue's
time targets for the embedded model are judged by."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.scripts import load_script

stss = load_script("bench/stss.py")

SPEED = {"prompt_tokens_per_s": 100.0, "ms_per_token": 10.0}
PASSES = {1: 0.010, 2: 0.015, 4: 0.020}


def call(t, prompt=0, reused=0, completion=0, dictated=0, tag="converse.turn"):
    return SimpleNamespace(t=t, tag=tag, prompt_tokens=prompt, prefix_tokens=reused,
                           completion_tokens=completion, dictated_tokens=dictated)


def test_a_lone_call_pays_for_a_padding_row_and_a_group_shares_its_passes():
    alone = [call(0.0, prompt=120, reused=20, completion=3)]            # 1 s of prompt
    group = [call(10.0, completion=2), call(10.0, completion=6, dictated=2)]  # 4 generated
    cost = stss.modelled([alone, group], SPEED, PASSES)
    assert cost["prompts"] == pytest.approx(1.0 + 0.02)   # dictated text at the prompt rate
    assert cost["generation"] == pytest.approx((3 + 2 + 4) * 0.010)
    assert cost["sequential"] == pytest.approx(cost["prompts"] + cost["generation"])
    # the floor: the lone call, then the group's longest call
    assert cost["floor"] == pytest.approx(1.0 + 0.03 + 0.02 + 0.04)
    # padded: every pass at least 2 rows -- the lone call's 3 and the group's 4
    assert cost["padded"] == pytest.approx(cost["prompts"] + 7 * 0.015)
    # lone rows allowed: 3 lone passes, 2 of 2 rows, 2 of 1 row
    assert cost["lone"] == pytest.approx(cost["prompts"] + 3 * 0.010 + 2 * 0.015 + 2 * 0.010)


def test_a_pass_between_and_beyond_the_measured_sizes_follows_their_line():
    assert stss.pass_cost(PASSES, 3) == pytest.approx(0.0175)
    assert stss.pass_cost(PASSES, 6) == pytest.approx(0.020 + 2 * 0.0025)


def test_without_measured_passes_only_the_sequential_figures_and_the_floor_are_given():
    cost = stss.modelled([[call(0.0, completion=5)]], SPEED, None)
    assert cost["sequential"] == pytest.approx(0.05)
    assert "padded" not in cost and "lone" not in cost
    text = stss.asked_together([call(0.0, completion=5)], SPEED, None)
    assert "floor for any batching" in text and "padded" not in text
    assert "records no measured speed" in stss.asked_together([call(0.0)], None, None)
