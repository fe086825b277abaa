"""`sandbox refutebench` and `sandbox refutebench-board` as a user runs them (scripted models)."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main

PNG = b"\x89PNG\r\n\x1a\n"


def refutebench(out, *extra, model="scripted/refutebench"):
    return main(["refutebench", "--model", model, "--refuter", "scripted/refutebench",
                 "--judge", "scripted/refutebench", "--every", "9", "--out", str(out), *extra])


def test_both_settings_give_the_four_tables_curves_and_a_board(tmp_path, capsys):
    assert refutebench(tmp_path / "t") == 0
    printed = capsys.readouterr().out
    assert "dialogues run 9, skipped 0; judgments made 81 (0 fell back)" in printed
    # 3 dialogues: means with n, no interval (fewer than kit.MIN_UNITS)
    assert "| scripted/refutebench | 5.00 n=3 |" in printed  # Table 4
    assert refutebench(tmp_path / "p", "--setting", "persistent") == 0
    assert refutebench(tmp_path / "s", "--label", "stubborn",
                       model="scripted/refutebench-stubborn") == 0
    capsys.readouterr()
    assert main(["refutebench-board", str(tmp_path / "t"), str(tmp_path / "p"),
                 str(tmp_path / "s"), "--curves", str(tmp_path / "curves.png"), "--plot",
                 str(tmp_path / "board.png"), "--json", str(tmp_path / "b.json")]) == 0
    table = capsys.readouterr().out
    for title in ("Table 4", "Table 5", "Table 6", "Table 7"):
        assert title in table
    assert "| scripted/refutebench | 5.00 n=3 | 2.00 n=3 | 3.00" \
        in table  # Table 7: the scripted model forgets after unrelated requests
    assert "| stubborn | 2.00 n=3 |" in table  # it never revises
    assert (tmp_path / "curves.png").read_bytes()[:8] == PNG
    assert (tmp_path / "board.png").read_bytes()[:8] == PNG
    rows = json.loads((tmp_path / "b.json").read_text())["rows"]
    assert [r["label"] for r in rows] == ["scripted/refutebench", "stubborn"]
    assert rows[0]["dialogues"] == 9 + 18
    assert rows[0]["cells"]["mt"]["c_delta"]["mean"] == 3.0


def test_the_json_judge_format_gives_the_same_tables(tmp_path, capsys):
    assert refutebench(tmp_path / "j", "--judge-format", "json") == 0
    printed = capsys.readouterr().out
    assert "judgments made 81 (0 fell back)" in printed
    assert "| scripted/refutebench | 5.00 n=3 |" in printed  # as in the text one
    manifest = json.loads((tmp_path / "j" / "refutebench.json").read_text())
    assert manifest["judge_options"] == {"judge_format": "json"}
    # another format in the same directory asks every judge again, or stops
    assert refutebench(tmp_path / "j") == 2
    assert "--rejudge" in capsys.readouterr().err
    assert refutebench(tmp_path / "j", "--rejudge") == 0
    assert "judgments made 81" in capsys.readouterr().out


def test_a_second_run_resumes_and_rejudge_asks_again(tmp_path, capsys):
    assert refutebench(tmp_path / "t", "--tasks", "summ") == 0
    capsys.readouterr()
    assert refutebench(tmp_path / "t", "--tasks", "summ") == 0
    assert "dialogues run 0, skipped 3; judgments made 0" in capsys.readouterr().out
    assert refutebench(tmp_path / "t", "--tasks", "summ", "--rejudge") == 0
    assert "dialogues run 0, skipped 3; judgments made 27" in capsys.readouterr().out


def _exit_2(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def test_an_unknown_task_family_is_one_line_exit_2(tmp_path, capsys):
    err = _exit_2(capsys, "refutebench", "--tasks", "mt,qa", "--out", str(tmp_path / "x"))
    assert "--tasks" in err and "'qa'" in err
    err = _exit_2(capsys, "refutebench", "--setting", "forever", "--out", str(tmp_path / "x"))
    assert "--setting" in err
    err = _exit_2(capsys, "refutebench", "--setting", "persistent", "--distractors", "0,5",
                  "--out", str(tmp_path / "x"))
    assert "--distractors" in err


@pytest.mark.parametrize("body, where", [
    ("version: 1\ntemplates: {mt: 'x {text}', summ: '{text}', article: '{text}', "
     "counter: '{text}', story: '{text}'}\nseeds: [{id: a, family: mt, text: hi}]\n"
     "distractors: [q]\n", "templates"),
    ("version: 1\ntemplates: {mt: 'x {text} {language}', summ: '{text}', article: '{text}', "
     "counter: '{text}', story: '{text}'}\nseeds: [{id: a, family: poetry, text: hi}]\n"
     "distractors: [q]\n", "seeds.0.family"),
    ("version: 1\ntemplates: {mt: 'x {text} {language}', summ: '{text}', article: '{text}', "
     "counter: '{text}', story: '{text}'}\nseeds: [{id: a, family: summ, text: too short}]\n"
     "distractors: [q]\n", "seeds.0"),
    ("version: 1\nversion: 1\n", "version"),
])
def test_a_malformed_item_file_is_one_line_exit_2(tmp_path, capsys, body, where):
    path = tmp_path / "items.yaml"
    path.write_text(body, encoding="utf-8")
    err = _exit_2(capsys, "refutebench", "--items", str(path), "--out", str(tmp_path / "x"))
    assert str(path) in err and where in err
    assert not (tmp_path / "x").exists()


def test_two_configurations_of_equal_curves_are_both_seen(tmp_path):
    from evaluation.refutebench import board as rb
    from evaluation.refutebench.metrics import FIDELITY_CURVE

    # The same scripted model under two labels: equal values at every turn.
    assert refutebench(tmp_path / "a", "--label", "first") == 0
    assert refutebench(tmp_path / "b", "--label", "second") == 0
    board = rb.build_board([tmp_path / "a", tmp_path / "b"])
    one, two = rb.curve_series(board, FIDELITY_CURVE, 0, "mt")
    assert one.means == two.means
    assert all(a != b for a, b in zip(one.xs, two.xs, strict=True))  # drawn side by side
    assert two.label.endswith(", same as first") and "same as" not in one.label
    assert rb.curves_png(board, tmp_path / "c.png").read_bytes()[:8] == PNG
