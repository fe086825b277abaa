"""Reading and writing SimulBench tasks and test scripts: our YAML and the public JSONL files.

    load_tasks(None)                        our 40 tasks (tasks.yaml)
    load_tasks("simulbench_tasks.jsonl")    the published 109 tasks, unchanged
    load_scripts("simulbench_all.jsonl")    the published 500 scripts, with their categories
    write_scripts(scripts, path)            our extracted scripts, in the published format

Every problem is a FileFormatError naming the file, the line or field, and the reason (the
commands exit 2 with that one line). The published script file does not mark FirstChan and
SubseqChan: `categories.categorize` works them out (see there).

    python -m tasks.simulbench.importer simulbench_all.jsonl   # writes published_split.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sandbox.files import FileFormatError, read_data, read_text
from sandbox.storage import write_atomic

from . import categories
from .categories import categorize
from .models import (
    DEFAULT_REQUEST_TYPE,
    PUBLIC_SCRIPT_FIELDS,
    PUBLIC_TASK_FIELDS,
    TURNS,
    Script,
    SimTask,
)

OUR_TASKS = Path(__file__).with_name("tasks.yaml")
_OUR_KEYS = {"name", "first_turn", "request_type", "type", "kind", "id"}

class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def read_jsonl(path: Path | str) -> list[tuple[int, dict]]:
    """(line number, object) of every non-empty line; a bad line is a FileFormatError naming
    it (a truncated last line, a key given twice, a line that is not an object)."""
    path = Path(path)
    rows = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line, object_pairs_hook=_no_duplicates)
        except _DuplicateKey as exc:
            raise FileFormatError(path, f"key {exc.args[0]!r} given twice", f"line {number}") \
                from None
        except json.JSONDecodeError as exc:
            raise FileFormatError(path, f"not valid JSON ({exc.msg} at column {exc.colno}; "
                                        "a truncated line?)", f"line {number}") from None
        if not isinstance(data, dict):
            raise FileFormatError(path, "expected a JSON object", f"line {number}")
        rows.append((number, data))
    if not rows:
        raise FileFormatError(path, "no lines: the file is empty")
    return rows


def _first_error(path: Path, where: str, exc: ValidationError) -> FileFormatError:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    reason = first["msg"]
    if first["type"] == "literal_error" and first["loc"][-1] == "type":
        reason = f"unknown type {first['input']!r} (stateful or stateless)"
    return FileFormatError(path, reason, f"{where}, field {loc}" if loc else where)


# -- tasks ---------------------------------------------------------------------------------------
def task_id(name: str) -> str:
    """The public id shape for one of our tasks (no number: ours are named, not counted)."""
    return "_".join(name.split())


def load_tasks(path: Path | str | None = None) -> list[SimTask]:
    """Our YAML (default: the built-in 40) or a public task file (.jsonl)."""
    path = Path(path) if path is not None else OUR_TASKS
    tasks = _public_tasks(path) if path.suffix == ".jsonl" else _our_tasks(path)
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task.id in seen:
            raise FileFormatError(path, f"task id {task.id!r} also names task {seen[task.id]}",
                                  f"tasks.{i}.id")
        seen[task.id] = i
    return tasks


def _our_tasks(path: Path) -> list[SimTask]:
    data = read_data(path)
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list) \
            or not data["tasks"]:
        raise FileFormatError(path, "expected a mapping with a non-empty list 'tasks'", "tasks")
    tasks = []
    for i, entry in enumerate(data["tasks"]):
        where = f"tasks.{i}"
        if not isinstance(entry, dict):
            raise FileFormatError(path, "expected a mapping (a task)", where)
        unknown = sorted(set(entry) - _OUR_KEYS)
        if unknown:
            raise FileFormatError(path, f"unknown key {unknown[0]!r} (a task has name, "
                                        "first_turn, request_type, type, kind)",
                                  f"{where}.{unknown[0]}")
        for key in ("name", "first_turn", "type"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise FileFormatError(path, f"missing or empty {key!r}", f"{where}.{key}")
        try:
            task = SimTask(id=str(entry.get("id") or task_id(entry["name"])), act=entry["name"],
                           task_description=entry["first_turn"].strip(),
                           request_type=entry.get("request_type") or DEFAULT_REQUEST_TYPE,
                           type=entry["type"], kind=entry.get("kind"))
        except ValidationError as exc:
            err = _first_error(path, where, exc)
            field = {"act": "name", "task_description": "first_turn"}.get(
                str(exc.errors()[0]["loc"][0]), str(exc.errors()[0]["loc"][0]))
            raise FileFormatError(path, err.reason, f"{where}.{field}") from exc
        tasks.append(task)
    return tasks


def _public_tasks(path: Path) -> list[SimTask]:
    tasks = []
    for number, row in read_jsonl(path):
        missing = [k for k in PUBLIC_TASK_FIELDS if k not in row]
        if missing:
            raise FileFormatError(path, f"missing field {missing[0]!r}",
                                  f"line {number}, field {missing[0]}")
        try:
            tasks.append(SimTask.model_validate({k: row[k] for k in PUBLIC_TASK_FIELDS}))
        except ValidationError as exc:
            raise _first_error(path, f"line {number}", exc) from exc
    return tasks


def write_tasks(tasks: Iterable[SimTask], path: Path | str) -> Path:
    """Tasks in the public task-file format (one JSON object a line)."""
    path = Path(path)
    lines = [json.dumps(t.model_dump(include=set(PUBLIC_TASK_FIELDS)), ensure_ascii=False)
             for t in tasks]
    write_atomic(path, "\n".join(lines) + "\n")
    return path


# -- scripts -------------------------------------------------------------------------------------
def check_history(script: Script) -> str | None:
    """Why the script's history is not a test script, or None."""
    history = script.dialogue_history
    if not history:
        return "the dialogue history is empty"
    for i, message in enumerate(history):
        want = "user" if i % 2 == 0 else "assistant"
        if message.role != want:
            return f"message {i} is {message.role!r}, expected {want!r} (roles alternate, " \
                   "starting with the user)"
    if history[-1].role != "user":
        return "the history ends on an assistant turn; a test script ends on a user query"
    if script.turn_num > TURNS:
        return f"turn_num {script.turn_num} is above {TURNS}"
    want = 2 * TURNS - 1 if script.turn_num == 0 else 2 * script.turn_num - 1
    if len(history) != want:
        return f"{len(history)} messages for turn_num {script.turn_num}; expected {want}"
    return None


def load_scripts(path: Path | str, tasks: Sequence[SimTask] | None = None) -> list[Script]:
    """The scripts of a public-format file, checked, with their categories. With `tasks`, every
    `source_id` must name one of them."""
    path = Path(path)
    scripts: list[Script] = []
    seen: dict[Any, int] = {}
    known = {t.id for t in tasks} if tasks is not None else None
    for number, row in read_jsonl(path):
        where = f"line {number}"
        missing = [k for k in PUBLIC_SCRIPT_FIELDS if k not in row]
        if missing:
            raise FileFormatError(path, f"missing field {missing[0]!r}",
                                  f"{where}, field {missing[0]}")
        try:
            script = Script.model_validate({k: row[k] for k in PUBLIC_SCRIPT_FIELDS})
        except ValidationError as exc:
            raise _first_error(path, where, exc) from exc
        problem = check_history(script)
        if problem:
            raise FileFormatError(path, problem, f"{where}, field dialogue_history")
        if script.id in seen:
            raise FileFormatError(path, f"id {script.id!r} is also on line {seen[script.id]}",
                                  f"{where}, field id")
        seen[script.id] = number
        if known is not None and script.source_id not in known:
            raise FileFormatError(path, f"source_id {script.source_id!r} is no task of the "
                                        "task file", f"{where}, field source_id")
        scripts.append(script)
    return categorize(scripts)


def write_scripts(scripts: Iterable[Script], path: Path | str) -> Path:
    """Scripts in the published test-script format: the 8 fields, one JSON object a line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(s.public(), ensure_ascii=False) for s in scripts]
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    """Derive the published split from the whole published script file and write it beside
    categories.py (`categories.SPLIT_FILE`)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tasks.simulbench.importer simulbench_all.jsonl",
              file=sys.stderr)
        return 2
    scripts = load_scripts(args[0])
    split = categories.derive_split(scripts)
    categories.SPLIT_FILE.write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
    categories.read_split.cache_clear()
    count = {c: sum(s.category == c for s in scripts) for c in ("firstchan", "subseqchan")}
    print(f"{len(split)} dialogues with Hard scripts (FirstChan {count['firstchan']}, "
          f"SubseqChan {count['subseqchan']}) into {categories.SPLIT_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
