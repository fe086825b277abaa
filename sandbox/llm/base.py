"""The one way to call a language model: request, completion, protocol, errors."""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

# pydantic builds a model's JSON schema afresh on every call (about a millisecond for a judge's
# verdict), and every schema-bound call asks for it twice (its cache key, its backend): kept
# per class as JSON text, each caller given a fresh copy to change as it likes. Weak keys: the
# classes made per call (reflection's) go when they are no longer used.
_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()
_SCHEMAS_LOCK = threading.Lock()


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """`model.model_json_schema()`, built once per class."""
    with _SCHEMAS_LOCK:
        text = _SCHEMAS.get(model)
    if text is None:
        text = json.dumps(model.model_json_schema())
        with _SCHEMAS_LOCK:
            _SCHEMAS[model] = text
    return json.loads(text)


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class LLMRequest(BaseModel):
    """Everything that determines an answer, plus who asked and why (tag, agent).

    `schema` is a pydantic model class: when given, the backend constrains the answer to its
    JSON schema and the structured layer returns a validated instance in `Completion.parsed`.
    `parser` does the same for free text. `fallback` is used, and counted, when no valid answer
    can be had.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)

    messages: list[Message]
    tag: str = "untagged"  # the purpose of the call, e.g. "chat.turn", "plan.daily"
    agent: str | None = None
    schema_model: type[BaseModel] | None = Field(default=None, alias="schema")
    # For free-text answers with a shape of their own (a chat line with an end marker): turns
    # the text into an object or raises ValueError. Not part of the cache key.
    parser: Callable[[str], BaseModel] | None = None
    fallback: BaseModel | None = None
    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 256
    # A free-text answer ends with its nth full sentence (sandbox/llm/sentences.py): every
    # answer is cut there before it is parsed, and a backend that generates token by token
    # stops there (local: the tokens after it would be thrown away). None: no such limit.
    max_sentences: int | None = Field(default=None, ge=1)
    seed: int | None = None  # None: the engine draws one from the episode's generator
    # What the call is about in a few named facts ("other": who was met), for a person who
    # answers it instead of a model (a form's question, sandbox/llm/human.py). Not part of the
    # cache key: the messages already say it.
    about: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sentences_are_free_text(self):
        if self.max_sentences is not None and self.schema_model is not None:
            raise ValueError("max_sentences limits free text; a schema-bound answer is JSON")
        return self

    def json_schema(self) -> dict[str, Any] | None:
        return schema_of(self.schema_model) if self.schema_model else None

    def cache_key(self, model_id: str) -> str:
        """Hash of everything that changes the output (not tag or agent, which do not)."""
        payload = {
            "model": model_id,
            "messages": [m.model_dump() for m in self.messages],
            "schema": self.json_schema(),
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        if self.max_sentences is not None:  # (absent otherwise: recorded keys stay valid)
            payload["max_sentences"] = self.max_sentences
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Completion(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    parsed: BaseModel | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    retries: int = 0  # transport retries (timeouts, 429, 5xx)
    # Answers the model gave for this call: more than one when an unusable answer (malformed,
    # cut at max_tokens, off the schema) was asked again; `usage` is all of theirs together,
    # as the endpoint counts and bills them.
    attempts: int = 1
    faults: list[str] = Field(default_factory=list)  # e.g. "malformed_json", "fallback"
    # The server's reason when it refused the call as longer than the model takes (fault
    # "too_long"): the call fell back to its default, and asking again cannot help.
    refused: str | None = None
    finish_reason: str | None = None
    model: str = ""
    # The local backend's prompt-prefix reuse: prompt tokens not evaluated again (their KV
    # state was already in the context or restored from the prefix store), whether a stored
    # prefix was restored for this call, and what restoring it cost.
    prefix_tokens: int = 0
    prefix_restored: bool = False
    prefix_restore_s: float = 0.0
    # Answer tokens the local backend wrote in as the grammar dictated them, not sampled
    # (sandbox/llm/llama_dictation.py); they are part of completion_tokens.
    dictated_tokens: int = 0


@runtime_checkable
class LLM(Protocol):
    """A language model. Backends and wrappers all have this shape."""

    model_id: str
    max_concurrency: int  # how many calls may be in flight at once

    def complete(self, request: LLMRequest) -> Completion: ...


class ConnectionLimit:
    """A backend's `max_concurrency`, held by the backend itself (`with self.slots:` around a
    call): the episodes of a suite run side by side (--jobs) share one backend, so together
    they never have more calls in flight than the endpoint's limit."""

    @property
    def max_concurrency(self) -> int:
        return self._max_concurrency

    @max_concurrency.setter
    def max_concurrency(self, value: int) -> None:
        self._max_concurrency = value
        self.slots = threading.BoundedSemaphore(max(1, value))


class LLMError(Exception):
    """Base class of LLM-layer errors."""


class TransientLLMError(LLMError):
    """A fault worth retrying: timeout, rate limit (429), server error (5xx), lost connection."""

    def __init__(self, kind: Literal["timeout", "rate_limit", "server_error", "connection",
                                     "malformed_response"],
                 message: str = "", retry_after_s: float | None = None):
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
        self.retry_after_s = retry_after_s  # the server's Retry-After, when it sent one


class LLMUnavailable(LLMError):
    """Retries are exhausted; the caller falls back (and counts it) or stops.

    Carries the transport retries made and the faults seen before giving up, so the call's
    record counts them like those of a call that got through.
    """

    def __init__(self, message: str = "", *, retries: int = 0,
                 faults: list[str] | None = None):
        super().__init__(message)
        self.retries = retries
        self.faults = list(faults or [])


class RequestTooLong(LLMError):
    """The server refused the request as longer than the model takes (its context window):
    the same request is refused every time, so it is neither retried nor re-asked; the call
    falls back to its default, counted (fault "too_long") with the server's reason, and the
    cache keeps the refusal, so a rerun does not ask again. Not the endpoint's failure: the
    run goes on and is not `unavailable`.

    Carries the transport retries made and the faults seen before it, like LLMUnavailable.
    """

    def __init__(self, reason: str, *, retries: int = 0, faults: list[str] | None = None,
                 cached: bool = False):
        super().__init__(reason)
        self.reason = reason  # the server's words (redacted)
        self.retries = retries
        self.faults = list(faults or [])
        self.cached = cached  # the refusal came from the cache: nothing was sent


class CacheMiss(LLMError):
    """A call was not in the cache while running cache-only. Never papered over by a fallback."""


class LLMConfigError(LLMError):
    """A model string, endpoint or key that cannot work; raised before an episode starts."""
