"""PingPong judges: read a finished conversation from its run directory, score every player turn.

A judge never talks to live agents: it reads the run's header (character card, situation) and
its utterance events, asks its model once for per-turn scores, and saves the judgment beside the
run in `judgments/<judge>.json`. Re-judging needs no player or interrogator call.

The answer is schema-bound (exactly one entry per player turn, scores 1-5). When the model gives
no usable answer after repair and re-asks, the structured LLM layer returns a fallback; the
judgment is then saved with status "fallback" and left out of every mean (see README).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, create_model

from sandbox.events import Utterance
from sandbox.llm import LLMRequest, Message, timed_complete
from sandbox.log import JUDGMENTS, load_run, write_json_atomic
from sandbox.prompts import render
from tasks.pingpong import JUDGE_SAMPLING, Character, Sampling, Situation

JUDGE_TAG = "pingpong.judge"
CRITERIA = ("in_character", "entertaining", "fluency")
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

    def score(self, criterion: str) -> int:
        return getattr(self, f"{criterion}_score")


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


class Judgment(BaseModel):
    """One judge's verdict on one conversation, as saved in `judgments/<judge>.json`."""

    judge: str  # model id
    status: Literal["ok", "fallback"]
    turns: list[TurnScore]
    faults: list[str] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    sampling: Sampling = JUDGE_SAMPLING
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))

    @property
    def usable(self) -> bool:
        return self.status == "ok"

    @property
    def refused(self) -> bool:
        """The judge saw a refusal in at least one turn."""
        return any(t.is_refusal for t in self.turns)

    def criterion_means(self) -> dict[str, float]:
        """Mean over turns, per criterion."""
        return {c: sum(t.score(c) for t in self.turns) / len(self.turns) for c in CRITERIA}


@dataclass
class Exchange:
    """One player turn and what the interrogator said just before it."""

    user: str
    player: str


@dataclass
class Conversation:
    """A finished PingPong conversation read back from its run directory."""

    run_dir: Path
    character: Character
    situation: Situation
    player: str
    exchanges: list[Exchange]
    finished: bool

    @property
    def replies(self) -> list[str]:
        return [e.player for e in self.exchanges]


class NotAPingPongRun(Exception):
    """The directory is a run, but not a PingPong conversation."""


def read_conversation(run_dir: Path | str) -> Conversation:
    """The conversation of a PingPong run directory, from its header and events only."""
    run = load_run(run_dir)
    config = run.header.config
    if config.get("benchmark") != "pingpong":
        raise NotAPingPongRun(f"{run_dir} is a {run.header.scenario!r} run, not a PingPong one")
    player = config["player_agent"]
    said = sorted((e for e in run.events if isinstance(e, Utterance)
                   and e.conversation == config.get("conversation", "c0")),
                  key=lambda e: e.turn)
    exchanges: list[Exchange] = []
    pending: list[str] = []
    for event in said:
        if event.agent == player:
            exchanges.append(Exchange(user="\n".join(pending), player=event.text))
            pending = []
        else:
            pending.append(event.text)
    finished = run.result is not None and run.result.status == "completed"
    return Conversation(run_dir=Path(run_dir), character=Character(**config["character"]),
                        situation=Situation(**config["situation"]), player=player,
                        exchanges=exchanges, finished=finished)


def judge_messages(conversation: Conversation) -> list[Message]:
    """The judge's prompt: the character card and the conversation, turn by turn."""
    system = render("evaluation", SYSTEM_TEMPLATE, criteria=CRITERIA)
    user = render("evaluation", USER_TEMPLATE, character=conversation.character,
                  exchanges=conversation.exchanges)
    return [Message(role="system", content=system), Message(role="user", content=user)]


def judge_seed(conversation: Conversation, judge: str) -> int:
    """A fixed seed per (conversation, judge), so a cached verdict is found again."""
    key = f"{conversation.run_dir.name}|{judge}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % (2**31 - 1)


def judge_conversation(conversation: Conversation, llm,
                       sampling: Sampling = JUDGE_SAMPLING) -> Judgment:
    """Ask `llm` for per-turn scores. Never raises on a bad answer: it becomes a fallback."""
    n = len(conversation.exchanges)
    if n == 0:
        raise ValueError(f"{conversation.run_dir}: the player never spoke; nothing to judge")
    request = LLMRequest(
        messages=judge_messages(conversation), tag=JUDGE_TAG, agent=f"judge:{llm.model_id}",
        schema=verdict_schema(n), fallback=fallback_verdict(n),
        temperature=sampling.temperature, top_p=sampling.top_p,
        max_tokens=60 + n * sampling.max_tokens, seed=judge_seed(conversation, llm.model_id))
    completion = timed_complete(llm, request)
    status = "fallback" if "fallback" in completion.faults else "ok"
    return Judgment(judge=llm.model_id, status=status, turns=list(completion.parsed.turns),
                    faults=completion.faults, prompt_tokens=completion.usage.prompt_tokens,
                    completion_tokens=completion.usage.completion_tokens,
                    latency_s=round(completion.latency_s, 3), cached=completion.cached,
                    sampling=sampling)


def judgment_path(run_dir: Path | str, judge: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", judge)
    return Path(run_dir) / JUDGMENTS / f"{slug}.json"


def save_judgment(run_dir: Path | str, judgment: Judgment) -> Path:
    path = judgment_path(run_dir, judgment.judge)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, judgment.model_dump_json(indent=2))
    return path


def load_judgments(run_dir: Path | str) -> list[Judgment]:
    """Every judgment saved beside a run, ordered by judge. Unreadable files are skipped."""
    folder = Path(run_dir) / JUDGMENTS
    out: list[Judgment] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append(Judgment.model_validate(json.loads(path.read_text(encoding="utf-8"))))
        except (ValueError, OSError):
            continue  # a file cut by a kill is simply judged again
    return out
