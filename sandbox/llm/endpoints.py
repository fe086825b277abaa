"""The models file: an alias names a model *and* the endpoint that serves it.

    # ~/.config/social-sandbox/models.yaml (or --models FILE, or $SANDBOX_MODELS)
    local-vllm:
      model: openai/Qwen2.5-7B-Instruct
      base_url: http://localhost:8000/v1
      max_concurrency: 16
    gpt:
      model: openai/gpt-4o-mini
      key_env: OPENAI_API_KEY        # the NAME of the variable that holds the key, never a key
      max_concurrency: 8
      timeout_s: 60
      price_in: 0.15                 # dollars per million prompt tokens (optional)
      price_out: 0.60
      latency_s: 1.5                 # a typical call's seconds (optional): a dry run's wall time

Every option that takes a model takes an alias of this file or the bare `backend/model` form
(which goes to --base-url, as before). `resolve` turns either into the LLMSettings that reach
it. An alias is part of what an answer is cached under (`LLMSettings.cache_model`): the same
model name on two endpoints (a local vLLM and a hosted API) may be two different models, so an
answer of one is never replayed for the other. A key written into the file is refused: keys
come from the environment.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from ..files import FileFormatError, read_text, read_with_lines
from ..redact import redact_url
from .base import LLMConfigError

MODELS_ENV = "SANDBOX_MODELS"
CONFIG_DIR_ENV = "XDG_CONFIG_HOME"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]*")
# Fields a person might write a key into, by mistake or by habit of other tools.
_KEY_FIELDS = ("api_key", "key", "apikey", "token", "secret", "password", "authorization")


def default_models_file() -> Path:
    """Where the models file is looked for when neither --models nor $SANDBOX_MODELS says."""
    base = os.environ.get(CONFIG_DIR_ENV) or str(Path.home() / ".config")
    return Path(base) / "social-sandbox" / "models.yaml"


# Dollars per million tokens: far above any model's (the dearest lists $600 out).
PRICE_MAX = 100_000.0


class Endpoint(BaseModel):
    """One alias of the models file: a model and how to reach it."""

    model_config = ConfigDict(extra="forbid")

    model: str  # backend/model, as --model takes it
    base_url: str | None = None
    key_env: str | None = None  # the name of the environment variable holding the key
    json_dialect: Literal["json_schema", "json_object", "text"] | None = None  # None: asked
    # Strict: YAML's `true` is no number (it once read as 1 call at a time, or $1 a million),
    # and `.inf` is no price (a dry run printed `$inf`).
    max_concurrency: StrictInt | None = Field(default=None, ge=1, le=1024)
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    # dollars per million prompt / answer tokens
    price_in: float | None = Field(default=None, ge=0, le=PRICE_MAX, allow_inf_nan=False)
    price_out: float | None = Field(default=None, ge=0, le=PRICE_MAX, allow_inf_nan=False)
    # A typical call's seconds, for a dry run's wall time before the suite has measured it.
    latency_s: float | None = Field(default=None, gt=0, le=3600, allow_inf_nan=False)

    @property
    def prices(self) -> tuple[float, float] | None:
        """(in, out) dollars per million tokens, when both are given; else None."""
        if self.price_in is None or self.price_out is None:
            return None
        return self.price_in, self.price_out

    @field_validator("timeout_s", "price_in", "price_out", "latency_s", mode="before")
    @classmethod
    def _no_boolean(cls, value):
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a number")
        return value

    @field_validator("model")
    @classmethod
    def _backend_model(cls, value: str) -> str:
        from . import split_model

        try:
            split_model(value)
        except LLMConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            # Most likely the key itself, pasted here: never echo it.
            raise ValueError("must be the NAME of an environment variable (letters, digits, _), "
                             "not a key: keys come from the environment")
        return value

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        if value is not None and redact_url(value) != value:
            raise ValueError("holds a credential (user information or a key in the query): "
                             "keys come from the environment, named by key_env")
        return value

    def shown(self) -> dict:
        """What `sandbox list models` and a run header say of it: no credential."""
        return {"model": self.model,
                "base_url": redact_url(self.base_url) if self.base_url else None,
                "key_env": self.key_env, "json_dialect": self.json_dialect,
                "max_concurrency": self.max_concurrency, "timeout_s": self.timeout_s,
                "price_in": self.price_in, "price_out": self.price_out,
                "latency_s": self.latency_s}


class ModelsFile(BaseModel):
    """The aliases of one models file (empty when there is none)."""

    path: Path | None = None
    aliases: dict[str, Endpoint] = Field(default_factory=dict)

    def get(self, alias: str) -> Endpoint | None:
        return self.aliases.get(alias)


def load_models_file(path: Path | str | None = None) -> ModelsFile:
    """The models file: `path` (--models), else $SANDBOX_MODELS, else the default file in the
    user's config directory if it exists. A file named and missing, or malformed, is a
    FileFormatError naming the file, the alias and field, and the line."""
    named = path or os.environ.get(MODELS_ENV) or None
    if named is None:
        path = default_models_file()
        if not path.is_file():
            return ModelsFile()
    else:
        path = Path(named)
    data, lines = read_with_lines(path)
    if data is None:
        return ModelsFile(path=path)
    if not isinstance(data, dict):
        raise FileFormatError(path, f"expected a mapping of aliases to models, not a "
                              f"{type(data).__name__}")
    aliases = {}
    for alias, entry in data.items():
        where = f"{alias} (line {lines[alias]})" if alias in lines else str(alias)
        if not isinstance(alias, str) or not _ALIAS.fullmatch(alias):
            raise FileFormatError(path, "an alias is a word of letters, digits and . _ : + - "
                                  "(no '/': backend/model is the bare form)", where)
        if not isinstance(entry, dict):
            raise FileFormatError(path, "expected a mapping with at least `model: "
                                  "backend/model`", where)
        written = [k for k in entry if str(k).lower().replace("-", "_") in _KEY_FIELDS]
        if written:
            raise FileFormatError(path, f"refused: `{written[0]}` would write a key into the "
                                  "file; keys come from the environment: name the variable "
                                  "with key_env", _field_at(path, alias, lines, written[0]))
        try:
            aliases[alias] = Endpoint.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            # The message only: pydantic's own text quotes the input, which may be a key.
            raise FileFormatError(path, first["msg"], _field_at(path, alias, lines, field)
                                  if field else where) from None
    return ModelsFile(path=path, aliases=aliases)


def _field_at(path: Path, alias: str, lines: dict, field: str) -> str:
    """`alias.field (line N)`: the line of the field itself within the alias's block (the
    line to edit), else the alias's."""
    start = lines.get(alias)
    if start is None:
        return f"{alias}.{field}"
    text = read_text(path).splitlines()
    top = str(field).split(".")[0]
    for number in range(max(start - 1, 0), len(text)):
        line = text[number]
        if number >= start and line[:1] not in ("", " ", "\t", "#"):
            break  # the next alias
        if re.match(rf"\s+{re.escape(top)}\s*:", line):
            return f"{alias}.{field} (line {number + 1})"
    return f"{alias}.{field} (alias at line {start})"


def unknown_alias(ref: str, models: ModelsFile) -> LLMConfigError:
    """A model reference that is neither backend/model nor an alias of the file."""
    close = difflib.get_close_matches(ref, list(models.aliases), n=3)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    where = (f"aliases of {models.path}: {', '.join(sorted(models.aliases)) or 'none'}"
             if models.path else f"no models file ({default_models_file()} does not exist; "
             f"--models FILE or ${MODELS_ENV} names one)")
    return LLMConfigError(f"unknown model {ref!r}: {hint}give backend/model (e.g. "
                          f"local/smollm2-135m, openai/gpt-4o-mini) or an alias ({where})")
