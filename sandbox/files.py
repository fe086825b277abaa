"""Reading authored files (YAML/JSON) into pydantic models with errors a person can act on.

Every bad file fails with the file, the field path and the reason (`FileFormatError`), and the
CLI turns that into exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class FileFormatError(Exception):
    """A file a user wrote (or imported) is not what it should be."""

    def __init__(self, path: Path | str, reason: str, where: str = ""):
        self.path, self.where, self.reason = Path(path), where, reason
        place = f" at {where}" if where else ""
        super().__init__(f"{path}{place}: {reason}")


def read_data(path: Path | str):
    """Parse a YAML or JSON file into Python data."""
    path = Path(path)
    if not path.is_file():
        raise FileFormatError(path, "no such file")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise FileFormatError(path, f"not valid JSON: {exc.msg}", f"line {exc.lineno}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FileFormatError(path, f"not valid YAML: {getattr(exc, 'problem', exc)}",
                              where) from exc


def validation_error(path: Path | str, exc: ValidationError) -> FileFormatError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "top level"
    more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return FileFormatError(path, first["msg"] + more, where)


def load_model(path: Path | str, model: type[M]) -> M:
    """Load and validate a file as `model`."""
    data = read_data(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from exc
