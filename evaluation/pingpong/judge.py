"""The PingPong judge: one answer scores every player turn of a conversation.

A judge reads the run's header (character card, situation) and its utterances, and answers
with a schema-bound verdict: exactly one entry per player turn, a 1-5 score and its reason for
each criterion, and a refusal flag. It is the kit's `JudgeSpec` "pingpong"; the runner saves
what it says in `judgments/pingpong__<model>.json` (sandbox.judgments), each turn's verdict
keyed by the player utterance it is about. When no answer is usable after repair and re-asks,
the declared fallback (a neutral 3 everywhere) is saved with status "fallback" and left out of
every mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, Field, create_model

from evaluation.kit import Dialogue, JudgeSpec, Verdict
from sandbox.judgments import TurnVerdict
from tasks.kit import Sampling
from tasks.pingpong import Character, Situation

JUDGE = "pingpong"
JUDGE_TAG = "pingpong.judge"
CRITERIA = ("in_character", "entertaining", "fluency")
REFUSAL = "is_refusal"
SYSTEM_TEMPLATE = "pingpong_judge_system.j2"
USER_TEMPLATE = "pingpong_judge_user.j2"

Likert = Literal[1, 2, 3, 4, 5]
# Explanations carry no maxLength: llama.cpp turns one into a grammar so large that sampling
# slows several times over. Their length is bounded by the per-turn token budget instead.
Explanation = str


class TurnScore(BaseModel):
    """A judge's scores for one player turn. Reasons come before verdicts: each explanation
    before its score, and the refusal flag last, once the turn has been looked at (a tiny
    judge asked for it first answers `true` almost always)."""

    turn: int
    in_character_explanation: Explanation
    in_character_score: Likert
    entertaining_explanation: Explanation
    entertaining_score: Likert
    fluency_explanation: Explanation
    fluency_score: Likert
    is_refusal: bool


@cache
def verdict_schema(turns: int) -> type[BaseModel]:
    """The answer schema for a conversation of `turns` player turns: exactly that many scores."""
    return create_model(f"PingPongVerdict{turns}",
                        turns=(Annotated[list[TurnScore],
                                         Field(min_length=turns, max_length=turns)], ...))


def fallback_verdict(turns: int) -> BaseModel:
    """Returned by the LLM layer when no answer is usable; never enters a mean."""
    neutral = TurnScore(turn=0, is_refusal=False, in_character_explanation="no usable answer",
                        in_character_score=3, entertaining_explanation="no usable answer",
                        entertaining_score=3, fluency_explanation="no usable answer",
                        fluency_score=3)
    return verdict_schema(turns)(turns=[neutral.model_copy(update={"turn": i + 1})
                                        for i in range(turns)])


@dataclass
class Exchange:
    """One player turn, what the interrogator said just before it, and the player line's
    utterance turn in the log."""

    user: str
    player: str
    turn: int = -1


@dataclass
class Conversation:
    """A PingPong dialogue as its judge and board see it."""

    dialogue: Dialogue
    character: Character
    situation: Situation
    player: str
    exchanges: list[Exchange]

    @property
    def finished(self) -> bool:
        return self.dialogue.finished

    @property
    def replies(self) -> list[str]:
        return [e.player for e in self.exchanges]


def conversation_of(dialogue: Dialogue) -> Conversation:
    """The player's turns, each with the interrogator's lines before it."""
    config = dialogue.config
    player = config["player_agent"]
    exchanges: list[Exchange] = []
    pending: list[str] = []
    for said in dialogue.utterances:
        if said.agent == player:
            exchanges.append(Exchange(user="\n".join(pending), player=said.text, turn=said.turn))
            pending = []
        else:
            pending.append(said.text)
    return Conversation(dialogue=dialogue, character=Character(**config["character"]),
                        situation=Situation(**config["situation"]), player=player,
                        exchanges=exchanges)


def read_conversation(run_dir) -> Conversation:
    """The PingPong conversation of a run directory, from its header and events only."""
    from evaluation.kit import read_dialogue

    return conversation_of(read_dialogue(run_dir, JUDGE, "pair"))


def _turns(dialogue: Dialogue) -> int:
    n = len(conversation_of(dialogue).exchanges)
    if n == 0:
        raise ValueError(f"{dialogue.run_dir}: the player never spoke; nothing to judge")
    return n


def _context(dialogue: Dialogue) -> dict:
    conversation = conversation_of(dialogue)
    return {"criteria": CRITERIA, "character": conversation.character,
            "exchanges": conversation.exchanges}


def _verdict(answer: BaseModel, dialogue: Dialogue) -> Verdict:
    """Each scored turn, keyed by the utterance it is about (the i-th player line)."""
    lines = conversation_of(dialogue).exchanges
    turns = []
    for exchange, scored in zip(lines, answer.turns, strict=False):
        turns.append(TurnVerdict(
            turn=exchange.turn,
            scores={c: float(getattr(scored, f"{c}_score")) for c in CRITERIA},
            flags={REFUSAL: scored.is_refusal},
            notes={c: getattr(scored, f"{c}_explanation") for c in CRITERIA}))
    return Verdict(turns=turns)


def _fits(judgment, dialogue: Dialogue) -> str | None:
    """A judgment must score exactly the player's turns, each on every criterion (one cut to
    fewer turns, or left from a longer conversation, is stale)."""
    said = [e.turn for e in conversation_of(dialogue).exchanges]
    judged = [t.turn for t in judgment.turns]
    if len(judged) != len(said):
        return f"judges {len(judged)} of the {len(said)} player turns"
    if judged != said:
        return "judges other turns than the player's"
    for verdict in judgment.turns:
        missing = [c for c in CRITERIA if c not in verdict.scores]
        if missing:
            return f"turn {verdict.turn} has no {missing[0]} score"
    return None


PINGPONG_JUDGE = JudgeSpec(
    name=JUDGE, tag=JUDGE_TAG, templates=(SYSTEM_TEMPLATE, USER_TEMPLATE), context=_context,
    schema=lambda dialogue: verdict_schema(_turns(dialogue)),
    fallback=lambda dialogue: fallback_verdict(_turns(dialogue)), verdict=_verdict,
    # One answer scores every turn: the budget is per judged turn (plus the JSON around it).
    max_tokens=lambda dialogue, sampling: 60 + _turns(dialogue) * sampling.max_tokens,
    fits=_fits, scale=(1, 5), whole=True)


def refused(judgment) -> bool:
    """The judge saw a refusal in at least one turn."""
    return any(t.flags.get(REFUSAL, False) for t in judgment.turns)


def criterion_means(judgment) -> dict[str, float]:
    """Mean over the judged turns, per criterion. Boards pass only judgments that fit their
    conversation (every turn scored); one without a turn is a ValueError, not a mean."""
    if not judgment.turns:
        raise ValueError(f"a {judgment.judge} judgment by {judgment.model} scores no turn")
    return {c: sum(t.scores[c] for t in judgment.turns) / len(judgment.turns) for c in CRITERIA}


__all__ = ["CRITERIA", "JUDGE", "JUDGE_TAG", "PINGPONG_JUDGE", "Conversation", "Exchange",
           "Sampling", "TurnScore", "conversation_of", "criterion_means", "fallback_verdict",
           "read_conversation", "refused", "verdict_schema"]
