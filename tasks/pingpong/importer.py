"""Reading character/situation sets: our YAML and the public PingPong settings files.

The public format is `{language: {characters: [...], situations: [...], ...}}` (JSON); the
original files also carry keys we do not use (a version, prompt paths), which are skipped and
listed in `RoleplaySet.ignored_keys`. A v1 settings file (version 1, or v1's prompt paths) is
refused: its protocol is not v2's (`_refuse_v1` says how). A file holding one language directly
(`{characters: [...], situations: [...]}`) is read too. Every problem names the file, the field
path and what is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sandbox.files import FileFormatError, read_data

from .models import Character, RoleplaySet, Situation

OUR_SET = Path(__file__).with_name("settings.yaml")

_CHARACTER_KEYS = set(Character.model_fields)
_SITUATION_KEYS = set(Situation.model_fields)


def load_settings(path: Path | str | None = None, language: str = "en") -> RoleplaySet:
    """The characters and situations of `language` in `path` (default: our own set)."""
    path = Path(path) if path is not None else OUR_SET
    data = read_data(path)
    if not isinstance(data, dict):
        raise FileFormatError(path, "expected a mapping of language to {characters, situations}")
    if "characters" in data or "situations" in data:
        block, prefix = data, ""
    elif language in data:
        block, prefix = data[language], f"{language}."
    else:
        known = ", ".join(sorted(str(k) for k in data)) or "none"
        raise FileFormatError(path, f"no language {language!r} in this file (it has: {known})")
    if not isinstance(block, dict):
        raise FileFormatError(path, "expected a mapping with characters and situations",
                              prefix.rstrip("."))
    _refuse_v1(path, block, prefix)
    ignored = [f"{prefix}{k}" for k in block if k not in ("characters", "situations")]
    characters = [_character(path, f"{prefix}characters.{i}", item, ignored)
                  for i, item in enumerate(_list(path, block, "characters", prefix))]
    situations = [_situation(path, f"{prefix}situations.{i}", item, ignored)
                  for i, item in enumerate(_list(path, block, "situations", prefix))]
    texts = [s.text for s in situations]
    for i, text in enumerate(texts):
        if text in texts[:i]:
            raise FileFormatError(path, "this situation text appears twice",
                                  f"{prefix}situations.{i}.text")
    return RoleplaySet(language=language, characters=characters, situations=situations,
                       source=str(path), ignored_keys=ignored)


# What a public v1 settings file has that a v2 one has not (and no judge prompts).
V1_KEYS = ("user_prompt_path", "system_prompt_path")


def _refuse_v1(path: Path, block: dict, prefix: str) -> None:
    """A v1 settings file runs under another protocol; played under v2 its scores would not be
    v1's, so it is refused, naming the difference (one line)."""
    v1 = block.get("version") == 1 or (
        all(k in block for k in V1_KEYS) and "judge_user_prompt_path" not in block)
    if v1:
        raise FileFormatError(
            path, "a PingPong v1 settings file, which this sandbox does not run: in v1 the "
                  "interrogator is also the judge, sees the whole character card and scores "
                  "each turn 1-10 (its cards have no summary); here (v2) the interrogator sees "
                  "only the card's summary and separate judges score 1-5. To play these cards "
                  "under v2, give each a summary and set version to 2",
            f"{prefix}version" if "version" in block else prefix.rstrip("."))


def _list(path: Path, block: dict, key: str, prefix: str) -> list:
    items = block.get(key)
    if not isinstance(items, list) or not items:
        raise FileFormatError(path, f"needs a non-empty list of {key}", f"{prefix}{key}")
    return items


def _require_text(path: Path, where: str, item: Any, field: str, what: str) -> None:
    if not isinstance(item, dict):
        raise FileFormatError(path, f"expected a mapping (a {what})", where)
    value = item.get(field)
    if not isinstance(value, str) or not value.strip():
        missing = "has no" if value is None else "has an empty or non-text"
        raise FileFormatError(path, f"this {what} {missing} {field!r}", f"{where}.{field}")


def _validated(path: Path, where: str, model, item: dict, known: set[str], ignored: list[str]):
    ignored.extend(f"{where}.{k}" for k in item if k not in known)
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise FileFormatError(path, first["msg"], f"{where}.{loc}" if loc else where) from exc


def _character(path: Path, where: str, item: Any, ignored: list[str]) -> Character:
    _require_text(path, where, item, "char_name", "character card")
    _require_text(path, where, item, "system_prompt", "character card")
    return _validated(path, where, Character, item, _CHARACTER_KEYS, ignored)


def _situation(path: Path, where: str, item: Any, ignored: list[str]) -> Situation:
    _require_text(path, where, item, "text", "situation")
    return _validated(path, where, Situation, item, _SITUATION_KEYS, ignored)
