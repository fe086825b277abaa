"""What every fuzz test shares: mutations of a valid file, and the one property every file a user
gives us must have -- the command ends in success or a one-line error (exit 2) that names the
file, never a traceback, and a refused input leaves no output directory behind."""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import yaml
from hypothesis import strategies as st

from sandbox.app.cli import main

# Values that have broken loaders elsewhere: wrong types, empty and huge, paths, control
# characters, non-Latin text, numbers that are not.
ODD_TEXT = st.sampled_from([
    "", " ", "../../etc/passwd", "a/b", "C:\\x", "\x00", "\x1b[31mred", "line\nbreak",
    "名前" * 40, "é" * 300, "-1", "25:99", "99:99", "1e999", "NaN", "null", "~", "{}", "[]",
    "Maya Lindqvist", "town:Copper Kettle Cafe", "2024-02-30 10:00", "00:00", "23:59"])
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.sampled_from([0, -1, 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20), ODD_TEXT,
    st.lists(st.one_of(st.integers(-3, 3), ODD_TEXT), max_size=3),
    st.dictionaries(st.text(max_size=6), st.one_of(st.integers(), ODD_TEXT), max_size=2))


def _nodes(data, path=()):
    """Every path into `data` (dict keys and list indexes), the root included."""
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _nodes(value, (*path, i))


def _parent(data, path):
    for step in path[:-1]:
        data = data[step]
    return data


@st.composite
def mutated(draw, data):
    """`data` with one to three changes: a value replaced, a key or item removed, a key added,
    a list emptied or an item repeated."""
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _nodes(data) if p]
        if not paths:
            return draw(VALUES)
        path = draw(st.sampled_from(paths))
        parent, last = _parent(data, path), path[-1]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add", "repeat"]))
        if action == "replace":
            parent[last] = draw(VALUES)
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.one_of(ODD_TEXT, st.text(max_size=8)))] = draw(VALUES)
        elif action == "repeat" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        else:
            parent[last] = draw(VALUES)
    return data


def dump(data, suffix: str) -> str:
    if suffix == ".json":
        return json.dumps(data, ensure_ascii=False)
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


@st.composite
def file_text(draw, data, suffix: str):
    """The text of a mutated file: mostly a structural change, sometimes the valid text cut
    short or with bytes spliced in (a copy interrupted, an editor's slip)."""
    how = draw(st.sampled_from(["structure", "structure", "structure", "cut", "splice"]))
    if how == "structure":
        return dump(draw(mutated(data)), suffix)
    text = dump(data, suffix)
    at = draw(st.integers(0, max(0, len(text) - 1)))
    if how == "cut":
        return text[:at]
    return text[:at] + draw(st.sampled_from(["\x00", "\t", ":", "- ", "{", "]", "\"", "&a",
                                             "*a", "!!python/object:os.system", "\ufeff"])) \
        + text[at:]


@st.composite
def jsonl_text(draw, lines: list):
    """The text of a mutated JSON-lines file: lines replaced, dropped, added or repeated (a line
    may become another JSON value than an object), or the valid text cut short or spliced."""
    how = draw(st.sampled_from(["structure", "structure", "structure", "cut", "splice"]))
    if how == "structure":
        changed = draw(mutated(lines))  # the whole list may be replaced: then one line
        rows = changed if isinstance(changed, list) else [changed]
        return "\n".join(json.dumps(line, ensure_ascii=False) for line in rows) + "\n"
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
    at = draw(st.integers(0, max(0, len(text) - 1)))
    if how == "cut":
        return text[:at]
    return text[:at] + draw(st.sampled_from(["\x00", "\n", "{", "]", "\"", "\ufeff", "\xff"])) \
        + text[at:]


def run_cli(args: list[str]) -> tuple[int, str]:
    """`sandbox ARGS` in process: (exit code, stderr). Any exception but SystemExit escapes."""
    err, out = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


# Messages that are about something other than the fuzzed file (the model the test names to
# stop the command before it runs anything).
NOT_ABOUT_THE_FILE = ("unknown scripted backend",)


def check_cli(args: list[str], files: list[Path], out: Path | None = None,
              allowed: tuple[int, ...] = (0, 2)) -> tuple[int, str]:
    """The property: exit 0 or 2 (or `allowed`), never a traceback; an error's last line names
    one of `files`; an input refused leaves no `out` behind."""
    code, err = run_cli(args)
    assert code in allowed, f"exit {code}: {err[-2000:]}"
    assert "Traceback" not in err, err
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines, "exit 2 without a message"
        last = lines[-1]
        if not any(m in last for m in NOT_ABOUT_THE_FILE):
            assert any(f.name in last for f in files), f"the error names no file: {last}"
            if out is not None:
                assert not out.exists(), f"{out} left behind after: {last}"
    return code, err
