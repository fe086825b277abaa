"""Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, the llama.cpp server.

The key comes from the environment (OPENAI_API_KEY) and is never written anywhere: every message
this backend raises goes through sandbox/redact.py first, which masks the key and any credential
inside the base URL (`http://user:KEY@host/v1`, `?api-key=KEY`). Servers differ
in how they take a JSON schema (the "dialect", a property of the endpoint):
- "json_schema": response_format={"type": "json_schema", "json_schema": {...}} (OpenAI, vLLM)
- "json_object": response_format={"type": "json_object", "schema": {...}} (llama.cpp server,
  which rejects the first form)
"""

from __future__ import annotations

import os
import threading
import time
from typing import Literal

from ..redact import redact, redact_url, remember
from .base import (
    Completion,
    ConnectionLimit,
    LLMConfigError,
    LLMRequest,
    LLMUnavailable,
    TransientLLMError,
    Usage,
)

Dialect = Literal["json_schema", "json_object"]
DIALECTS = ("json_schema", "json_object")
OPENAI_URL = "https://api.openai.com/v1"
MAX_COOL_DOWN_S = 60.0  # the longest a Retry-After holds an endpoint back


def retry_after(response) -> float | None:
    """Seconds from a response's Retry-After header (the seconds form; an HTTP date or a
    missing or unreadable value gives None)."""
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds < float("inf") else None


class RequestRejected(LLMUnavailable):
    """The server refused this one request (a 4xx other than 429): not worth retrying. Its
    fault names the status, e.g. "rejected_401" (a dead key), "rejected_404" (no such
    model)."""

    def __init__(self, message: str, status: int):
        super().__init__(message, faults=[f"rejected_{status}"])


class OpenAIBackend(ConnectionLimit):
    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 dialect: Dialect | None = None, timeout_s: float = 120.0,
                 max_concurrency: int = 8):
        import openai

        self._openai = openai
        self.model = model
        self.model_id = f"openai/{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        self.shown_url = redact_url(self.base_url)  # the one every message names
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url == OPENAI_URL:
                raise LLMConfigError(f"model openai/{model} needs OPENAI_API_KEY in the "
                                     "environment (or --base-url for a local server)")
            key = "no-key"  # local servers (llama.cpp, vLLM, Ollama) usually need none
        else:
            remember(key)  # masked wherever it might be echoed
        dialect = dialect or os.environ.get("SANDBOX_JSON_DIALECT") or "json_schema"
        if dialect not in DIALECTS:
            raise LLMConfigError(f"unknown JSON dialect {dialect!r}: use one of {DIALECTS}")
        self.dialect = dialect
        self._key = key
        self._cool_until = 0.0  # monotonic time before which no call is sent (a 429's wait)
        self._cool_lock = threading.Lock()
        self.max_concurrency = max_concurrency
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout_s,
                                     max_retries=0)  # retries are ours (RetryingLLM)

    def check(self, timeout_s: float = 5.0) -> None:
        """Fail before an episode starts if the endpoint cannot be reached or refuses the key."""
        try:
            self._client.with_options(timeout=timeout_s).models.list()
        except self._openai.AuthenticationError as exc:
            raise LLMConfigError(f"{self.shown_url} refused the API key ({exc.status_code})") \
                from exc
        except (self._openai.APIConnectionError, self._openai.APITimeoutError) as exc:
            raise LLMConfigError(f"cannot reach the LLM endpoint {self.shown_url}") from exc
        except self._openai.APIStatusError:
            pass  # some servers have no /models; the first real call will tell

    def _cool_down(self, seconds: float | None) -> None:
        """A 429's Retry-After holds back every call to this endpoint (not one call alone: the
        others would only earn more 429s), and no other endpoint's."""
        if seconds:
            with self._cool_lock:
                self._cool_until = max(self._cool_until,
                                       time.monotonic() + min(seconds, MAX_COOL_DOWN_S))

    def _wait_cool_down(self) -> None:
        left = self._cool_until - time.monotonic()
        if left > 0:
            time.sleep(left)

    def _redact(self, text: str) -> str:
        """An error message without the API key or a URL's credentials: some servers and
        proxies echo the request's headers and URL in their error bodies, and these messages
        reach logs and result.json."""
        text = text.replace(self._key, "[API key]") if self._key != "no-key" else text
        return redact(text)

    def _response_format(self, request: LLMRequest) -> dict | None:
        schema = request.json_schema()
        if schema is None:
            return None
        if self.dialect == "json_object":
            return {"type": "json_object", "schema": schema}
        name = request.schema_model.__name__ if request.schema_model else "answer"
        return {"type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False}}

    def complete(self, request: LLMRequest) -> Completion:
        err = self._openai
        kwargs = dict(model=self.model, messages=[m.model_dump() for m in request.messages],
                      temperature=request.temperature, top_p=request.top_p,
                      max_tokens=request.max_tokens, seed=request.seed or 0)
        response_format = self._response_format(request)
        if response_format is not None:
            kwargs["response_format"] = response_format
        # The purpose tag lets a test endpoint (sandbox.llm.loopback) answer like the scripted
        # backend; real servers ignore the header.
        kwargs["extra_headers"] = {"X-Sandbox-Tag": request.tag,
                                   "X-Sandbox-Agent": request.agent or ""}
        start = time.perf_counter()
        try:
            with self.slots:
                self._wait_cool_down()
                resp = self._client.chat.completions.create(**kwargs)
        except err.APITimeoutError as exc:
            raise TransientLLMError("timeout", self._redact(str(exc))) from exc
        except err.RateLimitError as exc:
            wait = retry_after(exc.response)
            self._cool_down(wait)
            raise TransientLLMError("rate_limit", self._redact(str(exc)),
                                    retry_after_s=wait) from exc
        except err.APIConnectionError as exc:
            raise TransientLLMError("connection", self._redact(str(exc))) from exc
        except err.APIStatusError as exc:
            if exc.status_code >= 500:
                raise TransientLLMError("server_error", f"{exc.status_code}") from exc
            raise RequestRejected(f"{self.shown_url} rejected the request "
                                  f"({exc.status_code}): {self._redact(exc.message)}",
                                  exc.status_code) from exc
        except err.APIError as exc:  # a 200 whose body the SDK cannot read
            raise TransientLLMError("malformed_response", self._redact(str(exc))) from exc
        choices = getattr(resp, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            # Some servers answer 200 with no choice (an overloaded vLLM, a proxy's error page
            # passed through): worth asking again, and never an IndexError in an episode.
            raise TransientLLMError("malformed_response", "the answer held no message")
        choice = choices[0]
        usage = getattr(resp, "usage", None)
        return Completion(
            text=choice.message.content or "",
            usage=Usage(prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                        completion_tokens=getattr(usage, "completion_tokens", 0) or 0),
            latency_s=time.perf_counter() - start, finish_reason=choice.finish_reason,
            model=self.model_id)
