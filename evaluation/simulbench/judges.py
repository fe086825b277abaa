"""SimulBench's judges, on the kit: the 1-10 rating of one answer, the challenging-turn judge of
a collected dialogue, and the pairwise verdict asked in both orders.

Parse rules (the original's, ../shared/specs/simulbench.md sections 3.2, 3.4, 3.5):
- a rating: the first `[[x]]` in the answer, else the first `[x]`; x an int or a decimal. A
  rating outside 1..10 is kept as said but marked out of range: counted and left out of means.
- a challenging turn: the same two patterns; N in 0..4 (0: no turn was too hard). Turns are
  shown numbered from 1; a collection run with `--turn-labels original` shows them from 0 and
  asks for 1..8 as the original did, and an N above 4 is then unparseable (a range check).
- a pairwise verdict: `[[A]]`, else `[[B]]`, else `[[C]]` (a tie), by substring.
No match is unparseable: the structured layer asks again (a new seed each time, at most
LLMSettings.structured_attempts asks), then keeps the declared fallback, saved with status
"fallback" and left out of every mean. Nothing here loops without bound.

Judge formats: "text" is the paper's (reasons, then the verdict in double brackets, parsed as
above); "json" asks for a JSON object bound to a schema ({"rating": 1..10, "explanation"},
{"turn", "explanation"}, {"verdict": A|B|C, "explanation"}), which a local model's grammar
cannot leave -- for small judges that never write [[rating]]. Either way the judgment has the
same name and scores, so a board reads both.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, field_validator

from evaluation.kit import Dialogue, JudgeSpec, Verdict, bracketed_number

SCORE = "score"
CHALLENGE = "challenge"
SCORE_TAG = "simulbench.judge"
CHALLENGE_TAG = "simulbench.challenge"
PAIRWISE_TAG = "simulbench.pairwise"
SIMULATOR = "Simulator"
TURNS = 4



def _number(text: str) -> float | int:
    return bracketed_number(text, "first")  # SimulBench's judges: the first mark counts


class Rating(BaseModel):
    """A judge's 1-10 rating as said; `in_range` False when it is outside 1..10."""

    score: float
    in_range: bool = True


def parse_rating(text: str) -> Rating:
    """The first [[x]] (else [x]); ValueError when there is none."""
    value = _number(text)
    return Rating(score=float(value), in_range=1 <= value <= 10)


class ChallengeTurn(BaseModel):
    """The first turn (1..4) where the request was too hard for the simulator; 0: none."""

    turn: int


def parse_challenge(text: str) -> ChallengeTurn:
    value = _number(text)
    if value != int(value) or not 0 <= value <= TURNS:
        raise ValueError(f"turn {value} is not in 0..{TURNS}")
    return ChallengeTurn(turn=int(value))


Winner = Literal["A", "B", "C"]


class PairVerdict(BaseModel):
    winner: Winner  # C: a tie


def parse_pairwise(text: str) -> PairVerdict:
    for mark in ("A", "B", "C"):
        if f"[[{mark}]]" in text:
            return PairVerdict(winner=mark)
    raise ValueError("no [[A]], [[B]] or [[C]] in the answer")


# The json format's answers put the verdict first and the reasons after it: a small judge that
# writes reasons first rambles to its token budget and is cut off before the verdict (the
# embedded model lost 3 of 6 ratings that way at 120 tokens); verdict first, a cut answer is
# repaired and keeps its verdict. The text format (the paper's) keeps reasons first.
# No maxLength on explanations: llama.cpp grammars for bounded strings sample slowly.
class RatingAnswer(BaseModel):
    """The 1-10 judge's answer in the json format."""

    rating: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    explanation: str


class ChallengeAnswer(BaseModel):
    """The challenge judge's answer in the json format: turn 1..4, or 0 for none."""

    turn: Literal[0, 1, 2, 3, 4]
    explanation: str


class OriginalChallengeAnswer(BaseModel):
    """The same with the original's labels (asked in 1..8, 0 for none): above 4 is re-asked, as
    in the text format."""

    turn: Literal[0, 1, 2, 3, 4, 5, 6, 7, 8]
    explanation: str

    @field_validator("turn")
    @classmethod
    def _within_dialogue(cls, turn: int) -> int:
        if turn > TURNS:
            raise ValueError(f"turn {turn} is not in 0..{TURNS}")
        return turn


class PairAnswer(BaseModel):
    """The pairwise judge's answer in the json format (C: a tie)."""

    verdict: Winner
    explanation: str


def winner_of(answer: PairVerdict | PairAnswer) -> str:
    """A, B or C from either format's answer (or the fallback)."""
    return answer.winner if isinstance(answer, PairVerdict) else answer.verdict


def swap_rule(first: str, second: str) -> Literal["A", "B", "tie"]:
    """Both orders combined (first: the first model as candidate A; second: swapped). The first
    model wins only when it wins in both orders, the second likewise; all else is a tie."""
    if first == "A" and second == "B":
        return "A"
    if first == "B" and second == "A":
        return "B"
    return "tie"


# -- what the judges are shown -----------------------------------------------------------------
def judge_dialogue_json(history: list[dict]) -> str:
    """The history as the original judge sees it: [{"user": text} or {"AI": text}, ...],
    indented by 2, non-ASCII escaped."""
    return json.dumps([{"user" if m["role"] == "user" else "AI": m["content"]} for m in history],
                      indent=2)


def answer_of(dialogue: Dialogue) -> str:
    said = dialogue.utterances
    if not said or said[-1].agent != SIMULATOR:
        raise ValueError(f"{dialogue.run_dir}: the model under test never answered")
    return said[-1].text


def _score_context(dialogue: Dialogue) -> dict:
    script = dialogue.config["script"]
    return {"simulation": script["act"],
            "dialogue": judge_dialogue_json(script["dialogue_history"]),
            "response": json.dumps({"AI": answer_of(dialogue)}, indent=2)}


def _score_verdict(answer: Rating | RatingAnswer, dialogue: Dialogue) -> Verdict:
    if isinstance(answer, RatingAnswer):
        said = {"score": float(answer.rating), "in_range": True,
                "explanation": answer.explanation}
        return Verdict(scores={SCORE: float(answer.rating)}, answer=said)
    if not answer.in_range:
        return Verdict(flags={"out_of_range": True}, answer=answer.model_dump())
    return Verdict(scores={SCORE: answer.score}, answer=answer.model_dump())


def _score_fits(judgment, dialogue: Dialogue) -> str | None:
    """An ok judgment says a rating or flags it out of range; one with neither is stale."""
    if judgment.usable and SCORE not in judgment.scores \
            and not judgment.flags.get("out_of_range"):
        return "an ok judgment without a rating"
    return None


def score_judge(judge_format: str = "text") -> JudgeSpec:
    """The 1-10 judge in a judge format (text: [[rating]] parsed; json: schema-bound)."""
    json_format = judge_format == "json"
    return JudgeSpec(
        name=SCORE, tag=SCORE_TAG,
        templates=("simulbench_judge_system.j2", "simulbench_score_user.j2"),
        context=_score_context,
        schema=(lambda dialogue: RatingAnswer) if json_format else None,
        parser=None if json_format else parse_rating,
        fallback=lambda dialogue: Rating(score=0, in_range=False), verdict=_score_verdict,
        fits=_score_fits)


SCORE_JUDGE = score_judge("text")


def collected_turns(dialogue: Dialogue) -> list[tuple[str, str]]:
    """(user, simulator) of each turn of a collected dialogue."""
    said = [u.text for u in dialogue.utterances]
    return [(said[i], said[i + 1] if i + 1 < len(said) else "") for i in range(0, len(said), 2)]


def _challenge_context(dialogue: Dialogue) -> dict:
    turns = [json.dumps([{"role": "user", "content": u}, {"role": "assistant", "content": a}],
                        indent=2) for u, a in collected_turns(dialogue)]
    return {"turns": turns, "count": len(turns),
            "original_labels": dialogue.config.get("turn_labels") == "original"}


def _challenge_verdict(answer: BaseModel, dialogue: Dialogue) -> Verdict:
    return Verdict(scores={"challenging_turn": float(answer.turn)}, answer=answer.model_dump())


def _challenge_schema(dialogue: Dialogue) -> type[BaseModel]:
    original = dialogue.config.get("turn_labels") == "original"
    return OriginalChallengeAnswer if original else ChallengeAnswer


def _challenge_fits(judgment, dialogue: Dialogue) -> str | None:
    """An ok judgment names a turn of its dialogue (0: none); another turn cannot be cut."""
    if not judgment.usable:
        return None
    turn = judgment.scores.get("challenging_turn")
    if turn is None:
        return "an ok judgment without a challenging turn"
    turns = len(collected_turns(dialogue))
    if not 0 <= turn <= turns:
        return f"names turn {turn:g} of a dialogue of {turns} turns"
    return None


def challenge_judge(judge_format: str = "text") -> JudgeSpec:
    """The challenging-turn judge in a judge format."""
    json_format = judge_format == "json"
    return JudgeSpec(
        name=CHALLENGE, tag=CHALLENGE_TAG,
        templates=("simulbench_judge_system.j2", "simulbench_challenge_user.j2"),
        context=_challenge_context,
        schema=_challenge_schema if json_format else None,
        parser=None if json_format else parse_challenge,
        fallback=lambda dialogue: ChallengeTurn(turn=0), verdict=_challenge_verdict,
        max_tokens=lambda dialogue, sampling: min(sampling.max_tokens, 200),
        fits=_challenge_fits)


CHALLENGE_JUDGE = challenge_judge("text")
