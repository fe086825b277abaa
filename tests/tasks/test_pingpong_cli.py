"""`sandbox pingpong` and `sandbox pingpong-board` as a user runs them (scripted models)."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main

SETTINGS = {"en": {
    "version": 2,
    "characters": [
        {"char_name": "Makise", "system_prompt": "A sharp young scientist.", "summary": "A "
         "scientist."},
        {"char_name": "Bob", "system_prompt": "A calm plumber.", "summary": "A plumber."}],
    "situations": [{"text": "Chat about the weather.", "num_turns": 2},
                   {"text": "Ask for advice.", "num_turns": 3}]}}


def pingpong(tmp_path, player, out, *extra):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
    return main(["pingpong", "--player", player, "--interrogator", "scripted/pingpong",
                 "--judge", "scripted/pingpong", "--judge", "scripted/pingpong-strict",
                 "--settings", str(settings), "--out", str(out), *extra])


def test_two_players_side_by_side_with_intervals(tmp_path, capsys):
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a") == 0
    assert pingpong(tmp_path, "scripted/pingpong-verbose", tmp_path / "b",
                    "--label", "verbose") == 0
    out = capsys.readouterr().out
    assert "conversations run 4, skipped 0; judgments made 8" in out
    assert "ignored keys this benchmark does not use: en.version" in out

    board = tmp_path / "board.json"
    assert main(["pingpong-board", str(tmp_path / "a"), str(tmp_path / "b"),
                 "--json", str(board), "--markdown", str(tmp_path / "board.md")]) == 0
    table = capsys.readouterr().out
    assert "| 1 | scripted/pingpong |" in table and "| 2 | verbose |" in table
    rows = json.loads(board.read_text())["rows"]
    assert [r["label"] for r in rows] == ["scripted/pingpong", "verbose"]
    assert rows[0]["length_factor"] == 1.0 and rows[1]["length_factor"] < 1.0
    # 4 conversations each: too few for an interval (kit.MIN_UNITS), and the board says why
    assert all(r["ci"] is None and r["scored"] == 4 for r in rows)
    assert (tmp_path / "board.md").read_text() == table


def test_a_second_run_resumes_and_quick_runs_subsample(tmp_path, capsys):
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a", "--every", "2") == 0
    assert "conversations run 2" in capsys.readouterr().out
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a", "--every", "2") == 0
    assert "conversations run 0, skipped 2; judgments made 0" in capsys.readouterr().out


def test_a_quick_run_grows_into_a_full_one_in_the_same_directory(tmp_path, capsys):
    out = tmp_path / "a"
    assert pingpong(tmp_path, "scripted/pingpong", out, "--every", "2") == 0
    capsys.readouterr()
    assert pingpong(tmp_path, "scripted/pingpong", out) == 0
    assert "conversations run 2, skipped 2" in capsys.readouterr().out
    manifest = json.loads((out / "pingpong.json").read_text())
    assert manifest["every"] == 1 and len(manifest["selected"]) == 4


def test_another_selection_into_the_same_directory_is_refused_in_one_line(tmp_path, capsys):
    """Pair directories are keyed by character and situation only: another settings file,
    language or player in the same --out would mix two configurations on the board."""
    out = tmp_path / "a"
    assert pingpong(tmp_path, "scripted/pingpong", out, "--every", "2") == 0
    capsys.readouterr()
    before = json.loads((out / "pingpong.json").read_text())

    assert main(["pingpong", "--player", "scripted/pingpong-verbose", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--settings",
                 str(tmp_path / "settings.json"), "--every", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds a benchmark with player 'scripted/pingpong'" in err
    assert len(err.splitlines()) == 1

    other = tmp_path / "other.json"  # the same names, other cards: the same pair directories
    changed = json.loads(json.dumps(SETTINGS))
    changed["en"]["characters"][0]["system_prompt"] = "A gruff old sailor."
    other.write_text(json.dumps(changed), encoding="utf-8")
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--settings", str(other),
                 "--every", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"holds a benchmark with settings {str(tmp_path / 'settings.json')!r}, not " \
        f"{str(other)!r}" in err and len(err.splitlines()) == 1

    other.replace(tmp_path / "settings.json")  # the same path, edited
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--settings",
                 str(tmp_path / "settings.json"), "--every", "2", "--out", str(out)]) == 2
    assert "changed since" in capsys.readouterr().err

    assert json.loads((out / "pingpong.json").read_text()) == before  # nothing was touched
    assert len(list((out / "runs").iterdir())) == 2


def test_bad_input_fails_in_one_line_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"en": {"characters": [{"system_prompt": "x"}],
                                      "situations": [{"text": "y"}]}}))
    assert main(["pingpong", "--player", "scripted/pingpong", "--settings", str(bad),
                 "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.json at en.characters.0.char_name" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x").exists()

    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a", "--every", "4") == 0
    capsys.readouterr()
    assert pingpong(tmp_path, "scripted/pingpong-verbose", tmp_path / "a") == 2
    assert "holds a benchmark with player 'scripted/pingpong'" in capsys.readouterr().err
    assert main(["pingpong-board", str(tmp_path)]) == 2
    assert "not a PingPong benchmark directory" in capsys.readouterr().err
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "c",
                    "--player-top-p", "0") == 2
    assert "--player-top-p: '0': out of range; give a number more than 0 and at most 1" \
        in capsys.readouterr().err


def test_sandbox_log_of_a_pingpong_conversation_lists_its_judge_calls(tmp_path, capsys):
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a", "--every", "4") == 0
    run_dir = next((tmp_path / "a" / "runs").iterdir())
    capsys.readouterr()
    assert main(["log", str(run_dir), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert sorted(j["model"] for j in summary["judgments"]) == [
        "scripted/pingpong", "scripted/pingpong-strict"]
    assert all(j["status"] == "ok" and j["prompt_tokens"] > 0 for j in summary["judgments"])
    # every call of every role is accounted in calls.jsonl, the judges' too
    assert summary["llm_calls_by_purpose"]["pingpong.judge"]["calls"] == 2
    assert main(["log", str(run_dir)]) == 0
    assert "judge calls (after the run)" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["pingpong", "pingpong-board"])
def test_help_shows_plain_percent_signs(command, capsys):
    # argparse %-formats help strings but prints descriptions as written: '%%' there shows.
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "%%" not in text and "%(" not in text
    if command == "pingpong-board":
        assert "bootstrap 95% CI" in text


def test_an_interrupted_benchmark_says_how_to_resume(tmp_path, capsys, monkeypatch):
    from agents.roleplay import PLAYER_TAG
    from sandbox.llm import SCRIPTS, ScriptedBackend

    def ctrl_c(request):
        raise KeyboardInterrupt

    monkeypatch.setitem(SCRIPTS, "ctrl-c", lambda: ScriptedBackend({PLAYER_TAG: ctrl_c},
                                                                    model_id="scripted/ctrl-c"))
    assert pingpong(tmp_path, "scripted/ctrl-c", tmp_path / "a") == 130
    err = capsys.readouterr().err
    assert "interrupted; what was written is kept; run the same command again to resume" in err
    assert (tmp_path / "a" / "pingpong.json").is_file()


def test_every_ignored_key_is_listed_in_one_line(tmp_path, capsys):
    settings = json.loads(json.dumps(SETTINGS))
    block = settings["en"]
    block.update(interrogator_user_prompt_path="a.jinja", judge_user_prompt_path="b.jinja",
                 character_prompt_path="c.jinja")
    for i, card in enumerate(block["characters"]):
        card["tags_v1"] = [f"t{i}"]
    block["situations"][1]["mood"] = "calm"
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings), encoding="utf-8")
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--settings", str(path),
                 "--every", "4", "--out", str(tmp_path / "a")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "ignored keys" in x)
    assert line == ("ignored keys this benchmark does not use: en.version, "
                    "en.interrogator_user_prompt_path, en.judge_user_prompt_path, "
                    "en.character_prompt_path, en.characters.[0-1].tags_v1, "
                    "en.situations.1.mood")


def test_a_v1_settings_file_is_refused_naming_the_protocols_difference(tmp_path, capsys):
    v1 = {"ru": {"version": 1, "user_prompt_path": "templates/v1/user.jinja",
                 "system_prompt_path": "templates/system.jinja",
                 "character_prompt_path": "templates/ru_character.jinja",
                 "characters": [{"char_name": "Makise", "system_prompt": "A scientist."}],
                 "situations": [{"text": "Chat.", "num_turns": 5}]}}
    path = tmp_path / "settings_v1.json"
    path.write_text(json.dumps(v1), encoding="utf-8")
    assert main(["pingpong", "--player", "scripted/pingpong", "--settings", str(path),
                 "--language", "ru", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "settings_v1.json at ru.version" in err
    assert "the interrogator is also the judge, sees the whole character card and scores " \
        "each turn 1-10" in err and "separate judges score 1-5" in err
    assert not (tmp_path / "x").exists()


def test_the_reference_arithmetic_shows_the_public_boards_other_weightings(tmp_path, capsys):
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a") == 0
    capsys.readouterr()
    target = tmp_path / "b.json"
    assert main(["pingpong-board", str(tmp_path / "a"), "--arithmetic", "reference", "--json",
                 str(target)]) == 0
    printed = capsys.readouterr().out
    assert "| Player | character 1, entertain 1, fluency 1 | character 1, entertain 2, " \
        "fluency 1 | character 2, entertain 1, fluency 1 | character 1, entertain 1, " \
        "fluency 2 |" in printed
    row = json.loads(target.read_text())["rows"][0]
    crit, factor = row["criteria"], row["length_factor"]
    for name, (w_ic, w_ent, w_flu) in {
            "character 1, entertain 2, fluency 1": (0.25, 0.5, 0.25),
            "character 2, entertain 1, fluency 1": (0.5, 0.25, 0.25),
            "character 1, entertain 1, fluency 2": (0.25, 0.25, 0.5)}.items():
        # every conversation is scored, so the mean of weighted finals is the weighted means
        want = (w_ic * crit["in_character"] + w_ent * crit["entertaining"]
                + w_flu * crit["fluency"]) * factor
        assert row["weightings"][name] == pytest.approx(want)
    assert row["weightings"]["character 1, entertain 1, fluency 1"] == pytest.approx(
        row["score"])
    assert main(["pingpong-board", str(tmp_path / "a")]) == 0
    assert "entertain 2" not in capsys.readouterr().out  # the paper's arithmetic: not shown


def test_terminal_control_characters_never_reach_the_terminal(tmp_path, capsys):
    evil = "evil\x1b[31mred\x07"
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "a", "--every", "16",
                    "--label", evil) == 2
    assert "a label cannot hold control characters" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
    # A directory labelled so before labels were checked: the board shows the escapes.
    assert pingpong(tmp_path, "scripted/pingpong", tmp_path / "b", "--every", "16") == 0
    manifest = tmp_path / "b" / "pingpong.json"
    manifest.write_text(manifest.read_text().replace('"label": "scripted/pingpong"',
                                                     '"label": "evil\\u001b[31mred\\u0007"'))
    capsys.readouterr()
    assert main(["pingpong-board", str(tmp_path / "b")]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed
    assert "evil\\x1b[31mred\\x07" in printed
