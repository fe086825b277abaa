"""A benchmark's event kinds live in its own package (tasks/<name>/events.py) and reach the log
reader through the entry point group `sandbox.events`: the kernel names none of them, reads
every one typed, and a plug-in that does not import costs its kinds' types, not the log."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tomllib
from datetime import datetime
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from sandbox.events import base
from sandbox.log import EVENTS, HEADER, RunHeader, load_run

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ("pingpong", "simulbench", "refutebench", "stss")

# One line of every kind the benchmark packages define: kind -> (fields, the class it reads as).
PLUGIN_KINDS = {
    "task_assigned": ({"template": "party", "task_type": "public_activity", "goal": "g",
                       "criteria": "c"}, "TaskAssigned"),
    "summary_written": ({"conversation": "c", "text": "a summary"}, "SummaryWritten"),
    "user_request_written": ({"turn": 2, "strategy": "improvement", "said": "improve",
                              "request": "again"}, "UserRequestWritten"),
    "refutation_written": ({"k": 1, "focus": "tone", "raw": "No.", "cleaned": "No."},
                           "RefutationWritten"),
    "rule_feedback": ({"step": 1, "k": 1, "outcome": "skipped"}, "RuleFeedback"),
}

UTTERANCE = ("utterance", {"conversation": "c", "turn": 1, "to": ["B"], "text": "hi"})


def write_run(run_dir: Path, lines: list[tuple[str, dict]]) -> Path:
    """A run directory holding these events, written compact and kind first as the writer does
    (so the viewer's fast path sees them too)."""
    run_dir.mkdir()
    header = RunHeader(scenario="plugins", seed=0, start_time=datetime(2024, 2, 14, 8),
                       models={})
    (run_dir / HEADER).write_text(header.model_dump_json(), encoding="utf-8")
    text = "".join(json.dumps({"kind": kind, "t": float(i), "agent": "A", **fields},
                              separators=(",", ":")) + "\n"
                   for i, (kind, fields) in enumerate(lines))
    (run_dir / EVENTS).write_text(text, encoding="utf-8")
    return run_dir


def in_fresh_interpreter(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """What `code` prints as JSON in a new interpreter started in the checkout (nothing of
    this test process, e.g. modules already imported, carries over)."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT, check=True, env=env)
    return json.loads(done.stdout)


def declared_plugins() -> dict[str, str]:
    """The `sandbox.events` entry points pyproject.toml declares: name -> module."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["entry-points"][base.PLUGIN_GROUP]


@pytest.fixture
def installed_checkout(tmp_path) -> dict[str, str]:
    """An environment whose `social-sandbox` metadata declares this checkout's
    `sandbox.events` entry points, as `pip install -e .` of it would: found on PYTHONPATH
    before the virtualenv's own (which may have been installed from another checkout)."""
    dist = tmp_path / "metadata" / "social_sandbox-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: social-sandbox\n"
                                   "Version: 0.1.0\n", encoding="utf-8")
    points = "".join(f"{name} = {module}\n" for name, module in declared_plugins().items())
    (dist / "entry_points.txt").write_text(f"[{base.PLUGIN_GROUP}]\n{points}", encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(dist.parent), os.environ.get("PYTHONPATH", "")) if p)}


# --- (a) the kernel reads the benchmarks' kinds typed, with nothing imported beforehand -------

READERS = {
    "sandbox.log": "from sandbox.log import load_run\nread = lambda d: load_run(d).events",
    "viewer.source": "from viewer.source import RunSource\n"
                     "read = lambda d: RunSource.open(d).read_new(final=True)",
}
READ_RUN = """
import json, sys
{reader}
from sandbox.events import FAILED_PLUGINS
before = sorted(m for m in sys.modules if m == "tasks" or m.startswith("tasks."))
events = read(sys.argv[1])
print(json.dumps({{"before": before, "types": {{e.kind: type(e).__name__ for e in events}},
                  "failed": [list(f) for f in FAILED_PLUGINS]}}))
"""


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_fresh_reader_knows_every_benchmark_kind(tmp_path, reader, installed_checkout):
    lines = [UTTERANCE]
    lines += [(kind, fields) for kind, (fields, _) in PLUGIN_KINDS.items()]
    run_dir = write_run(tmp_path / "run", lines)
    seen = in_fresh_interpreter(READ_RUN.format(reader=READERS[reader]), str(run_dir),
                                env=installed_checkout)
    assert seen["before"] == [], "the reader imported a tasks package before it needed one"
    assert seen["failed"] == []
    expected = {kind: cls for kind, (_, cls) in PLUGIN_KINDS.items()} | {"utterance": "Utterance"}
    assert seen["types"] == expected


def test_the_declared_entry_points_define_the_kinds():
    """pyproject.toml names, for each benchmark, the module that defines its kinds."""
    declared = declared_plugins()
    assert declared == {name: f"tasks.{name}.events" for name in ("refutebench", "simulbench",
                                                                  "stss")}
    code = ("import json, importlib, sys\nfrom sandbox.events import EVENT_TYPES\n"
            "for m in sys.argv[1:]: importlib.import_module(m)\n"
            "print(json.dumps({k: c.__module__ for k, c in EVENT_TYPES.items()}))")
    defined = in_fresh_interpreter(code, *declared.values())
    assert {kind: defined.get(kind) for kind in PLUGIN_KINDS} == {
        "task_assigned": "tasks.stss.events", "summary_written": "tasks.stss.events",
        "user_request_written": "tasks.simulbench.events",
        "refutation_written": "tasks.refutebench.events",
        "rule_feedback": "tasks.refutebench.events"}


HEAVY = ("agents", "faiss", "torch", "sentence_transformers", "llama_cpp", "sandbox.engine",
         "sandbox.runner")


@pytest.mark.parametrize("module", ["tasks.refutebench.events", "tasks.simulbench.events",
                                    "tasks.stss.events"])
def test_a_plugin_module_loads_nothing_heavy(module):
    """The reader imports these for any log: they must not build agents or load a model."""
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = in_fresh_interpreter(code)
    heavy = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == [], f"importing {module} loads {heavy[:5]}"


# --- (b) a plug-in that does not import is logged and recorded; the log is still read --------

GOOD_PLUGIN = '''
from typing import Literal

from sandbox.events import Event


class PluginNoted(Event):
    kind: Literal["plugin_test_noted"] = "plugin_test_noted"
    note: str
'''
BROKEN_PLUGIN = 'raise RuntimeError("the plug-in exploded")\n'


@pytest.fixture
def fresh_registry(monkeypatch, tmp_path):
    """The event registry as if no plug-in had been loaded in this process, with two plug-in
    modules on sys.path (one that defines a kind, one that raises); restored afterwards."""
    (tmp_path / "plugin_test_good.py").write_text(GOOD_PLUGIN, encoding="utf-8")
    (tmp_path / "plugin_test_broken.py").write_text(BROKEN_PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(base, "_plugins_loaded", False)
    monkeypatch.setattr(base, "FAILED_PLUGINS", [])
    kinds = dict(base.EVENT_TYPES)
    yield
    base.EVENT_TYPES.clear()
    base.EVENT_TYPES.update(kinds)
    sys.modules.pop("plugin_test_good", None)


def installed(monkeypatch, **points: str) -> list[int]:
    """Make these the group's entry points (name=module); the list counts the listings."""
    listed = []

    def fake() -> list[EntryPoint]:
        listed.append(1)
        return [EntryPoint(name, value, base.PLUGIN_GROUP) for name, value in points.items()]

    monkeypatch.setattr(base, "plugin_entry_points", fake)
    return listed


def test_a_plugin_that_fails_to_import_is_logged_and_the_log_still_reads(
        fresh_registry, monkeypatch, tmp_path, caplog):
    listed = installed(monkeypatch, broken="plugin_test_broken", good="plugin_test_good",
                       missing="plugin_test_no_such_module")
    run_dir = write_run(tmp_path / "run", [
        UTTERANCE,
        ("plugin_test_noted", {"note": "typed"}),
        ("exploded_kind", {"x": 1}),
    ])
    with caplog.at_level(logging.WARNING, logger=base.__name__):
        run = load_run(run_dir)
    assert [type(e).__name__ for e in run.events] == ["Utterance", "PluginNoted", "UnknownEvent"]
    assert run.events[1].note == "typed" and run.events[2].model_extra == {"x": 1}
    assert run.problems == []
    failed = {f.name: f for f in base.FAILED_PLUGINS}
    assert sorted(failed) == ["broken", "missing"]
    assert failed["broken"].module == "plugin_test_broken"
    assert failed["broken"].error == "RuntimeError: the plug-in exploded"
    assert failed["missing"].error.startswith("ModuleNotFoundError")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "'broken'" in warnings[0] and "the plug-in exploded" in warnings[0]
    # read again: the plug-ins are not listed (nor the broken one retried) a second time
    load_run(run_dir)
    assert listed == [1] and len(base.FAILED_PLUGINS) == 2


def test_without_plugins_the_reader_still_reads(fresh_registry, monkeypatch, tmp_path):
    installed(monkeypatch)  # nothing declares the group (a stale install, say)
    for kind in PLUGIN_KINDS:
        base.EVENT_TYPES.pop(kind, None)  # as in a process that never imported a task
    lines = [(kind, fields) for kind, (fields, _) in PLUGIN_KINDS.items()]
    run = load_run(write_run(tmp_path / "run", lines))
    assert {type(e).__name__ for e in run.events} == {"UnknownEvent"}
    assert [e.kind for e in run.events] == list(PLUGIN_KINDS) and run.problems == []
    assert base.FAILED_PLUGINS == []


def test_listing_every_kind_loads_the_plugins_first(fresh_registry, monkeypatch):
    installed(monkeypatch, good="plugin_test_good")
    assert "plugin_test_noted" not in base.EVENT_TYPES
    assert base.load_event_plugins() == []
    assert "plugin_test_noted" in base.EVENT_TYPES


# --- (c) the kernel names no benchmark and defines none of their kinds -----------------------


def naming_a_benchmark(folder: Path) -> list[str]:
    """Files under `folder` whose name or text names a benchmark."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".pyc"):
        text = path.read_text(encoding="utf-8", errors="replace").lower()
        names = [b for b in BENCHMARKS if b in text or b in path.name.lower()]
        if names:
            found.append(f"{path.relative_to(folder)}: {', '.join(names)}")
    return found


def test_the_kernels_events_name_no_benchmark():
    assert naming_a_benchmark(ROOT / "sandbox" / "events") == []


def test_the_name_check_sees_a_benchmark(tmp_path):
    (tmp_path / "stss.py").write_text("x = 1\n")
    (tmp_path / "agent.py").write_text('"""As in the RefuteBench paper."""\n')
    (tmp_path / "core.py").write_text("y = 2\n")
    assert naming_a_benchmark(tmp_path) == ["agent.py: refutebench", "stss.py: stss"]


def test_the_kernel_alone_defines_none_of_their_kinds():
    code = ("import json, sys, sandbox.events, sandbox.log\n"
            "from sandbox.events import EVENT_TYPES\n"
            "print(json.dumps({'kinds': sorted(EVENT_TYPES),\n"
            "                  'tasks': [m for m in sys.modules if m.startswith('tasks')]}))")
    seen = in_fresh_interpreter(code)
    assert "utterance" in seen["kinds"]  # the check sees the kernel's own kinds
    assert sorted(set(PLUGIN_KINDS) & set(seen["kinds"])) == []
    assert seen["tasks"] == []
