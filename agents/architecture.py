"""Agent architectures: a YAML file naming the module for each slot and its parameters.

    name: ga
    modules:
      memory:       {module: stream, params: {embedder: minilm}}
      retriever:    {module: ga, params: {top_k: 30}}
      planner:      {module: ga}
      reflector:    {module: ga, params: {threshold: 150}}
      conversation: {module: ga, params: {max_turns: 8}}
      task_planner: {module: none}

Built-in architectures live in agents/architectures/ and are named without the suffix
(`ga`, `ga_tdp`, ...); any other path to a YAML file works too. Every problem (unknown module,
misspelt or out-of-range parameter, missing slot) is reported with the file and the field path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.files import FileFormatError, load_model, validation_error

from .protocols import SLOTS
from .registry import UnknownModule, lookup

BUILT_IN = Path(__file__).with_name("architectures")


class ModuleChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    module: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class ArchitectureSpec(BaseModel):
    """The file format; every slot must be named (no silent defaults)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    modules: dict[str, ModuleChoice]


@dataclass
class Architecture:
    """A validated architecture: per slot, the module class and its parsed parameters."""

    name: str
    source: str
    classes: dict[str, type]
    params: dict[str, BaseModel]

    def build(self) -> dict[str, Any]:
        """Fresh module instances (one set per agent: modules hold per-agent state)."""
        return {slot: self.classes[slot](self.params[slot]) for slot in SLOTS}

    def with_params(self, slot: str, **params: Any) -> Architecture:
        """A copy with some parameters of one slot changed (validated like the file)."""
        merged = {**self.params[slot].model_dump(), **params}
        return Architecture(self.name, self.source, dict(self.classes),
                            {**self.params, slot: self.classes[slot].Params.model_validate(
                                merged)})

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "modules": {
            slot: {"module": _name_of(self.classes[slot], slot),
                   "params": self.params[slot].model_dump(mode="json")} for slot in SLOTS}}


def _name_of(cls: type, slot: str) -> str:
    from .registry import MODULES

    return next((n for n, c in MODULES[slot].items() if c is cls), cls.__qualname__)


def available() -> list[str]:
    """Names of the built-in architectures."""
    return sorted(p.stem for p in BUILT_IN.glob("*.yaml"))


def resolve_path(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml", ".json") or path.is_file():
        return path
    built_in = BUILT_IN / f"{name_or_path}.yaml"
    if not built_in.exists():
        import difflib

        close = difflib.get_close_matches(str(name_or_path), available(), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise FileFormatError(path, f"no such architecture; {hint}built-in ones are "
                                    f"{', '.join(available())}, or give a path to a YAML file")
    return built_in


def load_architecture(name_or_path: str | Path) -> Architecture:
    """Read and check an architecture file (or a built-in name such as `ga_tdp`)."""
    path = resolve_path(name_or_path)
    spec = load_model(path, ArchitectureSpec)
    return from_spec(spec, path)


def from_spec(spec: ArchitectureSpec, path: Path | str = "<architecture>") -> Architecture:
    for slot in spec.modules:
        if slot not in SLOTS:
            raise FileFormatError(path, f"unknown slot {slot!r}; slots are {', '.join(SLOTS)}",
                                  f"modules.{slot}")
    missing = [s for s in SLOTS if s not in spec.modules]
    if missing:
        raise FileFormatError(path, f"no module chosen for {', '.join(missing)} (every slot "
                                    f"must be named; use module: none where one exists)",
                              "modules")
    classes, params = {}, {}
    for slot in SLOTS:
        choice = spec.modules[slot]
        try:
            cls = lookup(slot, choice.module)
        except UnknownModule as exc:
            raise FileFormatError(path, str(exc), f"modules.{slot}.module") from exc
        if (odd := _not_a_number(choice.params, cls.Params)) is not None:
            key, reason = odd
            raise FileFormatError(path, f"{reason} (module {choice.module!r})",
                                  f"modules.{slot}.params.{key}")
        try:
            params[slot] = cls.Params.model_validate(choice.params)
        except ValidationError as exc:
            err = validation_error(path, exc)
            where = ".".join(filter(None, [f"modules.{slot}.params", err.where
                                           if err.where != "top level" else ""]))
            raise FileFormatError(path, f"{err.reason} (module {choice.module!r})",
                                  where) from exc
        classes[slot] = cls
    return Architecture(name=spec.name, source=str(path), classes=classes, params=params)


def _not_a_number(params: dict[str, Any], model: type[BaseModel]) -> tuple[str, str] | None:
    """(key, reason) of a value YAML reads as a number that is none, checked here once for
    every module (its own Params, a third party's too, say only `float` or `int`): NaN or an
    infinity anywhere (`recency_weight: .inf` ran, and the run's log broke mid-run on an
    infinite score), a boolean where the module takes a number (`top_k: true` ran as 1)."""
    def finite(value: Any) -> bool:
        if isinstance(value, float):
            return math.isfinite(value)
        if isinstance(value, dict):
            return all(map(finite, value.values()))
        if isinstance(value, list):
            return all(map(finite, value))
        return True

    for key, value in params.items():
        if not finite(value):
            return key, "Input should be a finite number"
        field = model.model_fields.get(key)
        if isinstance(value, bool) and field is not None:
            kinds = get_args(field.annotation) or (field.annotation,)
            if bool not in kinds and (int in kinds or float in kinds):
                return key, "Input should be a number, not a boolean"
    return None
