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


def test_a_benchmark_dialogue_records_its_command_and_is_rerun_not_forked(tmp_path, capsys):
    out = tmp_path / "pp"
    argv = ["pingpong", "--player", "scripted/pingpong", "--interrogator",
            "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "16",
            "--out", str(out)]
    assert main(argv) == 0
    run = next((out / "runs").iterdir())
    config = json.loads((run / "header.json").read_text())["config"]
    assert "command" not in config  # not a `sandbox run`: no town to fork
    assert config["benchmark_command"] == ["sandbox", *argv]
    again = tmp_path / "again"
    assert main(["rerun", str(run), "--out", str(again)]) == 0  # its dialogue and judges
    assert _events(again) == _events(run)
    assert sorted(p.name for p in (again / "judgments").iterdir()) == \
        sorted(p.name for p in (run / "judgments").iterdir())
    capsys.readouterr()
    assert main(["fork", str(run), "--at", "+1m", "--out", str(tmp_path / "fork")]) == 2
    err = capsys.readouterr().err
    assert f"a dialogue of the benchmark run `sandbox {' '.join(argv)}`, which has no town " \
        "to fork" in err


def test_an_episode_of_a_suite_is_rerun_and_forked(tmp_path, capsys):
    suite = tmp_path / "suite"
    assert main(["stss", "--templates", "public_spring_tasting", "--arch", "ga", "--seeds",
                 "1", "--model", "scripted/town", "--embedder", "hashing", "--background",
                 "2", "--same-day", "--start", "15:00", "--episode-max-calls", "5000",
                 "--jobs", "2", "--out", str(suite)]) == 0
    run = suite / "public_spring_tasting" / "ga" / "s1"
    command = json.loads((run / "header.json").read_text())["config"]["command"]
    assert command[:2] == ["sandbox", "run"] and "--episode-max-calls" not in command
    assert command[-7:] == ["public_spring_tasting", "--arch", "ga", "--seed", "1", "--out",
                            str(run)]
    assert "--max-calls" in command  # the suite's cap on each episode is the episode's own
    again = tmp_path / "again"
    assert main(["rerun", str(run), "--cache-only", "--out", str(again)]) == 0
    assert _events(again) == _events(run)  # the same episode, from its answers alone
    fork = tmp_path / "fork"
    assert main(["fork", str(run), "--at", "16:00", "--arch", "ga_tdp", "--out",
                 str(fork)]) == 0
    forks = json.loads((fork / "header.json").read_text())["config"]["forks"]
    assert forks[0]["parent"] == str(run)
    assert _events(fork)[:5] == _events(run)[:5]
