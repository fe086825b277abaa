"""The LLM layer: one protocol, three backends, wrappers with the same protocol.

    from sandbox.llm import LLMSettings, make_llm, LLMRequest, Message
    llm = make_llm(LLMSettings(model="local/smollm2-135m"))
    llm.complete(LLMRequest(messages=[Message(role="user", content="Hi")], tag="demo"))

The stack, outermost first: StructuredLLM (validate/repair/re-ask/fallback) -> CachedLLM
(record / replay) -> RetryingLLM (backoff on timeouts, 429, 5xx) -> backend.
Accounting of each call is done by whoever dispatches it (the engine, or AccountingLLM).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..redact import redact_url
from .accounting import AccountingLLM, CallLog, CallRecord, calls_recorded, timed_complete
from .base import (
    LLM,
    CacheMiss,
    Completion,
    LLMConfigError,
    LLMError,
    LLMRequest,
    LLMUnavailable,
    Message,
    TransientLLMError,
    Usage,
)
from .cache import CachedLLM, CacheMode, cache_in, caches_in
from .endpoints import Endpoint, ModelsFile, load_models_file, unknown_alias
from .retry import RetryingLLM
from .scripted import ScriptedBackend
from .structured import StructuredLLM, parse_structured

__all__ = [
    "LLM", "AccountingLLM", "CacheMiss", "CachedLLM", "CacheMode", "CallLog", "CallRecord",
    "Completion", "Endpoint", "LLMConfigError", "LLMError", "LLMRequest", "LLMSettings",
    "LLMUnavailable", "Message", "ModelsFile", "RetryingLLM", "SCRIPTS",
    "SCRIPTS_ENTRY_POINT_GROUP", "ScriptedBackend", "StructuredLLM", "TransientLLMError",
    "Usage", "backend_settings", "cache_in", "caches_in", "calls_recorded", "endpoints_of",
    "shown_role",
    "load_models_file", "make_backend", "make_llm", "model_name", "parse_structured",
    "resolve", "scripted_names", "timed_complete", "unknown_alias",
]

BACKENDS = ("local", "openai", "scripted")

# Named scripted backends for `--model scripted/<name>`. A package declares its own in its
# pyproject.toml, name -> a factory returning a ScriptedBackend:
#     [project.entry-points."sandbox.scripted"]
#     town = "agents.scripted:town_backend"
# SCRIPTS holds the factories loaded so far; a test sets a name in it to override (or add) one.
SCRIPTS_ENTRY_POINT_GROUP = "sandbox.scripted"
SCRIPTS: dict[str, Callable[[], ScriptedBackend]] = {}


class LLMSettings(BaseModel):
    """How to reach a model; mirrors the CLI options. Holds no secret."""

    model_config = ConfigDict(extra="forbid")

    model: str = "local/smollm2-135m"
    base_url: str | None = None  # openai backend; default OPENAI_BASE_URL or OpenAI
    json_dialect: str | None = None  # openai backend: json_schema | json_object | text;
    # None: asked of the server (sandbox/llm/dialects.py)
    max_concurrency: int | None = None  # default: what the backend allows
    timeout_s: float = 120.0
    retry_attempts: int = 5
    retry_initial_wait_s: float = 1.0
    structured_attempts: int = 3
    cache_path: Path | None = None
    cache_mode: CacheMode = "record"
    # The models file's alias this model was named by (sandbox/llm/endpoints.py), and the name
    # of the environment variable that holds its key; None for the bare backend/model form.
    endpoint: str | None = None
    api_key_env: str | None = None
    models_file: str | None = None  # the absolute path of the file the alias is from

    @property
    def cache_model(self) -> str:
        """What the cache keys answers under: the model and, for an alias, its endpoint (the
        same model name on two endpoints may be two models). The bare form keys as it always
        has, so recorded caches stay valid."""
        return f"{self.model}@{self.endpoint}" if self.endpoint else self.model


def resolve(ref: str, models: ModelsFile, base: LLMSettings | None = None) -> LLMSettings:
    """The settings that reach `ref`: an alias of `models` (its model, endpoint, key variable,
    dialect, concurrency and timeout), or the bare backend/model form on `base`'s endpoint
    (--base-url). LLMConfigError for a reference that is neither."""
    base = base or LLMSettings()
    entry = models.get(ref)
    if entry is not None:
        return base.model_copy(update={
            "model": entry.model, "base_url": entry.base_url, "json_dialect": entry.json_dialect,
            "max_concurrency": entry.max_concurrency or base.max_concurrency,
            "timeout_s": entry.timeout_s, "endpoint": ref, "api_key_env": entry.key_env,
            "models_file": str(Path(models.path).resolve()) if models.path else None})
    if "/" not in ref:
        raise unknown_alias(ref, models)
    split_model(ref)  # a bad backend fails here, with its own hint
    return base.model_copy(update={"model": ref, "endpoint": None, "api_key_env": None,
                                   "models_file": None})


def split_model(model: str) -> tuple[str, str]:
    backend, sep, name = model.partition("/")
    if not sep or not name or backend not in BACKENDS:
        close = difflib.get_close_matches(backend, BACKENDS, n=1) if sep and name else []
        hint = f"did you mean {close[0]}/{name}? " if close else ""
        raise LLMConfigError(
            f"unknown model {model!r}: {hint}write backend/model with backend one of "
            f"{', '.join(BACKENDS)} (e.g. local/smollm2-135m, openai/gpt-4o-mini; `sandbox "
            "list models` names them)")
    return backend, name


def scripted_names() -> list[str]:
    """Every `scripted/<name>` there is: the entry points' and the in-process ones."""
    return sorted(set(SCRIPTS) | {ep.name for ep in entry_points(group=SCRIPTS_ENTRY_POINT_GROUP)})


def _scripted_backend(name: str) -> ScriptedBackend:
    if name not in SCRIPTS:
        for ep in entry_points(group=SCRIPTS_ENTRY_POINT_GROUP, name=name):
            SCRIPTS[name] = ep.load()
    if name not in SCRIPTS:
        known = scripted_names()
        close = difflib.get_close_matches(name, known, n=2)
        hint = f"did you mean {' or '.join(f'scripted/{c}' for c in close)}? " if close else ""
        raise LLMConfigError(f"unknown scripted backend {name!r}: {hint}known are "
                             f"{', '.join(known)} (a package declares more under the "
                             f"entry point group {SCRIPTS_ENTRY_POINT_GROUP!r})")
    return SCRIPTS[name]()


def make_backend(settings: LLMSettings, check: bool = True):
    backend, name = split_model(settings.model)
    if backend == "scripted":
        llm = _scripted_backend(name)
    elif backend == "openai":
        from .openai_compat import OpenAIBackend

        llm = OpenAIBackend(name, base_url=settings.base_url, dialect=settings.json_dialect,
                            timeout_s=settings.timeout_s, api_key=_key(settings),
                            max_concurrency=settings.max_concurrency or 8,
                            alias=settings.endpoint, key_env=settings.api_key_env,
                            models_file=settings.models_file)
        if check and settings.cache_mode != "replay":
            llm.check()
    else:
        from .local import LocalBackend

        llm = LocalBackend(name)
    if settings.max_concurrency:
        llm.max_concurrency = min(settings.max_concurrency, llm.max_concurrency) \
            if backend == "local" else settings.max_concurrency
    return llm


def _key(settings: LLMSettings) -> str | None:
    """The key of an alias from the variable its models file names (LLMConfigError when that
    variable is unset); None for the bare form, which reads $OPENAI_API_KEY as before."""
    replay = settings.cache_mode == "replay"
    if settings.api_key_env is None:
        # A cache-only run sends nothing: it needs no key, even for OpenAI's own endpoint.
        return None if not replay or os.environ.get("OPENAI_API_KEY") else NOT_SENT
    key = os.environ.get(settings.api_key_env)
    if not key:
        if replay:
            return NOT_SENT
        raise LLMConfigError(f"model {settings.endpoint} ({settings.model}): its key variable "
                             f"${settings.api_key_env} is not set (the models file names it)")
    return key


# The key of a cache-only run's endpoint whose variable is unset: every answer comes from the
# cache, so none is sent (a call the cache lacks stops the run before it would be).
NOT_SENT = "unused-cache-only"


def backend_settings(llm) -> dict:
    """What the backend under `llm`'s wrappers says of the settings that shape its answers
    beyond the request (the local backend: weights, grammar, dictation, prefix store); empty
    for a backend that has none. The run header keeps it: a live rerun under other settings
    answers differently, and the header then says why."""
    while hasattr(llm, "inner"):
        llm = llm.inner
    settings = getattr(llm, "settings", None)
    return dict(settings()) if callable(settings) else {}


def model_name(model: str, alias: str | None) -> str:
    """How a model is named everywhere a person reads it: "alias (model id)" when it was named
    by an alias of the models file, else its model id."""
    return f"{alias} ({model})" if alias else model


def shown_role(settings: LLMSettings) -> dict:
    """A role's model as a run header records what it resolved to (config.roles): its model
    id, the alias it was named by, its name as every board gives it ("alias (model id)") and
    its endpoint's URL, without a credential."""
    return {"model": settings.model, "endpoint": settings.endpoint,
            "name": model_name(settings.model, settings.endpoint),
            "base_url": redact_url(settings.base_url) if settings.base_url else None}


def endpoints_of(llm) -> dict[str, dict]:
    """Who answers an episode's calls (each role's stack of a Router, or the one stack), by
    `model_name`: model, alias, endpoint URL (no credential), the name of the key's variable,
    the JSON dialect and how it was set. Only endpoints reached over HTTP: a run of the
    embedded or scripted model has none."""
    stacks = list(getattr(llm, "llms", {}).values()) or [llm]
    found: dict[str, dict] = {}
    for stack in stacks:
        backend = stack
        while hasattr(backend, "inner"):
            backend = backend.inner
        if not hasattr(backend, "shown_url"):
            continue
        name = model_name(backend.model_id, backend.alias)
        found[name] = {"model": backend.model_id, "alias": backend.alias,
                       "base_url": backend.shown_url, "key_env": backend.key_env,
                       "models_file": backend.models_file,
                       "json_dialect": backend.dialect,
                       "json_dialect_from": backend.dialect_from}
    return found


def make_llm(settings: LLMSettings, backend=None, check: bool = True) -> LLM:
    """The full stack for `settings` (or around a given backend, e.g. a scripted one)."""
    llm = backend if backend is not None else make_backend(settings, check=check)
    llm = RetryingLLM(llm, max_attempts=settings.retry_attempts,
                      initial_wait_s=settings.retry_initial_wait_s)
    if settings.cache_path is not None and settings.cache_mode != "off":
        llm = CachedLLM(llm, settings.cache_path, settings.cache_mode,
                        key_model=settings.cache_model)
    llm = StructuredLLM(llm, max_attempts=settings.structured_attempts)
    llm.endpoint = settings.endpoint  # who answers, as calls.jsonl records it
    return llm
