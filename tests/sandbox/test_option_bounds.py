"""Every count, size, seed list and time a command takes has bounds, checked at parsing: the
error names the option, the value and what is allowed, and nothing is made first."""

from __future__ import annotations

import argparse

import pytest

from sandbox.app.cli import main
from sandbox.app.options import Count, Moment, Seeds, Size


@pytest.mark.parametrize("argv, said", [
    (["world", "generate", "--residents", "1000000000", "--out", "{out}"],
     "argument --residents: '1000000000': out of range; give a whole number from 1 to 10,000"),
    (["stss", "--seeds", "0..100000000000", "--out", "{out}"],
     "argument --seeds: '0..100000000000': 100,000,000,001 seeds; at most 10,000"),
    (["pingpong-board", "{out}", "--resamples", "10000000000"],
     "argument --resamples: '10000000000': out of range; give a whole number from 1 to "
     "100,000"),
    (["replay", "{out}", "--size", "100000x100000"],
     "argument --size: '100000x100000': out of range; WIDTHxHEIGHT from 640x400 to 7680x7680"),
    (["world", "town", "--render", "{out}.png", "--tile", "100000"],
     "argument --tile: '100000': out of range; give a whole number from 2 to 64"),
    (["run", "single_room", "--seed", "5" * 5000, "--out", "{out}"],
     "argument --seed: '5555"),
    (["pingpong", "--player-temperature", "1e308", "--out", "{out}"],
     "argument --player-temperature: '1e308': out of range; give a number from 0 to 5"),
    (["replay", "{out}", "--at", "+9000000h"],
     "argument --at: '+9000000h': more than a year after the start"),
    (["run", "single_room", "--cache", "{tmp}", "--out", "{out}"],
     "is a directory, not a file"),
])
def test_an_out_of_bounds_value_is_refused_at_parsing_naming_option_value_and_range(
        argv, said, tmp_path, capsys):
    out = tmp_path / "out"
    args = [a.format(out=out, tmp=tmp_path) for a in argv]
    if args[0] in ("pingpong-board", "replay"):
        out.mkdir()
    before = sorted(tmp_path.rglob("*"))
    assert main(args) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert said in line
    assert sorted(tmp_path.rglob("*")) == before


def test_the_types_give_what_they_read():
    assert Count(1, 5)("5") == 5
    assert Seeds()("0..2") == [0, 1, 2] and Seeds()("4,1") == [4, 1]
    assert Size((640, 400), 7680)("1280x800") == (1280, 800)
    assert Moment()("+1h30m") == "+1h30m" and Moment(end=True)("end") == "end"
    with pytest.raises(argparse.ArgumentTypeError, match="5 is below 9"):
        Seeds()("9..5")


def test_a_moment_after_the_run_s_end_is_refused_by_the_command(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["replay", str(run), "--at", "+300h", "--export", str(tmp_path / "f")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "--at '+300h' is after the run's end" in line
    assert not (tmp_path / "f").exists()
