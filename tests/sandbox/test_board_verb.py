"""`sandbox board DIR...` boards any benchmark's directories by what marks them, with every
option of that benchmark's own board; directories of two benchmarks are refused in one line
naming each; the seven benchmark boards still work and are listed once, under it."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from tests.evaluation.test_pingpong_board_accounting import pingpong

R = "scripted/refutebench"
BOARDS = ("interview-board", "pingpong-board", "refutebench-board", "simulbench-board",
          "simulbench-collect-board", "stss-board", "stss-lang-board")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A RefuteBench directory, a PingPong one and an STSS suite, each finished."""
    root = tmp_path_factory.mktemp("boards")
    assert main(["refutebench", "--model", R, "--refuter", R, "--judge", R, "--tasks", "mt",
                 "--every", "9", "--out", str(root / "rb")]) == 0
    assert pingpong(root, root / "pp") == 0
    assert main(["stss", "--templates", "public_spring_tasting", "--arch", "ga", "--seeds", "1",
                 "--model", "scripted/town", "--embedder", "hashing", "--background", "2",
                 "--same-day", "--start", "15:00", "--out", str(root / "suite")]) == 0
    return root


def test_board_prints_what_the_benchmarks_own_board_prints_with_its_options(made, capsys):
    capsys.readouterr()
    for command, name, extra in [("refutebench-board", "rb", ["--curves-task", "all"]),
                                 ("pingpong-board", "pp", ["--judge", "scripted/pingpong"]),
                                 ("stss-board", "suite", ["--rules", "reference",
                                                          "--episodes"])]:
        outputs = []
        for verb in (command, "board"):
            target = made / f"{verb}-{name}.json"
            assert main([verb, str(made / name), *extra, "--json", str(target)]) == 0, verb
            outputs.append((capsys.readouterr().out, json.loads(target.read_text())))
        assert outputs[0] == outputs[1], command
    assert "rules: reference" in outputs[1][0]


def test_options_may_come_before_the_directories(made, capsys):
    capsys.readouterr()
    assert main(["board", "--rules", "reference", str(made / "suite")]) == 0
    assert "rules: reference" in capsys.readouterr().out


def test_directories_of_two_benchmarks_are_refused_in_one_line_naming_each(made, capsys):
    capsys.readouterr()
    assert main(["board", str(made / "rb"), str(made / "suite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{made / 'rb'} is a directory of the RefuteBench 2.0 refutation benchmark, boarded " \
        "by sandbox refutebench-board" in err
    assert f"{made / 'suite'} is an STSS suite (sandbox stss), boarded by sandbox stss-board" \
        in err


def test_an_option_the_benchmarks_board_lacks_is_its_parsers_one_line_error(made, capsys):
    capsys.readouterr()
    assert main(["board", str(made / "pp"), "--rules", "reference"]) == 2
    err = capsys.readouterr().err
    assert "sandbox pingpong-board: unrecognized arguments: --rules" in err
    assert err.count("\n") == 1


def test_a_directory_that_is_no_benchmarks_is_refused_naming_those_inside(made, capsys):
    capsys.readouterr()
    assert main(["board", str(made)]) == 2
    err = capsys.readouterr().err
    assert f"{made} is no benchmark's directory (it holds none of interview-set.json, " in err
    assert f"it holds some: board those ({made / 'pp'}, {made / 'rb'}, {made / 'suite'})" in err
    assert main(["board", "--json", "x.json"]) == 2
    assert "give the directories to board" in capsys.readouterr().err


def test_one_directory_twice_is_refused_as_by_the_benchmarks_board(made, capsys):
    capsys.readouterr()
    assert main(["board", str(made / "rb"), str(made / "rb") + "/"]) == 2
    assert "is given twice" in capsys.readouterr().err


def test_board_help_names_the_directories_and_a_directorys_help_its_boards_options(made,
                                                                                  capsys):
    with pytest.raises(SystemExit):
        main(["board", "--help"])
    text = capsys.readouterr().out
    assert "suite.json" in text and "sandbox stss-board" in text
    with pytest.raises(SystemExit):
        main(["board", str(made / "suite"), "--help"])
    assert "usage: sandbox stss-board" in capsys.readouterr().out


def test_the_benchmark_boards_are_listed_once_under_board(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    listed = [line.split()[0] for line in text.splitlines() if line.startswith("    ")
              and not line.startswith("     ")]
    assert "board" in listed
    assert not [name for name in listed if name.endswith("-board")]
    board_line = text[text.index("    board "):]
    board_line = " ".join(board_line[:board_line.index("\n    weights")].split())
    for command in BOARDS:
        assert command in board_line
        assert text.count(command) == 1, command
