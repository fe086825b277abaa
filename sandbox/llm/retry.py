"""Retry with exponential backoff on transient faults (timeouts, 429, 5xx, lost connections)."""

from __future__ import annotations

import logging

from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from .base import Completion, LLMRequest, LLMUnavailable, RequestTooLong, TransientLLMError

log = logging.getLogger(__name__)


class RetryingLLM:
    def __init__(self, inner, max_attempts: int = 5, initial_wait_s: float = 1.0,
                 max_wait_s: float = 30.0):
        self.inner = inner
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.max_attempts = max_attempts
        self.initial_wait_s = initial_wait_s
        self.max_wait_s = max_wait_s

    def _wait(self, state) -> float:
        """Exponential backoff with jitter; at least the server's Retry-After when it sent one
        (retrying sooner only earns another 429), never more than max_wait_s."""
        backoff = wait_exponential_jitter(multiplier=self.initial_wait_s, max=self.max_wait_s,
                                          jitter=self.initial_wait_s)(state)
        asked = getattr(state.outcome.exception(), "retry_after_s", None) or 0.0
        return min(max(backoff, asked), self.max_wait_s)

    def complete(self, request: LLMRequest) -> Completion:
        faults: list[str] = []

        def note(state) -> None:
            exc = state.outcome.exception()
            kind = getattr(exc, "kind", "error")
            faults.append(kind)
            log.warning("LLM call %s (%s) failed with %s; retrying", request.tag,
                        request.agent or "-", exc)

        retrying = Retrying(
            retry=retry_if_exception_type(TransientLLMError),
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            before_sleep=note,
            reraise=False,
        )
        try:
            completion = retrying(self.inner.complete, request)
        except RetryError as exc:
            # `note` runs before each sleep, so the last attempt's fault is not in `faults` yet.
            last = exc.last_attempt.exception()
            raise LLMUnavailable(
                f"{request.tag}: gave up after {self.max_attempts} attempts ({last})",
                retries=len(faults), faults=faults + [getattr(last, "kind", "error")]) from last
        except (LLMUnavailable, RequestTooLong) as exc:
            # Not worth retrying (a rejected request), maybe after transient faults: keep those.
            exc.retries += len(faults)
            exc.faults = faults + exc.faults
            raise
        except TransientLLMError as exc:  # pragma: no cover - reraise=False wraps these
            raise LLMUnavailable(str(exc), retries=len(faults),
                                 faults=faults + [exc.kind]) from exc
        return completion.model_copy(update={"retries": completion.retries + len(faults),
                                             "faults": faults + completion.faults})
