"""Accounting of every LLM call: who asked, why, what it cost, what went wrong.

Records go to `calls.jsonl` in the run directory, one line per call, flushed at once. They hold
wall-clock facts (latency, cache hits, transport retries), so they live apart from events.jsonl,
which must be identical between two runs with the same seed and answers.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from ..storage import open_append
from .base import Completion, LLMRequest

# Calls recorded by every CallLog of this process: what a suite's progress line divides by the
# time (the episodes running side by side each have their own CallLog).
_recorded = 0
_recorded_lock = threading.Lock()


def calls_recorded() -> int:
    """How many LLM calls this process has recorded so far, all episodes together."""
    return _recorded


class CallRecord(BaseModel):
    seq: int
    # simulated seconds, when the call came from an episode (bounded like an event's)
    t: float | None = Field(default=None, ge=0, le=1e10, allow_inf_nan=False)
    tag: str
    agent: str | None = None
    model: str
    # Who answered: the role the call was made in (a Router's or a benchmark's: evaluated,
    # background, player, judge...) and the models file's alias of the endpoint (None: the
    # bare backend/model form). Both absent from lines written before they existed.
    role: str | None = None
    endpoint: str | None = None
    # Every answer the call was given (an unusable one asked again: `attempts` > 1), all paid.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1
    latency_s: float = 0.0
    cached: bool = False
    retries: int = 0
    faults: list[str] = Field(default_factory=list)
    # The server's reason when it refused the call as longer than the model takes (fault
    # "too_long"); absent otherwise.
    refused: str | None = None
    prefix_tokens: int = 0  # prompt tokens not evaluated again (local backend)
    prefix_restored: bool = False
    prefix_restore_s: float = 0.0
    dictated_tokens: int = 0  # answer tokens written in as the grammar dictated (local backend)
    # The longest chain of calls, each waiting for the one before, that ends with this one (the
    # engine's: sandbox/README.md, "Running ahead"); its largest in a run is the critical path.
    depth: int | None = None


# How long a call took: what differs between two runs of the same calls (the schedule, the
# machine), left out of the digest a checkpoint keeps of calls.jsonl.
TIMING = ("latency_s", "prefix_restore_s")


def steady(line: str) -> bytes:
    """A calls.jsonl line as its digest reads it: without its timing, so two runs of the same
    calls (ahead and lockstep, or on two machines) keep the same digest."""
    try:
        record = json.loads(line)
    except ValueError:
        return line.encode()
    if not isinstance(record, dict):
        return line.encode()
    for key in TIMING:
        record.pop(key, None)
    return json.dumps(record, separators=(",", ":")).encode()


# Written only when set: a call of a single-model run reads as it always has.
_ONLY_WHEN_SET = ("role", "endpoint", "depth", "refused")
# Written only when not the default: a call answered once reads as it always has.
_ONLY_WHEN_NOT = {"attempts": 1}


PROMPTS = "prompts.jsonl"  # beside calls.jsonl: each call's messages and answer, by seq


class PromptRecord(BaseModel):
    """What a call asked and what came back (prompts.jsonl), joined to its CallRecord by seq:
    why an agent said what it said, without re-rendering a template by hand."""

    seq: int
    messages: list[dict[str, str]]
    answer: str


class CallLog:
    """Thread-safe sink of call records; optionally appends them to a JSONL file, and each
    call's prompt and answer to prompts.jsonl beside it."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path else None
        # Appending to a run's calls (its judges' calls after the dialogue's) goes on with the
        # numbering: `seq` stays unique within the file.
        self._fh = open_append(self.path) if self.path else None  # a torn line is cut first
        self._prompts = open_append(self.path.with_name(PROMPTS)) if self.path else None
        self._first_seq = _lines(self.path) if self.path else 0
        self._lock = threading.Lock()
        self.records: list[CallRecord] = []
        self._sha = hashlib.sha256()  # of the lines this log wrote: what a checkpoint follows

    def digest(self) -> str:
        """The sha256 of the lines written by this log, their timing aside (`steady`;
        sandbox/checkpoint.py)."""
        with self._lock:
            return self._sha.hexdigest()

    def carry(self, lines: list[str], prompts: list[str] | None = None) -> None:
        """Begin with these lines of another run's calls (a run restored from a checkpoint:
        the calls before it), counted as this run's, and their prompts' lines."""
        with self._lock:
            self.records.extend(CallRecord.model_validate_json(line) for line in lines)
            self._append(lines)
            if self._prompts and prompts:
                self._prompts.writelines(prompts)
                self._prompts.flush()

    def _append(self, lines: list[str]) -> None:
        """Write lines (under the lock), keeping their digest."""
        for line in lines:
            self._sha.update(steady(line))
        if self._fh:
            self._fh.writelines(lines)
            self._fh.flush()

    def record(self, request: LLMRequest, completion: Completion, t: float | None = None,
               model: str = "", role: str | None = None,
               endpoint: str | None = None, depth: int | None = None) -> CallRecord:
        global _recorded
        with _recorded_lock:
            _recorded += 1
        with self._lock:
            rec = CallRecord(
                seq=self._first_seq + len(self.records), t=t, tag=request.tag, agent=request.agent,
                model=completion.model or model, role=role, endpoint=endpoint,
                prompt_tokens=completion.usage.prompt_tokens,
                completion_tokens=completion.usage.completion_tokens,
                attempts=completion.attempts,
                latency_s=round(completion.latency_s, 4), cached=completion.cached,
                retries=completion.retries, faults=list(completion.faults),
                refused=completion.refused,
                prefix_tokens=completion.prefix_tokens,
                prefix_restored=completion.prefix_restored,
                prefix_restore_s=round(completion.prefix_restore_s, 4),
                dictated_tokens=completion.dictated_tokens, depth=depth)
            self.records.append(rec)
            self._append([rec.model_dump_json(
                exclude={k for k in _ONLY_WHEN_SET if getattr(rec, k) is None}
                | {k for k, v in _ONLY_WHEN_NOT.items() if getattr(rec, k) == v}) + "\n"])
            if self._prompts:
                self._prompts.write(PromptRecord(
                    seq=rec.seq, messages=[m.model_dump() for m in request.messages],
                    answer=completion.text).model_dump_json() + "\n")
                self._prompts.flush()
            return rec

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None
        if self._prompts:
            self._prompts.close()
            self._prompts = None


def _lines(path: Path) -> int:
    if not path.is_file():
        return 0
    with path.open("rb") as fh:
        return sum(1 for _ in fh)


def timed_complete(llm, request: LLMRequest) -> Completion:
    """Call `llm` and stamp the wall time the whole call took (retries and re-asks included)."""
    start = time.perf_counter()
    completion = llm.complete(request)
    return completion.model_copy(update={"latency_s": time.perf_counter() - start})


class AccountingLLM:
    """Wrapper for calls made outside an episode's run loop (judges, scripts)."""

    def __init__(self, inner, calls: CallLog, clock: Callable[[], float] | None = None):
        self.inner = inner
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.calls = calls
        self.clock = clock
        self.endpoint = getattr(inner, "endpoint", None)  # who answers, as its caller names it

    def complete(self, request: LLMRequest) -> Completion:
        completion = timed_complete(self.inner, request)
        self.calls.record(request, completion, t=self.clock() if self.clock else None,
                          model=self.model_id, role=getattr(self.inner, "role", None),
                          endpoint=getattr(self.inner, "endpoint", None))
        return completion
