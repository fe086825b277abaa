"""PingPong aggregation (paper section 4, DESIGN.md section 7), as plain functions over data.

Per conversation and judge: the mean over player turns of each criterion, and their mean (the
judge's final). A judge that saw a refusal in any turn has its score dropped; a judgment that fell
back (no usable answer) is dropped too, and counted. Several judges: the plain mean of what is
left. A conversation is refused when any usable judgment saw a refusal; the refusal ratio is
refused conversations / judged conversations.

Per player: the mean over conversations; the v2 length penalty (median over players of the mean
reply length, divided by this player's, pulled towards 1 by a factor 0.07 and clamped to
[0.93, 1]) multiplies the score; a bootstrap of the mean over conversations (1000 resamples,
seeded) gives the 95% interval, a pair's conversations under several seeds drawn together.
Reply lengths count only conversations some judge could judge.

Two arithmetics (`--arithmetic`):
  paper      (default) the paper's: the final is the plain mean of the three criteria, the
             mean reply length is a float, every player has its own rank but for equal
             scores, which share one.
  reference  the public leaderboard code's: the final is sum(0.333 x criterion) (0.999 x the
             mean), the mean reply length is truncated to an integer before the median and the
             length factor, and a player within 0.06 of its group's first (scores rounded to two
             decimals, as that code compares them) shares that player's rank. Point estimates
             stay exact means (that code reports the mean of its bootstrap means). The board's
             other weightings of the final (entertaining, in character or fluency counted
             twice: REFERENCE_WEIGHTINGS) are given beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean, median
from typing import Literal

from pydantic import BaseModel, Field

from evaluation.kit import RESAMPLES, by_item, item_interval
from sandbox.judgments import Judgment

from .judge import CRITERIA, criterion_means, refused

LENGTH_STRENGTH = 0.07
LENGTH_CLAMP = (0.93, 1.0)
REFERENCE_WEIGHT = 0.333  # per criterion, in the public leaderboard code
REFERENCE_RANK_GAP = 0.06
# The public board's weight selector: (in_character, entertaining, fluency) weights of a
# conversation's final; the first is its default (REFERENCE_WEIGHT each).
REFERENCE_WEIGHTINGS = {
    "character 1, entertain 1, fluency 1": (0.333, 0.333, 0.333),
    "character 1, entertain 2, fluency 1": (0.25, 0.5, 0.25),
    "character 2, entertain 1, fluency 1": (0.5, 0.25, 0.25),
    "character 1, entertain 1, fluency 2": (0.25, 0.25, 0.5),
}
Arithmetic = Literal["paper", "reference"]


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


def final_of(criteria: dict[str, float], arithmetic: Arithmetic = "paper") -> float:
    if arithmetic == "reference":
        return sum(REFERENCE_WEIGHT * criteria[c] for c in CRITERIA)
    return mean(criteria.values())


def score_conversation(pair: str, judgments: Sequence[Judgment],
                       arithmetic: Arithmetic = "paper") -> ConversationScore:
    usable = [j for j in judgments if j.usable]
    kept = [j for j in usable if not refused(j)]
    score = ConversationScore(pair=pair, judges_used=len(kept),
                              refused=any(refused(j) for j in usable),
                              fallbacks=len(judgments) - len(usable))
    if kept:
        per_judge = [criterion_means(j) for j in kept]
        score.criteria = {c: mean(m[c] for m in per_judge) for c in CRITERIA}
        # Per judge, then over judges: the same as the final of the mean criteria, for both
        # arithmetics (each is linear in the criteria).
        score.final = final_of(score.criteria, arithmetic)
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


@dataclass
class PlayerData:
    """Everything the board needs of one player: its conversation scores and reply lengths."""

    label: str
    conversations: list[ConversationScore]
    reply_lengths: list[int]  # characters, every player reply of every judged conversation
    meta: dict | None = None
    selected: int = 0  # the pairs the manifest selected (0: as many as there are conversations)


class PlayerScore(BaseModel):
    """One leaderboard row."""

    label: str
    rank: int = 0
    score: float | None  # length-normalised aggregate
    ci: tuple[float, float] | None  # 95% bootstrap interval of `score`
    aggregate: float | None  # mean over conversations of the final of the three criteria
    criteria: dict[str, float | None]
    refusal_ratio: float | None
    length_factor: float
    mean_length: float
    selected: int = 0  # pairs the manifest selected, finished or not
    conversations: int  # with at least one usable judgment
    scored: int  # entering the means (judged, not refused by every usable judge)
    refused: int
    unjudged: int  # no usable judgment at all
    judge_fallbacks: int
    meta: dict = Field(default_factory=dict)
    # reference arithmetic only: the LN score under each of the public board's weightings
    weightings: dict[str, float | None] = Field(default_factory=dict)


def mean_length(player: PlayerData, arithmetic: Arithmetic = "paper") -> float:
    if not player.reply_lengths:
        return 0.0
    value = mean(player.reply_lengths)
    return float(int(value)) if arithmetic == "reference" else value


def player_score(player: PlayerData, factor: float, seed: int = 0,
                 resamples: int = RESAMPLES, arithmetic: Arithmetic = "paper") -> PlayerScore:
    judged = [c for c in player.conversations if c.judged]
    scored = [c for c in judged if c.final is not None]
    n_refused = sum(c.refused for c in judged)
    finals = [c.final for c in scored]
    aggregate = mean(finals) if finals else None
    ci = None
    # A pair under several seeds (a row pooling a sweep's cells) is one unit, its seeds drawn
    # together: the pairs were sampled, the seeds re-run them.
    if (found := item_interval(by_item((c.pair, c.final) for c in scored), seed,
                               resamples)) is not None:
        lo, hi = found
        ci = (lo * factor, hi * factor)  # the factor is a constant: it scales the interval
    weightings = {}
    if arithmetic == "reference":  # the same conversations, each final weighted otherwise
        for name, weights in REFERENCE_WEIGHTINGS.items():
            weighted = [sum(w * s.criteria[c] for w, c in zip(weights, CRITERIA, strict=True))
                        for s in scored]
            weightings[name] = mean(weighted) * factor if weighted else None
    return PlayerScore(
        label=player.label, weightings=weightings,
        score=aggregate * factor if aggregate is not None else None, ci=ci,
        aggregate=aggregate,
        criteria={c: mean(s.criteria[c] for s in scored) if scored else None for c in CRITERIA},
        refusal_ratio=n_refused / len(judged) if judged else None,
        length_factor=factor, mean_length=mean_length(player, arithmetic),
        selected=player.selected or len(player.conversations),
        conversations=len(judged), scored=len(scored), refused=n_refused,
        unjudged=len(player.conversations) - len(judged),
        judge_fallbacks=sum(c.fallbacks for c in player.conversations),
        meta=player.meta or {})


def ranks(rows: Sequence[PlayerScore], arithmetic: Arithmetic = "paper") -> list[int]:
    """1, 2, 3, ..., a tie sharing its first's rank (1, 1, 3: equal scores, one place; paper);
    or shared ranks within 0.06 of the group's first (reference)."""
    if arithmetic == "paper":
        out: list[int] = []
        for i, row in enumerate(rows):
            tied = i > 0 and row.score is not None and row.score == rows[i - 1].score
            out.append(out[-1] if tied else i + 1)
        return out
    out: list[int] = []
    first: float | None = None
    rank = 0
    for i, row in enumerate(rows):
        shown = round(row.score, 2) if row.score is not None else None
        if first is None or shown is None or abs(shown - first) > REFERENCE_RANK_GAP:
            rank, first = i + 1, shown
        out.append(rank)
    return out


def leaderboard(players: Sequence[PlayerData], seed: int = 0, resamples: int = RESAMPLES,
                arithmetic: Arithmetic = "paper") -> list[PlayerScore]:
    """Rows for every player, best length-normalised score first."""
    lengths = [mean_length(p, arithmetic) for p in players if p.reply_lengths]
    rows = [player_score(p, length_factor(mean_length(p, arithmetic), lengths), seed=seed,
                         resamples=resamples, arithmetic=arithmetic)
            for p in players]
    rows.sort(key=lambda r: (r.score is None, -(r.score or 0.0), r.label))
    for row, rank in zip(rows, ranks(rows, arithmetic), strict=True):
        row.rank = rank
    return rows
