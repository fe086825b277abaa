"""`sandbox log DIR` of a directory that holds run directories below it (a suite's, a
benchmark's, any folder of runs): one line per run, whatever wrote them."""

from __future__ import annotations

import json

from sandbox.app.cli import main


def test_a_directory_of_runs_is_summarised_one_line_per_run(tmp_path, capsys):
    for name in ("one", "two"):
        assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--out",
                     str(tmp_path / "runs" / "deep" / name)]) == 0
    (tmp_path / "runs" / "deep" / "two" / "result.json").unlink()  # as if killed
    capsys.readouterr()
    assert main(["log", str(tmp_path / "runs")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("deep/one: completed, ") and " events, " in lines[0]
    assert lines[1].startswith("deep/two: unfinished (no result.json), ")
    assert lines[2] == (f"2 runs in {tmp_path / 'runs'}: 1 completed, 1 unfinished (no "
                        f"result.json); one run in full: sandbox log "
                        f"{tmp_path / 'runs' / 'deep' / 'one'}")
    assert main(["log", str(tmp_path / "runs"), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in runs] == ["completed", "unfinished (no result.json)"]
    assert runs[0]["calls"] > 0 and runs[1]["events"] > 0  # counted from its logs


def test_a_directory_without_runs_is_still_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["log", str(tmp_path / "empty")]) == 2
    assert "is not a run directory: no header.json" in capsys.readouterr().err
