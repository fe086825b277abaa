"""Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, the llama.cpp server.

The key comes from the environment (OPENAI_API_KEY) and is never written anywhere: every message
this backend raises goes through sandbox/redact.py first, which masks the key and any credential
inside the base URL (`http://user:KEY@host/v1`, `?api-key=KEY`). Servers differ in how they take
a JSON schema (the "dialect", a property of the endpoint: sandbox/llm/dialects.py); unless the
models file or --json-dialect sets it, the endpoint is asked once which it takes.

A refusal that says the request is wrong is never retried: about the dialect, it stops the
command (`DialectRefused`, naming the model and the setting); about anything else, that call
falls back, counted (`RequestRejected`), with the server's reason quoted.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from ..redact import redact, redact_url, remember
from .base import (
    Completion,
    ConnectionLimit,
    LLMConfigError,
    LLMRequest,
    LLMUnavailable,
    RequestTooLong,
    TransientLLMError,
    Usage,
)
from .dialects import (
    DIALECTS,
    PROBE_MESSAGES,
    PROBE_SCHEMA,
    PROBE_TAG,
    about_response_format,
    response_format,
    says_invalid,
    schema_in_prompt,
    server_reason,
    too_long,
)

# Dialects found by asking, per endpoint and model, for this process: the episodes of a suite
# and a benchmark's roles each build a backend, and the server is asked once.
_FOUND: dict[tuple[str, str], tuple[str, str]] = {}
_FOUND_LOCK = threading.Lock()
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


class DialectRefused(LLMConfigError):
    """The server refused the request's response_format as invalid: every structured call
    would be refused alike, so the command stops, naming the model and the setting to change."""


class OpenAIBackend(ConnectionLimit):
    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 dialect: str | None = None, timeout_s: float = 120.0,
                 max_concurrency: int = 8, alias: str | None = None,
                 key_env: str | None = None, models_file: str | None = None):
        """`alias`: the models file's name for this model and endpoint (None: the bare
        backend/model form), named in every error and start-up line; `key_env`: the name of
        the variable its key came from (recorded, never the key); `models_file`: the file the
        alias is from."""
        import openai

        self._openai = openai
        self.model = model
        self.model_id = f"openai/{model}"
        self.alias = alias
        self.key_env = key_env or ("OPENAI_API_KEY" if not alias else None)
        self.models_file = models_file
        self.who = f"{alias} ({self.model_id})" if alias else self.model_id
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
        dialect = dialect or os.environ.get("SANDBOX_JSON_DIALECT") or None
        if dialect is not None and dialect not in DIALECTS:
            raise LLMConfigError(f"unknown JSON dialect {dialect!r}: use one of {DIALECTS}")
        # None until the server is asked (`know_endpoint`); `dialect_from` says how it was set.
        self.dialect = dialect
        self.dialect_from = "set" if dialect else None
        self.dialect_refused: dict[str, str] = {}  # dialect -> the server's reason
        # Whether the endpoint is our loopback (sandbox/llm/loopback.py), the one server that
        # is sent the purpose tag and the agent's name: no provider is told who asked.
        self.loopback = False
        self._known = False
        self._know_lock = threading.Lock()
        self._key = key
        self._timeout_s = timeout_s
        self._cool_until = 0.0  # monotonic time before which no call is sent (a 429's wait)
        self._cool_lock = threading.Lock()
        self.max_concurrency = max_concurrency
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout_s,
                                     max_retries=0)  # retries are ours (RetryingLLM)

    def settings(self) -> dict:
        """What the run header records of this endpoint beyond the request (its `backend`)."""
        return {"json_dialect": self.dialect, "json_dialect_from": self.dialect_from}

    def check(self, timeout_s: float = 5.0) -> None:
        """Fail before an episode starts if the endpoint cannot be reached or refuses the key;
        ask it its JSON dialect unless that is set."""
        try:
            self._list_models(timeout_s)
        except self._openai.AuthenticationError as exc:
            raise LLMConfigError(f"{self.who}: {self.shown_url} refused the API key "
                                 f"({exc.status_code})") from exc
        except (self._openai.APIConnectionError, self._openai.APITimeoutError) as exc:
            raise LLMConfigError(f"{self.who}: cannot reach the LLM endpoint "
                                 f"{self.shown_url}") from exc
        except self._openai.APIStatusError:
            pass  # some servers have no /models; the first real call will tell
        with self._know_lock:
            self._known = True
            if self.dialect is None:
                self._find_dialect()

    def _list_models(self, timeout_s: float) -> None:
        """The models list: whether the endpoint is our loopback (its entries say so)."""
        listed = self._client.with_options(timeout=timeout_s).models.list()
        self.loopback = any(getattr(m, "owned_by", "") == "loopback" for m in listed.data)

    def know_endpoint(self) -> None:
        """Before the first call of a backend nobody checked (check=False): whether it is our
        loopback, and its dialect (asked)."""
        if self._known:
            return
        with self._know_lock:
            if self._known:
                return
            try:
                self._list_models(5.0)
            except self._openai.APIError:
                pass  # the calls themselves will say what is wrong
            if self.dialect is None:
                self._find_dialect()
            self._known = True

    def _find_dialect(self) -> None:
        """Ask the server which dialect it takes (sandbox/llm/dialects.py); say it in one line
        on stderr, once per endpoint and model in this process."""
        key = (self.base_url, self.model)
        with _FOUND_LOCK:
            found = _FOUND.get(key)
        if found is None:
            found = self._probe()
            with _FOUND_LOCK:
                _FOUND[key] = found
            print(f"{self.who} at {self.shown_url}: JSON dialect {found[0]}, asked of the "
                  f"server{found[1]}", file=sys.stderr, flush=True)
        self.dialect, self.dialect_from = found[0], "asked"

    def _probe(self) -> tuple[str, str]:
        """(the first dialect the server accepts, what it said of those it refused)."""
        refused = []
        client = self._client.with_options(timeout=min(self._timeout_s, 60.0))
        for dialect in DIALECTS:
            kwargs = dict(model=self.model, max_tokens=1, temperature=0.0,
                          messages=PROBE_MESSAGES if dialect != "text" else
                          schema_in_prompt(PROBE_MESSAGES, PROBE_SCHEMA))
            shape = response_format(dialect, PROBE_SCHEMA, "probe")
            if shape is not None:
                kwargs["response_format"] = shape
            if self.loopback:
                kwargs["extra_headers"] = {"X-Sandbox-Tag": PROBE_TAG}
            for wait in (1.0, 2.0, None):  # a busy server's 429 or 503 is asked again
                try:
                    client.chat.completions.create(**kwargs)
                    why = "; ".join(f"it refused {d}: \"{r}\"" for d, r in refused)
                    return dialect, f" ({why})" if why else ""
                except self._openai.APIStatusError as exc:
                    reason = self._redact(server_reason(exc.body, exc.message))
                    if exc.status_code in (401, 403):
                        raise LLMConfigError(f"{self.who}: {self.shown_url} refused the API "
                                             f"key ({exc.status_code})") from exc
                    if says_invalid(exc.status_code, reason) and dialect != "text":
                        refused.append((dialect, reason))
                        self.dialect_refused[dialect] = reason
                        break
                    if wait is None or exc.status_code not in (429, 500, 502, 503, 504):
                        raise LLMConfigError(
                            f"{self.who}: {self.shown_url} did not answer a one-token test "
                            f"call ({exc.status_code}: \"{reason}\")") from exc
                except (self._openai.APIConnectionError, self._openai.APITimeoutError) as exc:
                    if wait is None:
                        raise LLMConfigError(f"{self.who}: cannot reach the LLM endpoint "
                                             f"{self.shown_url}") from exc
                time.sleep(wait)
        raise AssertionError("the text dialect is never refused as a dialect")  # pragma: no cover

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
        name = request.schema_model.__name__ if request.schema_model else "answer"
        return response_format(self.dialect or "json_schema", schema, name)

    def _setting(self) -> str:
        """Where a user sets this endpoint's dialect."""
        if self.alias:
            return (f"set json_dialect for {self.alias} in "
                    f"{self.models_file or 'the models file'} to one it takes "
                    f"({', '.join(d for d in DIALECTS if d != self.dialect)}), or leave "
                    "json_dialect out to have the server asked")
        return ("set --json-dialect (or $SANDBOX_JSON_DIALECT) to one it takes, or leave it "
                "out to have the server asked")

    def _refused(self, exc, request_format: dict | None) -> Exception:
        """The error a refusal becomes: not retried when it says the request is wrong."""
        status = exc.status_code
        reason = self._redact(server_reason(exc.body, exc.message))
        if request_format is not None and says_invalid(status, reason) \
                and about_response_format(reason):
            return DialectRefused(f"{self.who} at {self.shown_url} refused JSON dialect "
                                  f"{self.dialect} as invalid ({status}: \"{reason}\"): "
                                  f"{self._setting()}")
        if (status < 500 or says_invalid(status, reason)) and too_long(exc.body, reason):
            return RequestTooLong(f"{status}: \"{reason}\"")
        if status < 500 or says_invalid(status, reason):
            return RequestRejected(f"{self.who} at {self.shown_url} rejected the request "
                                   f"({status}): {reason}", status)
        return TransientLLMError("server_error", f"{status}: {reason}")

    def complete(self, request: LLMRequest) -> Completion:
        err = self._openai
        self.know_endpoint()
        messages = [m.model_dump() for m in request.messages]
        response_format = self._response_format(request)
        if request.schema_model is not None and self.dialect == "text":
            messages = schema_in_prompt(messages, request.json_schema())
        kwargs = dict(model=self.model, messages=messages,
                      temperature=request.temperature, top_p=request.top_p,
                      max_tokens=request.max_tokens, seed=request.seed or 0)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.loopback:
            # The purpose tag and the agent let our loopback endpoint answer like the scripted
            # backend; no other server is told who asked.
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
            raise self._refused(exc, response_format) from exc
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
