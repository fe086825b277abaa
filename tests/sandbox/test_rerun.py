"""`sandbox rerun RUN`: the run's own recorded command again, from its cache."""

from __future__ import annotations

import json

from sandbox.app.cli import main


def _events(run) -> list[dict]:
    rows = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if k != "wall_time_s"} for row in rows]


def test_a_run_records_its_command_and_reruns_from_its_cache_elsewhere(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--seed", "4",
                 "--turns", "3", "--quiet", "--out", str(run)]) == 0
    header = json.loads((run / "header.json").read_text())
    assert header["config"]["command"] == ["sandbox", "run", "single_room", "--model",
                                           "scripted/default", "--seed", "4", "--turns", "3",
                                           "--quiet", "--out", str(run)]
    again = tmp_path / "again"
    assert main(["rerun", str(run), "--cache-only", "--out", str(again)]) == 0
    assert "sandbox run single_room --model scripted/default --seed 4 --turns 3 --quiet " \
        f"--out {again} --overwrite --cache-only" in capsys.readouterr().out
    assert _events(again) == _events(run)  # every option kept: same seed, same turns
    assert json.loads((again / "header.json").read_text())["seed"] == 4
    # into RUN itself: replayed over it from its own cache
    assert main(["rerun", str(run), "--cache-only"]) == 0
    assert _events(run) == _events(again)


def test_a_run_without_a_recorded_command_says_what_to_do(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--out",
                 str(run)]) == 0
    header = json.loads((run / "header.json").read_text())
    del header["config"]["command"]
    (run / "header.json").write_text(json.dumps(header))
    capsys.readouterr()
    assert main(["rerun", str(run)]) == 2
    assert "its header records no command" in capsys.readouterr().err


def test_benchmark_runs_record_no_command(tmp_path):
    out = tmp_path / "pp"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "16",
                 "--out", str(out)]) == 0
    run = next((out / "runs").iterdir())
    assert "command" not in json.loads((run / "header.json").read_text())["config"]
