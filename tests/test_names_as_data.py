"""Names are data (issue 19): a persona, character, place or task name with path separators,
`..`, control characters, very long or non-Latin text never writes outside the output
directory, never breaks a file name, and never breaks `sandbox log` or the viewer's frames."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
import yaml

from sandbox.app.cli import main

EVIL = ["../../escape", "a/b\\c", "..", "Ann\x1b[31mLee\x07", "Zoë " + "ẞ" * 300, "名前テスト",
        "\u202eevil.exe", "-rf", "con", "x" * 5000]


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def check_names(out: Path) -> None:
    """Every file is inside `out` with a name a file system keeps: at most 255 bytes, no
    separators or control characters."""
    for path in files_under(out):
        assert path.resolve().is_relative_to(out.resolve())
        assert len(path.name.encode("utf-8")) <= 255, path.name[:80]
        assert not any(unicodedata.category(c).startswith("C") for c in path.name), path.name


def check_viewer(run_dir: Path, tmp: Path) -> None:
    frames = tmp / "frames"
    assert main(["replay", str(run_dir), "--export", str(frames)]) == 0
    assert list(frames.glob("*.png"))
    assert main(["log", str(run_dir)]) == 0


@pytest.fixture
def sandboxed(tmp_path, monkeypatch):
    """A working directory whose every file is watched: nothing may appear outside `out`."""
    work = tmp_path / "work"
    (work / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(work / "deep" / "er")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    return work


def test_persona_names_in_a_single_room(sandboxed, capsys):
    config = yaml.safe_load((Path(__file__).parents[1] / "tasks/scenarios/single_room.yaml")
                            .read_text(encoding="utf-8"))
    config["personas"][0]["name"], config["personas"][1]["name"] = EVIL[3], EVIL[4]
    config["situation"] = " ".join(EVIL)
    path = sandboxed / "room.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    out = sandboxed / "out"
    before = files_under(sandboxed)
    assert main(["run", "single_room", "--config", str(path), "--model", "scripted/default",
                 "--out", str(out), "--turns", "4", "--quiet"]) == 0
    assert files_under(sandboxed) - before <= files_under(out) | {out}
    check_names(out)
    check_viewer(out, sandboxed)
    assert EVIL[4] in (out / "events.jsonl").read_text(encoding="utf-8")  # kept as given


def test_character_and_situation_names_in_pingpong(sandboxed, capsys):
    settings = {"en": {
        "characters": [{"char_name": name, "system_prompt": f"You are {name}.",
                        "summary": f"Someone called {name}."} for name in EVIL[:6]],
        "situations": [{"text": name, "num_turns": 1} for name in EVIL[6:]]}}
    path = sandboxed / "settings.json"
    path.write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    out = sandboxed / "out"
    before = files_under(sandboxed)
    assert main(["pingpong", "--settings", str(path), "--player", "scripted/pingpong",
                 "--interrogator", "scripted/pingpong", "--judge", "scripted/pingpong",
                 "--every", "5", "--out", str(out)]) == 0
    assert files_under(sandboxed) - before <= files_under(out) | {out}
    check_names(out)
    runs = sorted((out / "runs").iterdir())
    assert runs
    check_viewer(runs[0], sandboxed)
    assert main(["pingpong-board", str(out)]) == 0


def test_public_stss_task_names_become_safe_template_files(sandboxed, capsys):
    task = {"goal": "Party", "FPG": "Maya Lindqvist wants a party at Copper Kettle Cafe.",
            "Description": "Have 2 people come.", "task_type": "Party",
            "performer": "Maya Lindqvist",
            "task": {"target": [], "target_num": 2, "goal": [{
                "keyword": "party", "alter_kwd": [], "start_time": "2023-02-14 19:00",
                "duration_in_minutes": 120, "location": "Copper Kettle Cafe",
                "required_character": []}]}}
    tasks = [{**task, "env_name": name} for name in EVIL]
    path = sandboxed / "tasks.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    out = sandboxed / "out"
    out.mkdir()  # kept when the model fails (a new --out is removed), so the templates stay
    before = files_under(sandboxed)
    main(["stss", "--templates", str(path), "--out", str(out), "--model", "scripted/nope"])
    assert files_under(sandboxed) - before <= files_under(out) | {out}
    check_names(out)
    written = sorted((out / "templates").glob("*.yaml"))
    assert len(written) == len(EVIL)  # one file each: none overwrote another
    assert not (sandboxed / "escape.yaml").exists() and not os.path.exists("../../escape.yaml")
