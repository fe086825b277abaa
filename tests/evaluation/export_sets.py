"""One small run set of every benchmark, made by the real commands on the scripted backends, for
the export's tests: an STSS suite (2 episodes), a language-level set, a PingPong player (two
judges), a SimulBench set, a RefuteBench 2.0 set and a 1.0 file's, and an interview set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS, ScriptedBackend


def stss(root: Path) -> Path:
    out = root / "stss"
    assert main(["stss", "--model", "scripted/town", "--embedder", "hashing", "--templates",
                 "public_spring_tasting", "--seeds", "0..1", "--arch", "ga", "--rules", "both",
                 "--background", "2", "--same-day", "--start", "13:00", "--out", str(out)]) == 0
    return out


def stss_lang(root: Path) -> Path:
    from tasks.stss_lang import save_set
    from tasks.stss_lang.harvest import harvest
    from tasks.stss_lang.scripted import stss_lang_backend
    from tests.tasks.test_stss_lang_harvest import golden

    SCRIPTS["stss-lang"] = stss_lang_backend  # build_all puts SCRIPTS back as it was
    scenarios = save_set(harvest([golden(root / "golden")]), root / "set.json")
    out = root / "lang"
    assert main(["stss-lang", str(scenarios), "--arch", "ga", "--model", "scripted/stss-lang",
                 "--judge", "scripted/stss-lang", "--out", str(out)]) == 0
    return out / "ga"


PINGPONG = {"en": {
    "characters": [
        {"char_name": "Makise", "system_prompt": "A sharp young scientist.",
         "summary": "A scientist."},
        {"char_name": "Bob", "system_prompt": "A calm plumber.", "summary": "A plumber."}],
    "situations": [{"text": "Chat about the weather.", "num_turns": 2},
                   {"text": "Ask for advice.", "num_turns": 3}]}}


def pingpong(root: Path) -> Path:
    settings = root / "settings.json"
    settings.write_text(json.dumps(PINGPONG), encoding="utf-8")
    out = root / "pp"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--judge",
                 "scripted/pingpong-strict", "--settings", str(settings), "--out",
                 str(out)]) == 0
    return out


def simulbench(root: Path) -> Path:
    from tests.evaluation.test_simulbench_board_accounting import TASKS, script

    tasks = root / "simulbench_tasks.jsonl"
    tasks.write_text("\n".join(json.dumps(t) for t in TASKS) + "\n")
    rows = [script(0, TASKS[0], "gpt-3.5-turbo.json", 2),
            script(1, TASKS[0], "gpt-3.5-turbo.json", 3),
            script(2, TASKS[1], "gpt-3.5-turbo-1.json", 1),
            script(3, TASKS[0], "gpt-3.5-turbo-1.json", 0),
            script(4, TASKS[1], "gpt-3.5-turbo.json", 0)]
    scripts = root / "simulbench_all.jsonl"
    scripts.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = root / "sb"
    assert main(["simulbench", "--scripts", str(scripts), "--tasks", str(tasks), "--simulator",
                 "scripted/simulbench", "--judge", "scripted/simulbench", "--out",
                 str(out)]) == 0
    return out


def refutebench(root: Path) -> Path:
    out = root / "rb"
    r = "scripted/refutebench"
    assert main(["refutebench", "--model", r, "--refuter", r, "--judge", r, "--tasks", "mt",
                 "--every", "9", "--out", str(out)]) == 0
    return out


def refutebench_v1(root: Path) -> Path:
    from tests.evaluation.test_refutebench_board_accounting import ANSWER_TAG, line, translator

    SCRIPTS["translator"] = lambda: ScriptedBackend({ANSWER_TAG: translator},
                                                    model_id="scripted/translator")
    items = root / "en-zh.memory.NC-1.jsonl"
    items.write_text("\n".join([line("coffee", "It was a fine coffee maker for a while."),
                                line("tea", "It was a fine coffee maker.")]) + "\n",
                     encoding="utf-8")
    out = root / "rb1"
    assert main(["refutebench", "--items", str(items), "--model", "scripted/translator",
                 "--out", str(out)]) == 0
    return out


def interview(root: Path) -> Path:
    town = root / "town.yaml"
    town.write_text("world: town\narchitecture: ga\nstart_time: 2024-02-13T06:00:00\n"
                    "hours: 1\n")
    run = root / "day"
    assert main(["run", "town_day", "--config", str(town), "--model", "scripted/town",
                 "--embedder", "hashing", "--residents", "2", "--hours", "1", "--seed", "0",
                 "--out", str(run), "--quiet"]) == 0
    out = root / "set"
    assert main(["interview-set", str(run), "--model", "scripted/town", "--judge",
                 "scripted/town", "--out", str(out)]) == 0
    return out


BUILDERS = {"stss": stss, "stss-lang": stss_lang, "pingpong": pingpong,
            "simulbench": simulbench, "refutebench": refutebench,
            "refutebench-1.0": refutebench_v1, "interview": interview}


def build_all(root: Path) -> dict[str, Path]:
    """Every benchmark's run set under `root`, by name; the scripted backends registered for
    them are gone again after (other tests list every known one)."""
    root.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        for name in ("stss-lang", "translator"):
            if name in SCRIPTS:
                patch.setitem(SCRIPTS, name, SCRIPTS[name])
            else:
                patch.setitem(SCRIPTS, name, None)
                patch.delitem(SCRIPTS, name)
        return {name: build(root) for name, build in BUILDERS.items()}
