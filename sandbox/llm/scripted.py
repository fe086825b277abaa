"""The scripted backend: a deterministic test double. Never a default for a user's run.

Answers are chosen by the call's purpose tag: a responder registered for the tag gets the request
and returns the answer text. Without one, a schema-bound call gets a valid instance of the schema
built from the request's hash (so different inputs give different but repeatable answers), and a
plain call gets a short text naming its tag. Faults and latency can be injected for tests and
benchmarks.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..hashing import stable_int
from .base import Completion, ConnectionLimit, LLMRequest, TransientLLMError, Usage

Responder = Callable[[LLMRequest], str]

# Fault names a test can inject, in call order.
TRANSPORT_FAULTS = {"timeout", "rate_limit", "server_error", "connection"}
ANSWER_FAULTS = {"malformed", "truncated", "off_schema"}


def _digest(request: LLMRequest) -> int:
    blob = json.dumps([m.model_dump() for m in request.messages] + [request.tag, request.seed])
    return stable_int(blob, 12)


def fill_schema(schema: dict[str, Any], seed: int, name: str = "value") -> Any:
    """A valid value for a JSON schema, chosen deterministically from `seed`."""
    defs = schema.get("$defs", {})

    def build(node: dict[str, Any], key: str, salt: int) -> Any:
        if "$ref" in node:
            return build(defs[node["$ref"].split("/")[-1]], key, salt)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][salt % len(node["enum"])]
        for union in ("anyOf", "oneOf"):
            if union in node:
                options = [o for o in node[union] if o.get("type") != "null"] or node[union]
                return build(options[0], key, salt)
        kind = node.get("type", "string")
        if kind == "object":
            props = node.get("properties", {})
            return {k: build(v, k, salt + i) for i, (k, v) in enumerate(props.items())}
        if kind == "array":
            count = max(node.get("minItems", 1), 1)
            return [build(node.get("items", {}), key, salt + i) for i in range(count)]
        if kind == "boolean":
            return False
        if kind in ("integer", "number"):
            lo = node.get("minimum", node.get("exclusiveMinimum", 0))
            hi = node.get("maximum", node.get("exclusiveMaximum", lo + 9))
            return int(lo + salt % (int(hi) - int(lo) + 1)) if hi >= lo else lo
        text = f"{key} {salt % 1000}"
        text = text.ljust(node.get("minLength", 0), ".")
        return text[: node["maxLength"]] if "maxLength" in node else text

    return build(schema, name, seed)


class ScriptedBackend(ConnectionLimit):
    def __init__(self, responders: dict[str, Responder] | None = None, *,
                 model_id: str = "scripted/default", latency_s: float = 0.0,
                 max_concurrency: int = 64, faults: list[str] | None = None):
        self.model_id = model_id
        self.max_concurrency = max_concurrency
        self.responders = dict(responders or {})
        self.latency_s = latency_s
        self._faults = list(faults or [])
        self._lock = threading.Lock()
        self.calls = 0

    def _next_fault(self) -> str | None:
        with self._lock:
            self.calls += 1
            return self._faults.pop(0) if self._faults else None

    def answer(self, request: LLMRequest, schema: dict[str, Any] | None = None) -> str:
        """The well-formed answer, before any injected fault. `schema` stands in for the
        request's own when it came as JSON (the loopback endpoint has no pydantic class)."""
        responder = self.responders.get(request.tag)
        if responder is not None:
            return responder(request)
        schema = schema if schema is not None else request.json_schema()
        if schema is not None:
            return json.dumps(fill_schema(schema, _digest(request)))
        return f"Scripted answer {_digest(request) % 1000} to {request.tag}."

    def complete(self, request: LLMRequest) -> Completion:
        with self.slots:  # like an endpoint: no more than max_concurrency calls at once
            return self._complete(request)

    def _complete(self, request: LLMRequest) -> Completion:
        if self.latency_s:
            time.sleep(self.latency_s)
        fault = self._next_fault()
        if fault in TRANSPORT_FAULTS:
            raise TransientLLMError(fault, "injected by the scripted backend")
        text = self.answer(request)
        finish = "stop"
        if fault == "malformed":
            text = "Sure! Here is my answer: {not json at all"
        elif fault == "truncated":
            text, finish = text[: max(1, len(text) // 2)], "length"
        elif fault == "off_schema":
            text = json.dumps({"unexpected": True})
        elif fault not in (None, "ok"):
            raise ValueError(f"unknown injected fault {fault!r}")
        prompt_tokens = sum(len(m.content.split()) for m in request.messages)
        return Completion(text=text, usage=Usage(prompt_tokens=prompt_tokens,
                                                 completion_tokens=len(text.split())),
                          finish_reason=finish, model=self.model_id)


def default_backend() -> ScriptedBackend:
    """`scripted/default`: no responders, so every answer is the generic one above."""
    return ScriptedBackend(model_id="scripted/default")
