"""Interview answers: what an agent of a run said when asked a question about its life, as of a
moment of the run, one file per answer. The agents layer writes them (agents/interview.py),
judges and boards read them (evaluation/interview), and nothing here calls a model.

    OUT/answers/<run>/<agent>/<question>/answer.json
    OUT/answers/<run>/<agent>/<question>/judgments/<judge>__<model>.json   (sandbox.judgments)

An answer keeps what it was made from: the moment (`at`, sim seconds since the run's start,
and its clock time), the architecture, the persona, the model, the question, and every memory
its retrieval returned, with the time each was made and its retrieval score. `state` is a
digest of all that went into it (persona, architecture, the memory stream as of the moment,
question, model): a saved answer whose state differs from the one asked now is not the same
answer, and is asked again. `status` is "ok", "fallback" (the model never gave a usable answer:
counted, never judged or averaged) or "unavailable" (its call reached no model: asked again).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .files import FileFormatError, json_line, read_text
from .storage import open_append, write_atomic

ANSWERS = "answers"
ANSWER_FILE = "answer.json"
FORMAT = "interview-answer"
VERSION = 1


class RecalledMemory(BaseModel):
    """A memory an answer was given from (its retrieval returned it)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    description: str
    importance: int
    created: float  # sim seconds since the run's start
    clock: datetime  # when it was made, in the run's simulated time
    score: float | None = None  # the retriever's total score, when it gives one


class InterviewAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["interview-answer"] = FORMAT
    version: Literal[1] = VERSION
    run: str  # the run directory as it was given (for people; never read again)
    run_id: str  # its folder under answers/
    agent: str
    architecture: str
    persona: str  # the agent's identity paragraph, as its prompt gave it
    at: float  # the moment: sim seconds since the run's start
    clock: datetime  # the moment in the run's simulated time
    model: str
    question_id: str
    category: str = ""
    question: str
    answer: str
    memories: list[RecalledMemory] = Field(default_factory=list)
    status: Literal["ok", "fallback", "unavailable"] = "ok"
    faults: list[str] = Field(default_factory=list)
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    state: str  # digest of what went into the answer (module docstring)
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))

    @property
    def item(self) -> str:
        """The answer's id in its directory: run/agent/question."""
        return f"{slug(self.run_id)}/{slug(self.agent)}/{slug(self.question_id)}"


def slug(text: str) -> str:
    """A name as a folder name (letters, digits, '.', '-'; the rest '_')."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_") or "_"


def digest(data: Any) -> str:
    """A fingerprint of JSON-able content, whatever order its keys were written in."""
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def answer_dir(out: Path | str, run_id: str, agent: str, question_id: str) -> Path:
    return Path(out) / ANSWERS / slug(run_id) / slug(agent) / slug(question_id)


def save_answer(out: Path | str, answer: InterviewAnswer) -> Path:
    """Write atomically under `out` (a kill never leaves half an answer); the file's path."""
    path = answer_dir(out, answer.run_id, answer.agent, answer.question_id) / ANSWER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, answer.model_dump_json(indent=2))
    return path


def load_answer(path: Path | str) -> InterviewAnswer | None:
    """The answer in `path` (an answer.json or its folder), or None when there is none or it
    does not read as one."""
    path = Path(path)
    if path.is_dir():
        path = path / ANSWER_FILE
    if not path.exists():
        return None
    try:
        return InterviewAnswer.model_validate(json_line(read_text(path)))  # guarded: no FIFO
    except (OSError, ValueError, FileFormatError):
        return None


def answer_files(out: Path | str) -> list[Path]:
    """Every answer.json under `out`, sorted."""
    return sorted((Path(out) / ANSWERS).glob(f"*/*/*/{ANSWER_FILE}"))


def memo_path(cache: Path | str) -> Path:
    """Where the answers given with an answer cache are kept, keyed by state: beside it
    (`interviews.jsonl` -> `interviews.answers.jsonl`)."""
    cache = Path(cache)
    return cache.with_name(f"{cache.stem}.answers.jsonl")


class AnswerMemo:
    """Answers by `state`, one JSON line each (append-only): a question asked again of the
    same state is answered from here without rebuilding the agent, so without loading the
    embedder its retrieval would need. A line that does not read is passed over."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.answers: dict[str, InterviewAnswer] = {}
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    found = InterviewAnswer.model_validate_json(line)
                except ValueError:
                    continue
                self.answers[found.state] = found

    def get(self, state: str) -> InterviewAnswer | None:
        return self.answers.get(state)

    def add(self, answer: InterviewAnswer) -> None:
        """Keep `answer` (one that reached no model is not kept: it is asked again)."""
        if answer.status == "unavailable":
            return
        self.answers[answer.state] = answer
        with open_append(self.path) as fh:
            fh.write(answer.model_dump_json() + "\n")
