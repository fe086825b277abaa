"""Hand damage to copies of finished benchmark runs, the mishaps a board must count and name:
a run directory deleted, result.json removed, header.json cut, events cut after judging, a
judgment file made unreadable or edited."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path


def runs(bench_dir: Path) -> list[Path]:
    """The run directories of a benchmark directory, in name order."""
    return sorted(p for p in (bench_dir / "runs").iterdir() if p.is_dir())


def judgment_files(run_dir: Path) -> list[Path]:
    return sorted((run_dir / "judgments").glob("*.json"))


def delete_run(run_dir: Path) -> None:
    shutil.rmtree(run_dir)


def remove_result(run_dir: Path) -> None:
    (run_dir / "result.json").unlink()


def cut_header(run_dir: Path) -> None:
    path = run_dir / "header.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")


def cut_events(run_dir: Path, keep: Callable[[dict], bool]) -> int:
    """Keep the events up to the first one `keep` refuses (the rest cut); how many were cut."""
    path = run_dir / "events.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = []
    for line in lines:
        if not keep(json.loads(line)):
            break
        kept.append(line)
    path.write_text("".join(kept), encoding="utf-8")
    return len(lines) - len(kept)


def write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def edit_judgment(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def read_board(command: str, out: Path, capsys, *extra: str) -> tuple[str, dict]:
    """`sandbox COMMAND OUT --json F`: (what it printed, the board as JSON)."""
    from sandbox.app.cli import main

    target = out.parent / "board.json"
    assert main([command, str(out), "--json", str(target), *extra]) == 0
    return capsys.readouterr().out, json.loads(target.read_text())
