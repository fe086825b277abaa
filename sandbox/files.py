"""Reading authored files (YAML/JSON) into pydantic models with errors a person can act on.

Every bad file fails with the file, the field path and the reason (`FileFormatError`), and the
CLI turns that into exit code 2. `read_data` is the one reader of every file a user writes (world
maps, residents, architectures, scenario configs, task templates, benchmark settings): YAML or
JSON, refusing a key given twice.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

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


# How big an input may be, checked before it is read: a file a person writes or imports (a
# world, residents, a template, a benchmark's items), and a run's own logs and caches, which
# grow with the run (a town day of 25 residents writes tens of MB). Past these a file is not
# what it claims to be (or /dev/zero behind a link), and reading it would only exhaust memory.
MAX_TEXT_BYTES = 256 * 2**20
MAX_LOG_BYTES = 4 * 2**30

_SPECIAL = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    """What a file of this mode is when it is not a regular file."""
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    for test, what in _SPECIAL:
        if test(mode):
            return f"{what}, not a regular file"
    return None if stat.S_ISREG(mode) else "not a regular file"


def open_input(path: Path | str, limit: int = MAX_TEXT_BYTES) -> BinaryIO:
    """The one guarded way to open a file we read: a regular file of at most `limit` bytes,
    opened for reading in binary. A FIFO, a device or a socket is refused before it is opened
    (reading a FIFO blocks until someone writes; a device never ends), so is a file over the
    limit; a missing or unreadable one is a FileFormatError naming it, never a traceback."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise FileFormatError(path, "no such file") from None
    except OSError as exc:
        raise FileFormatError(path, f"cannot read: {exc.strerror}") from None
    if (what := _not_regular(mode)) is not None:
        raise FileFormatError(path, what)
    try:
        # O_NONBLOCK: a FIFO swapped in since the stat opens at once, and is refused below
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FileFormatError(path, f"cannot read: {exc.strerror}") from None
    try:
        found = os.fstat(fd)
        if (what := _not_regular(found.st_mode)) is not None:
            raise FileFormatError(path, what)
        if found.st_size > limit:
            raise FileFormatError(path, f"{found.st_size:,} bytes, more than the {limit:,} a "
                                        "file read here may have")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path | str, limit: int = MAX_TEXT_BYTES) -> bytes:
    """A file's bytes through `open_input` (at most `limit` of them, even if it grows)."""
    with open_input(path, limit) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileFormatError(path, f"more than the {limit:,} bytes a file read here may have")
    return data


def decode(path: Path | str, data: bytes, first_line: int = 1) -> str:
    """`data` (from `path`, starting at line `first_line`) as UTF-8 text, or a FileFormatError
    naming the byte and the line of the first one that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + first_line
        raise FileFormatError(path, f"not UTF-8 text (byte {exc.start})", f"line {line}") \
            from None


def read_text(path: Path | str, limit: int = MAX_TEXT_BYTES) -> str:
    """A text file, whole, through `open_input`: FileFormatError when it is missing, a
    directory, a special file, too big, unreadable or not UTF-8 (naming the byte and line),
    never a traceback or a hang."""
    return decode(path, read_bytes(path, limit))


def input_lines(path: Path | str, limit: int = MAX_LOG_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each line of a JSON-lines file, through `open_input`: a log or
    cache read line by line (its caller decides what a bad line is: a problem reported, or an
    error). The last line may lack its newline (a kill cut it)."""
    with open_input(path, limit) as fh:
        read = 0
        for number, raw in enumerate(fh, start=1):
            read += len(raw)
            if read > limit:  # it grew past the limit while being read
                raise FileFormatError(path, f"more than the {limit:,} bytes a file read here "
                                            "may have", f"line {number}")
            yield number, raw


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number a file here may hold")


# One decoder (json.loads with options builds one per call: a third slower on a big log).
_STRICT_JSON = json.JSONDecoder(parse_constant=_refuse_constant)


def _said(exc: ValueError) -> ValueError:
    """Python's refusal of an integer of more than 4,300 digits, in our words (its own advises
    changing an interpreter setting)."""
    if isinstance(exc, json.JSONDecodeError) or "integer string conversion" not in str(exc):
        return exc
    return ValueError("a number of more than 4,300 digits")


def json_line(raw: bytes | str):
    """One JSON value of a log line, strictly: UTF-8, and no NaN or Infinity (Python's json
    reads them; a time or a count that is not a number would poison every sum after it; the
    typed events refuse an overflowing 1e999 themselves).
    ValueError (a UnicodeDecodeError or JSONDecodeError among them) when it is not one."""
    try:
        return _STRICT_JSON.decode(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except ValueError as exc:
        raise _said(exc) from None


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
        return json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_constant=_refuse_constant)
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise FileFormatError(path, f"not valid JSON: {exc.msg}", f"line {exc.lineno}") \
                from exc
        raise FileFormatError(path, f"not valid JSON: {_said(exc)}") from None  # NaN, digits
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
