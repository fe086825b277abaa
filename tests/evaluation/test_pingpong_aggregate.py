"""PingPong aggregation against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest

from evaluation.kit import bootstrap_ci
from evaluation.pingpong import (
    PlayerData,
    leaderboard,
    length_factor,
    player_score,
    score_conversation,
)
from sandbox.judgments import Judgment, TurnVerdict


def turn(ic: int, ent: int, flu: int, refusal: bool = False) -> TurnVerdict:
    return TurnVerdict(turn=0, scores={"in_character": ic, "entertaining": ent, "fluency": flu},
                       flags={"is_refusal": refusal})


def judgment(judge: str, *turns: TurnVerdict, status: str = "ok") -> Judgment:
    return Judgment(judge="pingpong", model=judge, status=status, turns=list(turns))


def test_per_turn_means_then_mean_of_the_three_criteria():
    # in_character (5+3)/2 = 4, entertaining (4+2)/2 = 3, fluency (3+3)/2 = 3; final 10/3
    score = score_conversation("p", [judgment("a", turn(5, 4, 3), turn(3, 2, 3))])
    assert score.criteria == {"in_character": 4.0, "entertaining": 3.0, "fluency": 3.0}
    assert score.final == pytest.approx(10 / 3)
    assert score.judges_used == 1 and not score.refused


def test_several_judges_are_averaged_plainly():
    # judge a: (4, 3, 3); judge b: one turn (2, 5, 4) -> (3, 4, 3.5), final 3.5
    score = score_conversation("p", [judgment("a", turn(5, 4, 3), turn(3, 2, 3)),
                                     judgment("b", turn(2, 5, 4))])
    assert score.criteria == {"in_character": 3.0, "entertaining": 4.0, "fluency": 3.5}
    assert score.final == pytest.approx(3.5)
    assert score.judges_used == 2


def test_a_judge_that_saw_a_refusal_is_dropped_and_the_conversation_counts_as_refused():
    score = score_conversation("p", [judgment("a", turn(5, 5, 5), turn(1, 1, 1, refusal=True)),
                                     judgment("b", turn(2, 3, 4))])
    assert score.refused
    assert score.judges_used == 1
    assert score.criteria == {"in_character": 2.0, "entertaining": 3.0, "fluency": 4.0}
    assert score.final == pytest.approx(3.0)


def test_refused_by_every_judge_leaves_no_score_but_counts_in_the_ratio():
    refused = score_conversation("r", [judgment("a", turn(4, 4, 4, refusal=True))])
    assert refused.refused and refused.final is None and refused.judged
    fine = score_conversation("f", [judgment("a", turn(4, 4, 4))])
    half = score_conversation("h", [judgment("a", turn(2, 2, 2, refusal=True)),
                                    judgment("b", turn(2, 2, 2))])
    row = player_score(PlayerData("x", [refused, fine, half], [10]), factor=1.0)
    assert row.refusal_ratio == pytest.approx(2 / 3)  # r and h refused, of 3 judged
    assert row.scored == 2 and row.refused == 2
    assert row.aggregate == pytest.approx(3.0)  # mean of 4 (f) and 2 (h, judge b)


def test_a_fallback_judgment_is_counted_and_left_out_of_every_mean():
    score = score_conversation("p", [judgment("a", turn(1, 1, 1), status="fallback"),
                                     judgment("b", turn(5, 4, 3))])
    assert score.fallbacks == 1 and score.judges_used == 1
    assert score.final == pytest.approx(4.0)
    only_fallback = score_conversation("q", [judgment("a", turn(3, 3, 3), status="fallback")])
    assert not only_fallback.judged and only_fallback.final is None
    row = player_score(PlayerData("x", [score, only_fallback], [5]), factor=1.0)
    assert row.conversations == 1 and row.unjudged == 1 and row.judge_fallbacks == 2
    assert row.refusal_ratio == 0.0


def test_length_penalty_at_inside_and_beyond_the_clamp():
    lengths = [100, 200, 400]  # median 200
    assert length_factor(200, lengths) == 1.0  # at the median: exactly the upper clamp
    assert length_factor(100, lengths) == 1.0  # shorter: 1 + (2 - 1) * 0.07 = 1.07 -> 1
    assert length_factor(400, lengths) == pytest.approx(0.965)  # 1 + (0.5 - 1) * 0.07
    assert length_factor(20_000, lengths) == pytest.approx(1 - 0.99 * 0.07)  # 0.9307
    # the lower clamp: with a stronger pull, 1 + (0.1 - 1) * 0.5 = 0.55 -> 0.93
    assert length_factor(2000, lengths, strength=0.5) == 0.93
    assert length_factor(0, lengths) == 1.0  # no replies: no penalty to compute


def test_bootstrap_ci_is_reproducible_under_a_seed():
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 2.5, 3.5]
    first = bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7) == first
    assert bootstrap_ci(values, seed=8) != first
    lo, hi = first
    assert lo < sum(values) / len(values) < hi
    assert 1.0 <= lo and hi <= 5.0
    assert bootstrap_ci([3.0, 3.0, 3.0], seed=1) == (3.0, 3.0)
    assert all(math.isnan(v) for v in bootstrap_ci([], seed=1))


def test_leaderboard_applies_the_length_factor_to_score_and_interval():
    conv = [score_conversation(str(i), [judgment("a", turn(s, s, s))])
            for i, s in enumerate([4, 5, 3, 4, 4])]  # 5: the fewest with an interval
    short = PlayerData("short", conv, reply_lengths=[100, 100])
    long = PlayerData("long", conv, reply_lengths=[300, 300])
    rows = {r.label: r for r in leaderboard([long, short], seed=3)}
    # median of (100, 300) is 200: long gets 1 + (200/300 - 1) * 0.07
    factor = 1 + (200 / 300 - 1) * 0.07
    assert rows["short"].length_factor == 1.0
    assert rows["long"].length_factor == pytest.approx(factor)
    assert rows["short"].aggregate == rows["long"].aggregate == pytest.approx(4.0)
    assert rows["long"].score == pytest.approx(4.0 * factor)
    lo, hi = rows["short"].ci
    assert rows["long"].ci == pytest.approx((lo * factor, hi * factor))
    assert [r.label for r in leaderboard([long, short], seed=3)] == ["short", "long"]


def test_the_reference_arithmetic_reproduces_the_public_leaderboard_code_by_hand():
    # A and B: criteria (4, 4, 4) -> final 0.333 * 12 = 3.996; C: (3, 3, 3) -> 2.997.
    # Mean lengths truncated: A 100.5 -> 100, B 180.5 -> 180, C 150.5 -> 150; median 150.
    # Factors: A 1 + (1.5 - 1) * 0.07 -> clamped 1; B 1 + (150/180 - 1) * 0.07 = 0.98833...;
    # C exactly 1. Scores: A 3.996, B 3.996 * 0.98833 = 3.9494 (3.95 shown, within 0.06 of
    # A's 4.00: shares rank 1), C 2.997 (rank 3).
    def players(arithmetic):
        def player(label, grade, lengths):
            conv = score_conversation(label, [judgment("j", turn(grade, grade, grade))],
                                      arithmetic=arithmetic)
            return PlayerData(label, [conv], reply_lengths=lengths)
        return [player("C", 3, [150, 151]), player("B", 4, [180, 181]),
                player("A", 4, [100, 101])]

    rows = {r.label: r for r in leaderboard(players("reference"), arithmetic="reference")}
    assert rows["A"].aggregate == pytest.approx(3.996)
    assert rows["C"].aggregate == pytest.approx(2.997)
    assert [rows[k].mean_length for k in "ABC"] == [100.0, 180.0, 150.0]
    assert rows["A"].length_factor == 1.0 and rows["C"].length_factor == 1.0
    assert rows["B"].length_factor == pytest.approx(1 + (150 / 180 - 1) * 0.07)
    assert rows["B"].score == pytest.approx(3.996 * (1 + (150 / 180 - 1) * 0.07))
    ranked = leaderboard(players("reference"), arithmetic="reference")
    assert [(r.label, r.rank) for r in ranked] == [("A", 1), ("B", 1), ("C", 3)]
    # The paper's arithmetic on the same judgments: plain means, float lengths, own ranks.
    paper = {r.label: r for r in leaderboard(players("paper"))}
    assert paper["A"].aggregate == 4.0 and paper["B"].mean_length == 180.5
    assert paper["B"].length_factor == pytest.approx(1 + (150.5 / 180.5 - 1) * 0.07)
    assert [r.rank for r in leaderboard(players("paper"))] == [1, 2, 3]


def test_reference_ranks_start_a_new_group_beyond_the_gap():
    from evaluation.pingpong import PlayerScore, ranks

    def row(score):
        return PlayerScore(label=str(score), score=score, ci=None, aggregate=score, criteria={},
                           refusal_ratio=0.0, length_factor=1.0, mean_length=1.0,
                           conversations=1, scored=1, refused=0, unjudged=0, judge_fallbacks=0)

    # 4.00 opens a group; 3.95 joins it; 3.93 is 0.07 from the group's first: a new group at
    # its own position (3); 3.88 is 0.05 from 3.93: rank 3; None scores get their position.
    scores = [4.0, 3.95, 3.93, 3.88, 3.5]
    assert ranks([row(s) for s in scores], "reference") == [1, 1, 3, 3, 5]


def test_a_tie_shares_its_rank_under_the_paper_s_arithmetic():
    from evaluation.pingpong import PlayerScore, ranks

    def row(score):
        return PlayerScore(label=str(score), score=score, ci=None, aggregate=score, criteria={},
                           refusal_ratio=0.0, length_factor=1.0, mean_length=1.0,
                           conversations=1, scored=1, refused=0, unjudged=0, judge_fallbacks=0)

    # Two players of one score are one place, not first and second; the next is third.
    assert ranks([row(s) for s in (4.0, 4.0, 3.5, None, None)], "paper") == [1, 1, 3, 4, 5]
