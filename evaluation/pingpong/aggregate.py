"""PingPong aggregation (paper section 4, DESIGN.md section 7), as plain functions over data.

Per conversation and judge: the mean over player turns of each criterion, and their mean (the
judge's final). A judge that saw a refusal in any turn has its score dropped; a judgment that fell
back (no usable answer) is dropped too, and counted. Several judges: the plain mean of what is
left. A conversation is refused when any usable judgment saw a refusal; the refusal ratio is
refused conversations / judged conversations.

Per player: the mean over conversations; the v2 length penalty (median over players of the mean
reply length, divided by this player's, pulled towards 1 by a factor 0.07 and clamped to
[0.93, 1]) multiplies the score; a bootstrap of the mean over conversations (1000 resamples,
seeded) gives the 95% interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean, median

import numpy as np
from pydantic import BaseModel, Field

from .judge import CRITERIA, Judgment

LENGTH_STRENGTH = 0.07
LENGTH_CLAMP = (0.93, 1.0)
RESAMPLES = 1000


class ConversationScore(BaseModel):
    """What the judges made of one conversation."""

    pair: str
    judges_used: int  # usable, non-refusing judgments that enter the means
    refused: bool = False
    fallbacks: int = 0  # judgments with no usable answer (excluded)
    criteria: dict[str, float] | None = None  # None: nothing usable (excluded from means)
    final: float | None = None

    @property
    def judged(self) -> bool:
        """At least one judge gave a usable answer (refusing or not)."""
        return self.judges_used > 0 or self.refused


def score_conversation(pair: str, judgments: Sequence[Judgment]) -> ConversationScore:
    usable = [j for j in judgments if j.usable]
    kept = [j for j in usable if not j.refused]
    score = ConversationScore(pair=pair, judges_used=len(kept),
                              refused=any(j.refused for j in usable),
                              fallbacks=len(judgments) - len(usable))
    if kept:
        per_judge = [j.criterion_means() for j in kept]
        score.criteria = {c: mean(m[c] for m in per_judge) for c in CRITERIA}
        score.final = mean(score.criteria.values())
    return score


def length_factor(player_length: float, all_lengths: Sequence[float],
                  strength: float = LENGTH_STRENGTH,
                  clamp: tuple[float, float] = LENGTH_CLAMP) -> float:
    """The v2 length penalty: 1 + (median / player_length - 1) * strength, clamped.

    A player no longer than the median keeps its score (factor 1); a longer one loses up to 7%.
    """
    if player_length <= 0 or not all_lengths:
        return clamp[1]
    ratio = median(all_lengths) / player_length
    return min(max(1 + (ratio - 1) * strength, clamp[0]), clamp[1])


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


@dataclass
class PlayerData:
    """Everything the board needs of one player: its conversation scores and reply lengths."""

    label: str
    conversations: list[ConversationScore]
    reply_lengths: list[int]  # characters, every player reply of every conversation
    meta: dict | None = None


class PlayerScore(BaseModel):
    """One leaderboard row."""

    label: str
    score: float | None  # length-normalised aggregate
    ci: tuple[float, float] | None  # 95% bootstrap interval of `score`
    aggregate: float | None  # mean over conversations of the mean of the three criteria
    criteria: dict[str, float | None]
    refusal_ratio: float | None
    length_factor: float
    mean_length: float
    conversations: int  # with at least one usable judgment
    scored: int  # entering the means (judged, not refused by every usable judge)
    refused: int
    unjudged: int  # no usable judgment at all
    judge_fallbacks: int
    meta: dict = Field(default_factory=dict)


def player_score(player: PlayerData, factor: float, seed: int = 0,
                 resamples: int = RESAMPLES) -> PlayerScore:
    judged = [c for c in player.conversations if c.judged]
    scored = [c for c in judged if c.final is not None]
    refused = sum(c.refused for c in judged)
    finals = [c.final for c in scored]
    aggregate = mean(finals) if finals else None
    ci = None
    if finals:
        lo, hi = bootstrap_ci(finals, seed=seed, resamples=resamples)
        ci = (lo * factor, hi * factor)  # the factor is a constant: it scales the interval
    return PlayerScore(
        label=player.label,
        score=aggregate * factor if aggregate is not None else None, ci=ci,
        aggregate=aggregate,
        criteria={c: mean(s.criteria[c] for s in scored) if scored else None for c in CRITERIA},
        refusal_ratio=refused / len(judged) if judged else None,
        length_factor=factor,
        mean_length=mean(player.reply_lengths) if player.reply_lengths else 0.0,
        conversations=len(judged), scored=len(scored), refused=refused,
        unjudged=len(player.conversations) - len(judged),
        judge_fallbacks=sum(c.fallbacks for c in player.conversations),
        meta=player.meta or {})


def leaderboard(players: Sequence[PlayerData], seed: int = 0,
                resamples: int = RESAMPLES) -> list[PlayerScore]:
    """Rows for every player, best length-normalised score first."""
    lengths = [mean(p.reply_lengths) for p in players if p.reply_lengths]
    rows = [player_score(p, length_factor(mean(p.reply_lengths) if p.reply_lengths else 0.0,
                                          lengths), seed=seed, resamples=resamples)
            for p in players]
    return sorted(rows, key=lambda r: (r.score is None, -(r.score or 0.0), r.label))
