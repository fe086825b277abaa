"""The `sandbox` command as a user meets it: bad input fails in one line with exit code 2."""

import socket
import tempfile

import pytest

from sandbox.app.cli import main


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("args, message", [
    (["run", "single_room", "--model", "gpt4"], "unknown model 'gpt4'"),
    (["run", "single_room", "--model", "scripted/nope"], "unknown scripted backend 'nope'"),
    (["run", "single_room", "--model", "local/llama-70b"], "unknown local model 'llama-70b'"),
    (["run", "single_room", "--model", "scripted/twn"], "did you mean scripted/town?"),
    (["run", "single_room", "--model", "locl/smollm2-135m"], "did you mean local/smollm2-135m?"),
    (["run", "single_room", "--model", "local/smolm2-135m"], "did you mean local/smollm2-135m?"),
    (["run", "nowhere_room", "--model", "scripted/default"], "unknown scenario 'nowhere_room'"),
    (["run", "single_room", "--model", "openai/gpt-4o-mini"], "needs OPENAI_API_KEY"),
    (["run", "single_room", "--model", "openai/any", "--base-url",
      "http://127.0.0.1:{port}/v1"], "cannot reach the LLM endpoint"),
    (["log", "{tmp}/not-a-run"], "no such directory"),
])
def test_bad_input_is_one_line_and_exit_2_before_anything_runs(args, message, tmp_path,
                                                                capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = tmp_path / "run"
    args = [a.format(port=closed_port(), tmp=tmp_path) for a in args]
    if args[0] == "run":
        args += ["--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_bad_scenario_file_names_file_and_field(tmp_path, capsys):
    bad = tmp_path / "room.yaml"
    bad.write_text("personas:\n  - name: Ana\n    description: ''\n  - name: Bo\n"
                   "    description: a baker\n")
    assert main(["run", "single_room", "--config", str(bad), "--model", "scripted/default",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "personas.0.description" in err


def test_run_then_log_then_refuse_to_overwrite(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["run", "single_room", "--model", "scripted/default", "--seed", "0",
                 "--out", str(out), "--turns", "4"]) == 0
    shown = capsys.readouterr().out
    assert "Ines Okafor" in shown and "chat.turn" in shown
    assert main(["log", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "utterance" in summary and "status=completed" in summary
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(out)]) == 2
    assert "already holds a run" in capsys.readouterr().err


def test_cache_only_replay_from_the_command_line(tmp_path, capsys):
    first = tmp_path / "first"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(first),
                 "--turns", "3", "--quiet"]) == 0
    again = tmp_path / "again"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(again),
                 "--turns", "3", "--quiet", "--cache", str(first / "llm_cache.jsonl"),
                 "--cache-only"]) == 0
    assert (first / "events.jsonl").read_text() == (again / "events.jsonl").read_text()
    capsys.readouterr()
    miss = tmp_path / "miss"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(miss),
                 "--turns", "3", "--seed", "9", "--cache", str(first / "llm_cache.jsonl"),
                 "--cache-only"]) == 1
    assert "no cached answer for call tag='chat.turn'" in capsys.readouterr().out.replace(
        "\n", " ")


@pytest.mark.parametrize("seed", ["-1", "x", "1.5"])
def test_a_bad_seed_is_refused_at_parsing_before_any_run_directory(seed, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--seed", seed,
                 "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()  # one line, not the usage
    assert "argument --seed" in line and line.endswith("(see: sandbox run --help)")
    assert not out.exists()


@pytest.mark.parametrize("argv", [
    ["stss", "--seeds=-1..2"], ["pingpong", "--seed", "-3"], ["pingpong-board", "--seed", "-1"]])
def test_every_command_refuses_negative_seeds_at_parsing(argv, tmp_path, capsys):
    out = tmp_path / "out"
    assert main([*argv, *(["--out", str(out)] if argv[0] != "pingpong-board"
                          else [str(out)])]) == 2
    assert "from 0 to 4,294,967,295" in capsys.readouterr().err.strip().splitlines()[-1]
    assert not out.exists()


def test_replay_gif_alone_writes_the_gif_without_a_window(tmp_path, capsys, monkeypatch):
    import viewer.app

    def no_window(*args, **kwargs):
        raise AssertionError("--gif must not open a window")

    monkeypatch.setattr(viewer.app, "run_window", no_window)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the frames go for a while
    out = tmp_path / "r"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(out),
                 "--turns", "2", "--quiet"]) == 0
    capsys.readouterr()
    gif = tmp_path / "r.gif"
    assert main(["replay", str(out), "--gif", str(gif), "--size", "640x400"]) == 0
    assert gif.read_bytes()[:6] == b"GIF89a"
    assert "frames" in capsys.readouterr().out
    assert list(scratch.iterdir()) == []  # the frames are cleaned up


def test_replay_help_says_what_shift_arrow_does():
    from sandbox.app.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    epilog = sub.choices["replay"].epilog
    assert "1 minute" not in epilog and "inspected agent" in epilog


def test_piped_output_is_wide_enough_for_the_summary_tables(monkeypatch):
    """Piped into a log, rich would assume 80 columns and cut agent names ('Okonk…')."""
    from sandbox import terminal

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    assert terminal.console().width == terminal.PIPED_WIDTH
    monkeypatch.setenv("COLUMNS", "90")
    assert terminal.console().width == 90


@pytest.mark.parametrize("argv, said", [
    (["run", "single_room", "--sead", "1"],
     "sandbox run: error: unrecognized arguments: --sead 1; --sead: did you mean --seed"),
    (["lst", "benchmarks"], "did you mean list?"),
    (["list", "modles"], "sandbox list: error: argument what: invalid choice: 'modles'"),
    (["pingpong", "--playr", "x", "--out", "o"], "--playr: did you mean --player"),
])
def test_a_misspelt_flag_command_or_choice_is_one_line_with_the_nearest_names(argv, said,
                                                                              capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_log_events_of_an_unknown_kind_is_an_error_naming_the_nearest(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--out",
                 str(out)]) == 0
    capsys.readouterr()
    assert main(["log", str(out), "--events", "utterence"]) == 2
    assert "--events utterence: no such event kind; did you mean utterance?" in \
        capsys.readouterr().err
    # a kind that exists but not in this run: said, not a silent empty answer
    assert main(["log", str(out), "--events", "task_assigned", "--events", "utterance"]) == 0
    captured = capsys.readouterr()
    assert f"no task_assigned event in {out}" in captured.err
    assert " utterance: " in captured.out


def test_a_role_left_to_its_default_model_is_said_to_be(tmp_path, capsys, monkeypatch):
    # the default model is the embedded one; a scripted double stands in for it here
    monkeypatch.setattr("sandbox.app.commands.benchmark.EMBEDDED", "scripted/pingpong")
    assert main(["pingpong", "--player", "scripted/pingpong", "--judge", "scripted/pingpong",
                 "--every", "64", "--out", str(tmp_path / "pp")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "player scripted/pingpong, interrogator scripted/pingpong (default), judges " \
        "scripted/pingpong, into" in printed


def test_a_run_that_replays_its_cache_says_so_and_how_to_run_afresh(tmp_path, capsys):
    out = tmp_path / "demo"
    argv = ["run", "single_room", "--model", "scripted/default", "--seed", "0", "--out",
            str(out), "--turns", "3", "--quiet", "--overwrite"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "replaying:" not in first and "replayed from" not in first
    assert main(argv) == 0  # the same run directory again, as a second `make demo` is
    again = " ".join(capsys.readouterr().out.split())  # (rich wraps long lines)
    cache = out / "llm_cache.jsonl"
    held = sum(1 for _ in cache.open())
    assert f"replaying: {cache} holds {held} answers" in again and "--no-cache" in again
    assert f"{held} of {held} calls replayed from the cache" in again
    assert main([*argv, "--no-cache"]) == 0
    shown = capsys.readouterr().out
    assert "replaying:" not in shown and "replayed from" not in shown
