"""Judges: an LLM asked about a finished dialogue, with its prompt in template files, an answer
schema or a free-text parse rule, bounded re-asks and a declared fallback.

A benchmark declares each of its judges as a `JudgeSpec`; `judge_dialogue` asks one judge model
and returns a `Judgment` (sandbox.judgments), which the runner saves beside the run. Re-asks
and repairs happen in the structured LLM layer (at most `LLMSettings.structured_attempts`
asks); when none is usable, the layer returns the spec's fallback and the judgment is saved
with status "fallback": counted, shown, and left out of every mean. Every fault goes in the
judgment and, through the accounting wrapper the runner gives, in the run's calls.jsonl.

A judgment records a digest of what of the dialogue its judge read (`JudgeSpec.evidence`);
`judgment_problem` tells a judgment that no longer fits its dialogue (the digest differs, or the
spec's own `fits` check fails, e.g. a per-turn verdict for fewer turns than were said): such a
judgment is stale, refused by every board and asked again by the runner.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sandbox.hashing import stable_seed
from sandbox.judgments import Judgment, TurnVerdict
from sandbox.llm import LLMRequest, Message, model_name, timed_complete
from sandbox.prompts import render
from tasks.kit import Sampling, content_digest

from .dialogue import Dialogue


@dataclass
class Verdict:
    """What a judge's answer says, in the kit's terms."""

    scores: dict[str, float] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)
    turns: list[TurnVerdict] = field(default_factory=list)
    answer: Any = None  # kept in the judgment for benchmark-specific reading


@dataclass
class JudgeSpec:
    """One judge of a benchmark.

    name       the judge's name (file name and board key); a benchmark may have several
    tag        the purpose its calls carry in calls.jsonl (e.g. "pingpong.judge")
    templates  (system, user) Jinja2 files in `package`'s prompts/ (overridable by --prompts)
    context    the template variables for one dialogue
    schema     the answer's pydantic model for one dialogue (structured, grammar-bound), or
    parser     a free-text parse rule (text -> value; raises ValueError when unusable)
    fallback   the declared answer when none is usable (never enters a mean)
    verdict    the parsed answer -> scores, flags and per-turn verdicts
    max_tokens the answer budget for one dialogue (default: the judge sampling's max_tokens)
    applies    whether the judge has anything to judge in a dialogue (default: every one); a
               benchmark whose dialogues come in several shapes gives each shape its judges
    evidence   what of the dialogue the judge reads, JSON-able (default: every utterance's
               turn, speaker and text); its digest is saved with the judgment
    fits       (judgment, dialogue) -> why a saved judgment cannot be about this dialogue, or
               None (default: no check beyond the digest); e.g. the wrong number of turns
    scale      (lowest, highest) every score of an ok judgment must lie in, its turns' too;
               a board counts one outside it, or not a number, "out of range" and leaves it
               out (`off_scale`); None: no check
    whole      every score on that scale is a whole number, as the reference judge's schema
               takes them (a saved 3.5 on a 1-5 scale is "out of range", not averaged)
    """

    name: str
    tag: str
    templates: tuple[str, str]
    context: Callable[[Dialogue], dict[str, Any]]
    fallback: Callable[[Dialogue], Any]
    verdict: Callable[[Any, Dialogue], Verdict]
    schema: Callable[[Dialogue], type[BaseModel]] | None = None
    parser: Callable[[str], Any] | None = None
    max_tokens: Callable[[Dialogue, Sampling], int] | None = None
    package: str | Path = "evaluation"  # whose prompts/ folder; or a folder (a Path)
    applies: Callable[[Dialogue], bool] | None = None
    evidence: Callable[[Dialogue], Any] | None = None
    fits: Callable[[Judgment, Dialogue], str | None] | None = None
    scale: tuple[float, float] | None = None
    whole: bool = False

    def __post_init__(self) -> None:
        if (self.schema is None) == (self.parser is None):
            raise ValueError(f"judge {self.name}: give a schema or a parser, not both")

    def messages(self, dialogue: Dialogue) -> list[Message]:
        # Every judge's templates may ask for its answer in the form it is read: "json" when
        # schema-bound, "text" when parsed (one place, not each benchmark's context).
        context = {**self.context(dialogue),
                   "answer_format": "json" if self.schema is not None else "text"}
        system, user = self.templates
        return [Message(role="system", content=render(self.package, system, **context)),
                Message(role="user", content=render(self.package, user, **context))]


def utterances_of(dialogue: Dialogue) -> list[list[Any]]:
    """Every utterance as [turn, speaker, text]: what most judges read."""
    return [[u.turn, u.agent, u.text] for u in dialogue.utterances]


def dialogue_digest(spec: JudgeSpec, dialogue: Dialogue) -> str:
    """A digest of what `spec`'s judge reads of `dialogue`."""
    return content_digest((spec.evidence or utterances_of)(dialogue))


def judgment_problem(spec: JudgeSpec, judgment: Judgment, dialogue: Dialogue) -> str | None:
    """Why a saved judgment does not fit the dialogue beside it (it is stale), or None. A
    judgment saved before digests were recorded is checked by the spec's `fits` alone."""
    if judgment.dialogue_digest and judgment.dialogue_digest != dialogue_digest(spec, dialogue):
        return "judged another dialogue than the one in the run now (its events changed since)"
    return spec.fits(judgment, dialogue) if spec.fits is not None else None


def off_scale(spec: JudgeSpec, judgment: Judgment) -> str | None:
    """Why a judgment's scores cannot enter a mean of `spec`'s scale (one outside it, or NaN
    or infinite: a hand-edited file, another tool's), naming the first such score; None when
    all fit or the spec declares no scale. The schema or parse rule keeps a judge's own
    answers in range; a saved file is not bound by them."""
    if spec.scale is None:
        return None
    lo, hi = spec.scale
    scored = [("", judgment.scores)] + [(f"turn {t.turn} ", t.scores) for t in judgment.turns]
    for where, scores in scored:
        for name, value in scores.items():
            if not math.isfinite(value):
                return f"{where}{name} {value}, not a number"
            if not lo <= value <= hi:
                return f"{where}{name} {value:g}, outside {lo:g}-{hi:g}"
            if spec.whole and value != int(value):
                return f"{where}{name} {value:g}, not a whole number (the {lo:g}-{hi:g} " \
                       "ratings are integers, as the reference judge's schema takes them)"
    return None


def judge_seed(item: str, model: str) -> int:
    """A fixed seed per (item, judge model), so a cached verdict is found again."""
    return stable_seed(item, model)


def judge_name(llm) -> str:
    """Who a judge is: its model and, named by an alias, its endpoint ("alias (model id)"):
    two aliases of one model id are two judges, each with its own judgments."""
    return model_name(llm.model_id, getattr(llm, "endpoint", None))


def judge_dialogue(spec: JudgeSpec, dialogue: Dialogue, llm, sampling: Sampling) -> Judgment:
    """Ask `llm` for `spec`'s verdict on `dialogue`. Never raises on a bad answer."""
    budget = spec.max_tokens(dialogue, sampling) if spec.max_tokens else sampling.max_tokens
    request = LLMRequest(
        messages=spec.messages(dialogue), tag=spec.tag, agent=f"judge:{judge_name(llm)}",
        schema=spec.schema(dialogue) if spec.schema else None, parser=spec.parser,
        fallback=spec.fallback(dialogue), temperature=sampling.temperature,
        top_p=sampling.top_p, max_tokens=budget, seed=judge_seed(dialogue.item, llm.model_id))
    completion = timed_complete(llm, request)
    verdict = spec.verdict(completion.parsed, dialogue)
    return Judgment(
        judge=spec.name, model=judge_name(llm), item=dialogue.item,
        status="fallback" if "fallback" in completion.faults else "ok",
        scores=verdict.scores, flags=verdict.flags, turns=verdict.turns, answer=verdict.answer,
        faults=completion.faults, prompt_tokens=completion.usage.prompt_tokens,
        completion_tokens=completion.usage.completion_tokens,
        latency_s=round(completion.latency_s, 3), cached=completion.cached,
        sampling=sampling.model_dump(), dialogue_digest=dialogue_digest(spec, dialogue))
