"""The file walk: every kind of file a command reads, given every hostile shape, through the
real `main()` in process, judged by the parser walk's rules (parser_walk.py: exit 2, one line
on stderr, no traceback, nothing written, inputs unchanged, no hang).

    .venv/bin/python tests/fuzz/file_walk.py          # the tally and every failure

A kind is a file a user writes (a models file, an experiment, a persona room, a task
template, a person's script, a benchmark's items, a prompt override, an architecture, a
world) or a file of a run a command reads (its events, its prompts). Each is given the shapes
of any file -- empty, over its size bound (sparse: nothing on disk), a FIFO, a device (a link
to /dev/zero), a directory, not UTF-8 -- and those of its content: the wrong type at the top,
NaN or infinity for a number, a boolean for a number (a prompt: an undefined variable, not
Jinja). A run's log may be empty or hold a bad line (said, and the rest read: its own rule,
sandbox/log.py), so its kinds take the special shapes only.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
ROOT = Path(__file__).resolve().parents[2]

from parser_walk import COMMAND, Case, Outcome, Scratch, quiet_environment, run_case  # noqa: E402

HUGE = 5 * 2**30  # over every bound (a person's file: 256 MiB; a run's logs: 4 GiB)
SPECIAL = ("empty", "over its bound", "FIFO", "device", "directory", "not UTF-8")
TOWN = ["--model", "scripted/town", "--embedder", "hashing", "--background", "2", "--same-day",
        "--start", "15:00"]


ROOM = ("personas:\n  - {name: Ann, description: A baker.}\n"
        "  - {name: Bo, description: A poet.}\n")
# A public 1.0 line whose feedback count is NaN (Python's json reads it; JSON has no NaN).
V1_NAN = ('{"system_prompt": "x", "feedbacks": {"coffee": {"translation": ["a"], "random": '
          '"b", "existence": [1, 3], "cnt": NaN}}, "feedback_prompt": "", '
          '"feedback_mapping_prompt": "m", "queries": ["q", "[MAYBE FEEDBACK]", "q"]}\n')


ARCH = (ROOT / "agents" / "architectures" / "ga.yaml").read_text(encoding="utf-8")
WORLD = (ROOT / "worlds" / "maps" / "town.yaml").read_text(encoding="utf-8")


def _prompt(s: Scratch) -> Path:
    """A prompt override in a --prompts folder of its own."""
    (s.root / "prompts").mkdir(exist_ok=True)
    return s.root / "prompts" / "plan_daily.j2"


def _world(s: Scratch) -> Path:
    """A world file beside the shipped residents, as a world's folder holds them."""
    (s.root / "maps").mkdir(exist_ok=True)
    if not (s.root / "residents").exists():
        (s.root / "residents").symlink_to(ROOT / "worlds" / "residents")
    return s.root / "maps" / "input.yaml"


def world_argv(p: Path, s: Scratch) -> list[str]:
    return ["run", "town_day", "--model", "scripted/town", "--embedder", "hashing", "--hours",
            "1", "--world", str(p), "--out", "o"]


@dataclass
class FileKind:
    name: str
    argv: Callable[[Path, Scratch], list[str]]  # the command reading the file at PATH
    suffix: str = ".yaml"
    content: dict[str, str] = field(default_factory=dict)  # shape -> text
    special: tuple[str, ...] = SPECIAL
    at: Callable[[Scratch], Path] | None = None  # where it must be (a run's file)


KINDS = [
    # A models file of comments only (or empty) names no alias: a fresh one, not a mistake.
    FileKind("models file", lambda p, s: ["list", "models", "--models", str(p)],
             special=SPECIAL[1:], content={
        "wrong type": "- a\n- b\n",
        "NaN": "m:\n  model: scripted/town\n  price_in: .nan\n",
        "infinity": "m:\n  model: scripted/town\n  price_out: .inf\n",
        "boolean": "m:\n  model: scripted/town\n  max_concurrency: true\n"}),
    FileKind("experiment", lambda p, s: ["sweep", str(p), "--dry-run"], content={
        "wrong type": "out: o\nmodels: [scripted/pingpong]\nbenchmarks: {pingpong: {}}\n",
        "NaN": "out: o\nmodels: {a: scripted/pingpong}\nseeds: [.nan]\n"
               "benchmarks: {pingpong: {}}\n",
        "infinity": "out: o\nmodels: {a: scripted/pingpong}\nseeds: [.inf]\n"
                    "benchmarks: {pingpong: {}}\n",
        "boolean": "out: o\nmodels: {a: scripted/pingpong}\nseeds: [true]\n"
                   "benchmarks: {pingpong: {}}\n"}),
    FileKind("persona room", lambda p, s: ["run", "single_room", "--config", str(p), "--model",
                                           "scripted/default", "--out", "o"], content={
        "wrong type": "personas: 3\n",
        "NaN": ROOM + "seconds_per_turn: .nan\n",
        "infinity": ROOM + "seconds_per_turn: .inf\n",
        "boolean": ROOM + "max_turns: true\n"}),
    FileKind("task template", lambda p, s: ["run", str(p), *TOWN, "--out", "o"], content={
        "wrong type": "- 1\n- 2\n"}),
    FileKind("person's script", lambda p, s: ["run", "public_spring_tasting", *TOWN, "--human",
                                              "Maya Lindqvist", "--human-ui", f"script:{p}",
                                              "--out", "o"], content={
        "wrong type": "{purpose: plan.daily}\n"}),
    FileKind("RefuteBench items", lambda p, s: ["refutebench", "--items", str(p), "--model",
                                                "scripted/refutebench", "--out", "o"],
             suffix=".jsonl", content={"wrong type": "[1, 2]\n", "NaN": V1_NAN}),
    FileKind("SimulBench scripts", lambda p, s: ["simulbench", "--scripts", str(p),
                                                 "--simulator", "scripted/simulbench",
                                                 "--out", "o"],
             suffix=".jsonl", content={"wrong type": "[1, 2]\n", "NaN": '{"x": NaN}\n'}),
    FileKind("prompt override", lambda p, s: ["run", "public_spring_tasting", *TOWN,
                                              "--prompts", str(p.parent), "--out", "o"],
             suffix="", at=_prompt, content={"undefined variable": "{{ no_such_variable.deep }}\n",
                                             "not Jinja": "{% if %}\n"}),
    FileKind("architecture", lambda p, s: ["run", "public_spring_tasting", *TOWN, "--arch",
                                           str(p), "--out", "o"], content={
        "wrong type": "- a\n- b\n",
        "NaN": ARCH.replace("recency_weight: 0.5", "recency_weight: .nan"),
        "infinity": ARCH.replace("recency_weight: 0.5", "recency_weight: .inf"),
        "boolean": ARCH.replace("top_k: 30", "top_k: true")}),
    FileKind("world", world_argv, at=_world, content={
        "wrong type": "- a\n- b\n",
        "NaN": WORLD.replace("tile_meters: 4.0", "tile_meters: .nan"),
        "infinity": WORLD.replace("tile_meters: 4.0", "tile_meters: .inf"),
        "boolean": WORLD.replace("tile_meters: 4.0", "tile_meters: true")}),
    FileKind("a run's events", lambda p, s: ["log", str(s.run)], suffix="",
             special=("over its bound", "FIFO", "device", "directory"),
             at=lambda s: s.run / "events.jsonl"),
    FileKind("a run's prompts", lambda p, s: ["log", str(s.run), "--calls", "1"], suffix="",
             special=("over its bound", "FIFO", "device", "directory"),
             at=lambda s: s.run / "prompts.jsonl"),
]


def _make(path: Path, shape: str, kind: FileKind) -> None:
    if shape == "empty":
        path.write_bytes(b"")
    elif shape == "over its bound":
        with open(path, "wb") as sparse:
            sparse.truncate(HUGE)
    elif shape == "FIFO":
        os.mkfifo(path)
    elif shape == "device":
        path.symlink_to("/dev/zero")
    elif shape == "directory":
        path.mkdir()
    elif shape == "not UTF-8":
        path.write_bytes(b"a: \xff\xfe\n")
    else:
        path.write_text(kind.content[shape], encoding="utf-8")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def walk(root: Path) -> list[Outcome]:
    """Every kind given every shape; the outcomes."""
    from sandbox.app.cli import main

    s = Scratch(root)
    outcomes = []
    with quiet_environment(s):
        s.make_run(main)
        for kind in KINDS:
            path = kind.at(s) if kind.at else root / f"input{kind.suffix}"
            kept = path.read_bytes() if path.is_file() else None
            for shape in (*kind.special, *kind.content):
                _remove(path)
                _make(path, shape, kind)
                before = s.snapshot()
                argv = kind.argv(path, s)
                outcomes.append(run_case(Case(kind.name, shape, shape, argv, COMMAND), main, s,
                                         before))
                _remove(path)
            if kept is not None:
                path.write_bytes(kept)
    return outcomes


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        found = walk(Path(scratch))
    bad = [o for o in found if not o.clean]
    for o in found:
        print(f"{'ok  ' if o.clean else 'FAIL'} {o.case.command}: {o.case.option}: "
              f"{o.why() if not o.clean else (o.lines[-1][:150] if o.lines else '')}")
    print(f"{len(found) - len(bad)} of {len(found)} refused cleanly")
