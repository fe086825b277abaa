"""RefuteBench's evaluator: one 1-5 rating per judged pair, written as `[[n]]` after an
explanation (the paper's Fig. 4, MT-Bench's convention).

Every judged pair is its own kit JudgeSpec (one call, one rating), named after what it rates:

    revision_k   R(a_k, r_k): does answer k follow refutation k?  shown (q, a_{k-1}, r_k, a_k)
    kept_k       R(a_k, r_1), k = 2, 3: is the first refutation still honoured after later
                 ones?  shown (q, a_0, r_1, a_k)  (PREV = a_0: [ours], spec section 6.2)
    fidelity_k   R(q, a_k), k = 0..3: does answer k still do the original task? (the task-
                 fidelity judge, [ours]: shown only the query and the answer)
    persistent_direct  R(â_0, r_1): the answer right after the standing refutation (the
                 paper's C=0); shown (q, a_0, r_1, â_0); asked of C=0 dialogues only (the
                 same answer opens every persistent dialogue of a seed)
    persistent_final   R(a_final, r_1): the answer to the re-asked query after C unrelated
                 requests; shown (q, a_0, r_1, a_final) (at C=0, 1.0's NC-0 re-ask)

Transient dialogues get revision_1..3, kept_2..3 and fidelity_0..3; persistent ones
persistent_direct (C=0) and persistent_final. The rating is the last
`[[n]]` in the answer (else the last `[n]`), 1 <= n <= 5; an answer without one is asked again
twice (the structured LLM layer), then saved as a fallback: no score, counted, out of every mean.

Judge formats (`--judge-format`): "text" is the paper's (an explanation, then `[[n]]`, parsed as
above); "json" asks for a JSON object bound to a schema ({"explanation", "rating" 1..5, an enum}),
which a local model's grammar cannot leave -- for small judges that rarely write `[[n]]`. Either
way a judgment has the same name and `rating` score, so the board reads both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from evaluation.kit import (
    JUDGE_FORMATS,
    Dialogue,
    JudgeSpec,
    Verdict,
    bracketed_number,
    read_dialogue,
)

BENCHMARK = "refutebench"
JUDGE_TAG = "refutebench.judge"
FIDELITY_TAG = "refutebench.fidelity"
RATING = "rating"
K = 3


class Rating(BaseModel):
    """A judge's answer: the rating (None in the declared fallback) and its explanation."""

    rating: float | None
    explanation: str = ""


class RatingAnswer(BaseModel):
    """The judge's answer in the json format: the explanation first (the paper asks for it
    before the rating), then the rating. No maxLength on the explanation: the judge's token
    budget bounds it (llama.cpp samples bounded strings slowly)."""

    explanation: str
    rating: Literal[1, 2, 3, 4, 5]


NO_RATING = Rating(rating=None, explanation="no usable rating")


def parse_rating(text: str) -> Rating:
    """The last `[[n]]` of the answer (else the last `[n]`); ValueError when there is none or
    it is outside 1-5 (the layer then asks again)."""
    value = float(bracketed_number(text, "last"))  # the judge restates the scale first
    if not 1 <= value <= 5:
        raise ValueError(f"rating {value:g} is outside 1-5")
    return Rating(rating=value, explanation=text.strip())


@dataclass
class RefuteDialogue:
    """A RefuteBench dialogue as its judges see it, found by the header's plan."""

    dialogue: Dialogue
    family: str
    setting: str
    c: int
    seed: str
    query: str
    answers: list[str]  # a_0, then the answer after each refutation (a_1..a_K)
    refutations: list[str]  # r_1..r_K
    final: str | None  # persistent: the answer to the re-asked query

    @property
    def complete(self) -> bool:
        want = K if self.setting == "transient" else 1
        return len(self.refutations) == want and len(self.answers) == want + 1 and \
            (self.setting == "transient" or self.final is not None)


def refute_dialogue(dialogue: Dialogue) -> RefuteDialogue:
    config = dialogue.config
    steps = config["plan"]
    answers: list[str] = []
    refutations: list[str] = []
    final = None
    said = {u.turn: u.text for u in dialogue.utterances}
    for turn, step in enumerate(steps):
        if turn not in said:
            break
        text = said[turn]
        if step["kind"] == "refutation":
            refutations.append(text)
        elif step["kind"] == "response":
            if turn == 1 or "after" in step:
                answers.append(text)
            elif step.get("final"):
                final = text
    return RefuteDialogue(dialogue=dialogue, family=config["family"], setting=config["setting"],
                          c=int(config.get("c", 0)), seed=config["seed"], query=config["query"],
                          answers=answers, refutations=refutations, final=final)


def read_refute_dialogue(run_dir) -> RefuteDialogue:
    return refute_dialogue(read_dialogue(run_dir, BENCHMARK))


def _verdict(answer: Rating | RatingAnswer, dialogue: Dialogue) -> Verdict:
    if isinstance(answer, RatingAnswer):  # the json format: kept as the text format keeps it
        answer = Rating(rating=float(answer.rating), explanation=answer.explanation)
    scores = {} if answer.rating is None else {RATING: answer.rating}
    return Verdict(scores=scores, answer=answer.model_dump())


def _answer_rule(judge_format: str) -> dict:
    """The JudgeSpec fields that differ between the judge formats (and the check both share:
    an ok judgment has a rating)."""
    rule = {"schema": lambda dialogue: RatingAnswer} if judge_format == "json" \
        else {"parser": parse_rating}
    return {**rule, "fits": _fits}


def _fits(judgment, dialogue: Dialogue) -> str | None:
    if judgment.usable and RATING not in judgment.scores:
        return "an ok judgment without a rating"
    return None


def _compliance(name: str, setting: str, pair, only_c0: bool = False,
                judge_format: str = "text") -> JudgeSpec:
    """A judge of R(new, r): `pair(d)` gives (previous answer, refutation, new answer)."""
    def context(dialogue: Dialogue) -> dict:
        d = refute_dialogue(dialogue)
        previous, refutation, new = pair(d)
        return {"query": d.query, "previous": previous, "refutation": refutation, "answer": new}

    def applies(dialogue: Dialogue) -> bool:
        d = refute_dialogue(dialogue)
        return d.setting == setting and d.complete and (d.c == 0 or not only_c0)

    return JudgeSpec(name=name, tag=JUDGE_TAG, context=context, **_answer_rule(judge_format),
                     templates=("refutebench_evaluator_system.j2",
                                "refutebench_evaluator_user.j2"),
                     fallback=lambda d: NO_RATING, verdict=_verdict, applies=applies,
                     scale=(1, 5), whole=True)


def _fidelity(k: int, judge_format: str = "text") -> JudgeSpec:
    def context(dialogue: Dialogue) -> dict:
        d = refute_dialogue(dialogue)
        return {"family": d.family, "query": d.query, "answer": d.answers[k]}

    def applies(dialogue: Dialogue) -> bool:
        d = refute_dialogue(dialogue)
        return d.setting == "transient" and d.complete

    return JudgeSpec(name=f"fidelity_{k}", tag=FIDELITY_TAG, context=context,
                     **_answer_rule(judge_format),
                     templates=("refutebench_fidelity_system.j2", "refutebench_fidelity_user.j2"),
                     fallback=lambda d: NO_RATING, verdict=_verdict, applies=applies,
                     scale=(1, 5), whole=True)


def _revision(k: int):
    return lambda d: (d.answers[k - 1], d.refutations[k - 1], d.answers[k])


def _kept(k: int):
    return lambda d: (d.answers[0], d.refutations[0], d.answers[k])


def judges(judge_format: str = "text") -> list[JudgeSpec]:
    """Every judge of RefuteBench, asked in a judge format (text or json)."""
    if judge_format not in JUDGE_FORMATS:
        raise ValueError(f"unknown judge format {judge_format!r}")
    return [
        *(_compliance(f"revision_{k}", "transient", _revision(k), judge_format=judge_format)
          for k in range(1, K + 1)),
        *(_compliance(f"kept_{k}", "transient", _kept(k), judge_format=judge_format)
          for k in range(2, K + 1)),
        *(_fidelity(k, judge_format) for k in range(K + 1)),
        _compliance("persistent_direct", "persistent", _revision(1), only_c0=True,
                    judge_format=judge_format),
        _compliance("persistent_final", "persistent",
                    lambda d: (d.answers[0], d.refutations[0], d.final),
                    judge_format=judge_format),
    ]


JUDGES = judges("text")
JUDGE_NAMES = [j.name for j in JUDGES]
