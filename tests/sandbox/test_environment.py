"""SANDBOX_ settings and prompt directories are checked before a command does anything: one
line, exit 2, nothing printed or written first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.app.environment import SETTINGS

ROOT = Path(__file__).resolve().parents[2]


def test_every_sandbox_variable_the_code_reads_is_checked():
    read = set()
    for package in ("sandbox", "agents", "tasks", "evaluation", "worlds", "viewer"):
        for path in (ROOT / package).rglob("*.py"):
            read |= set(re.findall(r"\bSANDBOX_[A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8")))
    assert read - set(SETTINGS) == set()


@pytest.mark.parametrize("name, value, said", [
    ("SANDBOX_LLM_LANES", "0", "from 1 to 64"),
    ("SANDBOX_LLM_LANES", "1000000", "from 1 to 64"),
    ("SANDBOX_LLM_THREADS", "two", "from 1 to 1,024"),
    ("SANDBOX_LLM_PREFIX_MB", "-1", "from 0 to"),
    ("SANDBOX_LLM_WEIGHTS", "q3", "SANDBOX_LLM_WEIGHTS must be"),
    ("SANDBOX_LLM_GRAMMAR", "middle", "SANDBOX_LLM_GRAMMAR must be"),
    ("SANDBOX_LLM_DICTATION", "shout", "SANDBOX_LLM_DICTATION must be"),
    ("SANDBOX_JSON_DIALECT", "yaml", "json_schema, json_object"),
    ("SANDBOX_PROMPTS", "/nonexistent", "not a directory"),
    ("SANDBOX_MODELS", "{tmp}", "not a regular file"),
    ("SANDBOX_MODEL_CACHE", "{file}", "is not a directory"),
    ("SANDBOX_MAX_SIM_HOURS", "-3", "SANDBOX_MAX_SIM_HOURS"),
    ("SANDBOX_DEGRADED_ABOVE", "2", "SANDBOX_DEGRADED_ABOVE"),
])
def test_a_bad_setting_stops_the_command_before_it_starts(name, value, said, tmp_path, capsys,
                                                           monkeypatch):
    a_file = tmp_path / "a_file"
    a_file.write_text("x", encoding="utf-8")
    monkeypatch.setenv(name, value.format(tmp=tmp_path, file=a_file))
    out = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert name in line and said in line
    assert captured.out == ""  # no progress line before the error
    assert not out.exists()


def _prompts(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("name, text, said", [
    ("chat_trun.j2", "hi", "no built-in prompt is named 'chat_trun.j2', so it would be ignored; "
                           "did you mean chat_turn.j2?"),
    ("chat_turn.j2", "one\n{{ persona.name \n", "chat_turn.j2 line 2: unexpected end"),
    ("chat_turn.j2", "one\ntwo {{ nobody_passes_this }}\n",
     "chat_turn.j2 line 2: 'nobody_passes_this' is not given to this prompt"),
    ("chat_turn.j2", "\xff", "chat_turn.j2 line 1: not UTF-8 text (byte 0)"),
])
@pytest.mark.parametrize("how", ["--prompts", "SANDBOX_PROMPTS"])
def test_a_prompt_override_that_would_be_ignored_or_fail_is_refused(name, text, said, how,
                                                                     tmp_path, capsys,
                                                                     monkeypatch):
    folder = _prompts(tmp_path, name, text)
    if text == "\xff":
        (folder / name).write_bytes(b"\xff\xfe")
    argv = ["run", "single_room", "--model", "scripted/default", "--out", str(tmp_path / "r")]
    if how == "--prompts":
        argv += ["--prompts", str(folder)]
    else:
        monkeypatch.setenv("SANDBOX_PROMPTS", str(folder))
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert how in line and said in line
    assert not (tmp_path / "r").exists()


def test_an_override_using_what_its_prompt_is_given_runs(tmp_path, capsys):
    folder = _prompts(tmp_path, "chat_turn.j2",
                      "{{ persona.name }}, say something to {{ partners | length }} "
                      "people{% if first %} first{% endif %} ({{ turns_left }} left).")
    out = tmp_path / "r"
    assert main(["run", "single_room", "--model", "scripted/default", "--prompts", str(folder),
                 "--out", str(out)]) == 0
    assert (out / "events.jsonl").is_file()


TOWN_EPISODE = ["run", "public_spring_tasting", "--model", "scripted/town", "--embedder",
                "hashing", "--background", "2", "--same-day", "--start", "15:00"]


@pytest.mark.parametrize("name", ["plan_daily.j2", "react_talk.j2", "_task.j2"])
def test_an_undefined_variable_in_a_prompt_rendered_by_a_constant_is_refused_before_the_run(
        name, tmp_path, capsys):
    """These prompts are rendered under a name the check cannot read from the call (a
    constant, a parameter): `{{ no_such_variable.deep }}` once failed mid-run with a Jinja
    traceback and left a run directory."""
    folder = _prompts(tmp_path, name, "before\n{{ no_such_variable.deep }}\n")
    out = tmp_path / "r"
    assert main([*TOWN_EPISODE, "--prompts", str(folder), "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"{name} line 2: 'no_such_variable' is not given to this prompt" in line
    assert not out.exists()


def test_every_built_in_prompt_passes_the_check_as_an_override(tmp_path):
    """The check refuses only what would fail: each built-in prompt, copied as an override,
    is accepted (the names it uses are given to it)."""
    from sandbox.app.prompt_dirs import builtin_prompts, check_prompt_dir

    folder = tmp_path / "prompts"
    folder.mkdir()
    for name, path in builtin_prompts().items():
        (folder / name).write_bytes(path.read_bytes())
    check_prompt_dir(folder, "--prompts")


@pytest.mark.parametrize("shape, said", [
    ("empty", "plan_daily.j2: empty, so the model would be sent nothing"),
    ("blank", "plan_daily.j2: empty, so the model would be sent nothing"),
    ("over its bound", "plan_daily.j2: 5,368,709,120 bytes, more than the 1,048,576"),
    ("directory", "plan_daily.j2: a directory, not a file"),
])
def test_a_prompt_override_that_is_empty_huge_or_a_directory_is_refused_before_the_run(
        shape, said, tmp_path, capsys):
    """Found by the file walk: a 5 GiB (sparse) plan_daily.j2 was read whole by the check (a
    hang), a directory of that name was skipped and the built-in prompt used without a word,
    and an empty file ran with an empty prompt."""
    folder = tmp_path / "prompts"
    folder.mkdir()
    path = folder / "plan_daily.j2"
    if shape == "directory":
        path.mkdir()
    elif shape == "over its bound":
        with open(path, "wb") as sparse:
            sparse.truncate(5 * 2**30)
    else:
        path.write_text("" if shape == "empty" else " \n\n", encoding="utf-8")
    out = tmp_path / "r"
    assert main([*TOWN_EPISODE, "--prompts", str(folder), "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert said in line and "--prompts" in line
    assert not out.exists()


def test_a_prompt_override_of_only_a_comment_is_an_empty_prompt_meant(tmp_path, capsys):
    """The way out the refusal of an empty file names: a template of a comment renders empty."""
    folder = _prompts(tmp_path, "chat_system.j2", "{# no system prompt #}")
    out = tmp_path / "r"
    assert main(["run", "single_room", "--model", "scripted/default", "--prompts", str(folder),
                 "--out", str(out)]) == 0
