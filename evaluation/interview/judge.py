"""The interview judge: one rating of 1-5 per answer (schema-bound: the rating, then a reason).

The kit's `JudgeSpec`, asked about one saved answer (`Answered`: the answer file and its
folder, where its judgments are saved, `sandbox.judgments`). The judge reads the persona, the
moment, the memories the agent recalled, the question and the answer
(evaluation/prompts/interview_judge_*.j2); what it read is digested into the judgment, so a
judgment of an answer asked again since is stale. No usable answer from the judge: the declared
fallback is saved with status "fallback", counted on the board and never averaged. An answer the
agent's model never gave (status fallback) is not judged: the board counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from evaluation.kit import JudgeSpec, Verdict
from sandbox.interviews import InterviewAnswer
from tasks.kit import Sampling

NAME = "interview"
TAG = "interview.judge"
JUDGE_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=160)


class Rating(BaseModel):
    # The rating first: a reason that runs on to max_tokens is cut, and the truncated answer
    # is repaired with its rating kept (measured on the embedded 135M judge, reason first: 9 of
    # 15 judgments fell back, the reason never closed). No maxLength on the reason: llama.cpp
    # grammars for bounded strings are slow to sample.
    rating: Literal[1, 2, 3, 4, 5]  # an enum: a grammar enforces it (integer bounds it does not)
    reason: str


@dataclass
class Answered:
    """One saved answer as the judge and the board see it."""

    dir: Path  # the answer's folder (answer.json, judgments/)
    answer: InterviewAnswer

    @property
    def item(self) -> str:
        return self.answer.item


def _memories(answered: Answered) -> list[str]:
    return [f"({m.clock:%a %H:%M}) {m.description}" for m in answered.answer.memories]


def _context(answered: Answered) -> dict:
    a = answered.answer
    return {"persona": a.persona, "moment": f"{a.clock:%A %Y-%m-%d %H:%M}",
            "memories": _memories(answered), "category": a.category, "question": a.question,
            "answer": a.answer}


def _evidence(answered: Answered) -> list:
    a = answered.answer
    return [a.persona, a.question, a.answer, _memories(answered)]


def _verdict(rating: Rating, answered: Answered) -> Verdict:
    return Verdict(scores={"rating": float(rating.rating)}, answer=rating.model_dump())


INTERVIEW_JUDGE = JudgeSpec(
    name=NAME, tag=TAG,
    templates=("interview_judge_system.j2", "interview_judge_user.j2"),
    context=_context, schema=lambda answered: Rating,
    fallback=lambda answered: Rating(reason="no usable answer from the judge", rating=1),
    verdict=_verdict, applies=lambda answered: answered.answer.status == "ok",
    evidence=_evidence)
