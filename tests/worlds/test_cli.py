"""`sandbox world`: summary, PNG, and one-line errors."""

from __future__ import annotations

from sandbox.app.cli import main

from .conftest import TWO_ROOMS, write_world


def test_world_command_summarises_the_town(capsys):
    assert main(["world", "town"]) == 0
    out = capsys.readouterr().out
    assert "22 sectors, 62 arenas" in out and "25 residents" in out
    assert "Copper Kettle Cafe" in out and "unreachable places: none" in out


def test_world_command_renders_a_png(tmp_path, capsys):
    out_png = tmp_path / "town.png"
    assert main(["world", "single_room", "--render", str(out_png)]) == 0
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_world_command_reports_unreachable_places(tmp_path, capsys):
    path = write_world(tmp_path, TWO_ROOMS.replace("#aaaabbbb#", "#aaa#bbbb#"))
    assert main(["world", str(path)]) == 1
    assert "tiny:house:bedroom" in capsys.readouterr().out


def test_world_command_bad_file_exits_2_with_the_place(tmp_path, capsys):
    path = write_world(tmp_path, TWO_ROOMS.replace("#ata#", "#atX#"))
    assert main(["world", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "grid row 3, column 4" in err and len(err.splitlines()) == 1
