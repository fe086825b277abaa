"""Reading authored files (YAML/JSON) into pydantic models with errors a person can act on.

Every bad file fails with the file, the field path and the reason (`FileFormatError`), and the
CLI turns that into exit code 2. `read_data` is the one reader of every file a user writes (world
maps, residents, architectures, scenario configs, task templates, benchmark settings): YAML or
JSON, refusing a key given twice.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .errors import one_line

M = TypeVar("M", bound=BaseModel)


class FileFormatError(Exception):
    """A file a user wrote (or imported) is not what it should be."""

    def __init__(self, path: Path | str, reason: str, where: str = ""):
        self.path, self.where, self.reason = Path(path), where, reason
        place = f" at {where}" if where else ""
        super().__init__(one_line(f"{path}{place}: {reason}"))


def read_data(path: Path | str):
    """Parse a YAML or JSON file (by its suffix: .json is JSON) into Python data, strictly: a
    key given twice in one mapping is a FileFormatError naming the file, the key path and the
    line, never the last value silently kept. Every file a user writes is read through here."""
    return read_with_lines(path)[0]


def read_with_lines(path: Path | str) -> tuple[object, dict[str, int]]:
    """`read_data`, and the line each top-level key's value starts on (a YAML block scalar's
    text: the line after its `|` or `>`), for errors inside a value (a world file's grid rows).
    JSON files give no lines."""
    path = Path(path)
    text = read_text(path)
    if path.suffix == ".json":
        return _read_json(path, text), {}
    return _read_yaml(path, text)


def read_text(path: Path | str) -> str:
    """A user's text file, whole: FileFormatError when it is missing, a directory, unreadable
    or not UTF-8 (naming the byte), never a traceback."""
    path = Path(path)
    if path.is_dir():
        raise FileFormatError(path, "a directory, not a file")
    if not path.is_file():
        raise FileFormatError(path, "no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise FileFormatError(path, f"not UTF-8 text (byte {exc.start})", f"line {line}") \
            from None
    except OSError as exc:  # no permission
        raise FileFormatError(path, f"cannot read: {exc.strerror}") from None


def _key_path(parts: list) -> str:
    return ".".join(str(p) for p in parts) or "top level"


# libyaml's loader, when PyYAML was built with it: 8x faster (a town of 4,000 residents spent
# 43 s parsing their files with the pure-Python one).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def _read_yaml(path: Path, text: str) -> tuple[object, dict[str, int]]:
    if _FAST_LOADER is not None:
        try:
            return _parse_yaml(path, text, _FAST_LOADER)
        except FileFormatError:
            # Whatever is wrong is said in the pure-Python parser's words (they name what was
            # expected; the bad-input corpus checks them): read again with it, it raises its own.
            return _parse_yaml(path, text, yaml.SafeLoader)
    return _parse_yaml(path, text, yaml.SafeLoader)


def _parse_yaml(path: Path, text: str, loader_class) -> tuple[object, dict[str, int]]:
    try:
        loader = loader_class(text)  # refuses control characters already
    except yaml.YAMLError as exc:
        raise FileFormatError(path, f"not valid YAML: {getattr(exc, 'reason', exc)}") from None
    try:
        root = loader.get_single_node()
        if root is None:
            return None, {}
        _refuse_duplicate_yaml_keys(path, loader, root)
        lines: dict[str, int] = {}
        if isinstance(root, yaml.MappingNode):
            for key, value in root.value:
                block = isinstance(value, yaml.ScalarNode) and value.style in ("|", ">")
                lines[str(key.value)] = value.start_mark.line + (2 if block else 1)
        try:
            data = loader.construct_document(root)
        except ValueError as exc:  # PyYAML builds a date like 2024-02-30 and fails
            raise _impossible_value(path, loader, root, exc) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise FileFormatError(path, f"not valid YAML: {problem}", where) from exc
    finally:
        loader.dispose()
    return data, lines


def _impossible_value(path: Path, loader: yaml.SafeLoader, root: yaml.Node,
                      error: ValueError) -> FileFormatError:
    """The scalar PyYAML could not build (a date that does not exist), by key path and line."""
    todo: list[tuple[yaml.Node, list]] = [(root, [])]
    while todo:
        node, parts = todo.pop()
        if isinstance(node, yaml.SequenceNode):
            todo += [(item, [*parts, i]) for i, item in reversed(list(enumerate(node.value)))]
        elif isinstance(node, yaml.MappingNode):
            todo += [(v, [*parts, k.value]) for k, v in reversed(node.value)]
        elif isinstance(node, yaml.ScalarNode) and node.tag.endswith(":timestamp"):
            try:
                loader.construct_yaml_timestamp(node)
            except ValueError as exc:
                return FileFormatError(path, f"{node.value!r} is not a date that exists ({exc})",
                                       f"{_key_path(parts)}, line {node.start_mark.line + 1}")
    return FileFormatError(path, f"a value that cannot be read: {error}")


def _refuse_duplicate_yaml_keys(path: Path, loader: yaml.SafeLoader, root: yaml.Node) -> None:
    """Walk the node tree; the first mapping with a key given twice is a FileFormatError."""
    seen_nodes: set[int] = set()
    todo: list[tuple[yaml.Node, list]] = [(root, [])]
    while todo:
        node, parts = todo.pop()
        if id(node) in seen_nodes:  # an alias (or a recursive one) is checked once
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo += [(item, [*parts, i]) for i, item in reversed(list(enumerate(node.value)))]
        elif isinstance(node, yaml.MappingNode):
            first_line: dict = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base` merges, by design
                    todo.append((value_node, parts))
                    continue
                key = loader.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in first_line:
                        raise FileFormatError(
                            path, f"duplicate key {key!r} (first at line {first_line[key]}); "
                                  "a key may be given once", f"{_key_path([*parts, key])}, "
                                                              f"line {line}")
                    first_line[key] = line
                except TypeError:  # an unhashable key: construction names it
                    continue
            todo += [(v, [*parts, loader.construct_object(k, deep=True)])
                     for k, v in reversed(node.value) if k.tag != "tag:yaml.org,2002:merge"]


class _DuplicateJSONKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    data = dict(pairs)
    if len(data) < len(pairs):
        raise _DuplicateJSONKey
    return data


def _read_json(path: Path, text: str):
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise FileFormatError(path, f"not valid JSON: {exc.msg}", f"line {exc.lineno}") from exc
    except _DuplicateJSONKey:
        key, parts, line, first = _first_duplicate_json_key(text)
        raise FileFormatError(path, f"duplicate key {key!r} (first at line {first}); a key may "
                                    "be given once",
                              f"{_key_path([*parts, key])}, line {line}") from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _first_duplicate_json_key(text: str) -> tuple[str, list, int, int]:
    """(key, path of its object, line, line of the first one) of the first key given twice in
    an object of `text`, which is valid JSON."""
    stack: list[dict] = []  # per open container: its path, keys seen (objects) or next index
    expect_key = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        top = stack[-1] if stack else None
        if token in "{[":
            parts = top["path"] + [top["at"]] if top else []
            stack.append({"path": parts, "keys": {} if token == "{" else None, "at": 0})
            expect_key = token == "{"
        elif token in "}]":
            stack.pop()
            expect_key = False
        elif token == ",":
            if top["keys"] is None:
                top["at"] += 1
            expect_key = top["keys"] is not None
        elif token == ":":
            expect_key = False
        elif expect_key:
            key = json.loads(token)
            line = text.count("\n", 0, match.start()) + 1
            if key in top["keys"]:
                return key, top["path"], line, top["keys"][key]
            top["keys"][key] = line
            top["at"] = key
    raise AssertionError("no duplicate key found")  # the hook saw one: unreachable


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
