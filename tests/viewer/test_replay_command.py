"""`sandbox replay`: headless export, and one-line errors for what a user can fix."""

from __future__ import annotations

import json

import pygame

from sandbox.app.cli import main
from sandbox.events import AgentJoined
from tests.viewer.runs import ADA_ARRIVAL, MINI_TOWN, town_events, write_run


def test_export_writes_a_png_every_interval_within_the_window(town_run, tmp_path, capsys):
    out = tmp_path / "frames"
    assert main(["replay", str(town_run), "--export", str(out), "--every", "1m",
                 "--from", "08:01", "--to", "+5m"]) == 0
    frames = sorted(out.glob("*.png"))
    assert [f.name for f in frames] == [f"frame_{i:04d}_2024-03-04_08-0{i}-00.png"
                                        for i in range(1, 6)]
    image = pygame.image.load(str(frames[0]))
    assert image.get_size() == (1280, 800)
    assert "wrote 5 frames" in capsys.readouterr().out


def test_export_names_the_date_of_both_ends(tmp_path, capsys):
    """A run over midnight: 23:59 .. 00:01 alone would read as going back in time."""
    events = [AgentJoined(t=0, agent="Ada Stone", location="mini:Oak House:kitchen",
                          persona="a baker", architecture="ga"),
              AgentJoined(t=16 * 3600 + 3 * 60, agent="Ben Ortiz",
                          location="mini:Oak House:kitchen", persona="a barista",
                          architecture="ga")]  # the next day, 00:03
    run = write_run(tmp_path / "night", events)
    assert main(["replay", str(run), "--export", str(tmp_path / "frames"), "--every", "2m",
                 "--from", "2024-03-04 23:59", "--to", "2024-03-05 00:01"]) == 0
    assert "(2024-03-04 23:59:00 .. 2024-03-05 00:01:00)" in capsys.readouterr().out


def test_export_can_assemble_an_animated_gif(town_run, tmp_path):
    from PIL import Image

    gif = tmp_path / "replay.gif"
    assert main(["replay", str(town_run), "--export", str(tmp_path / "frames"), "--every", "1m",
                 "--from", "08:01", "--to", "+5m", "--gif", str(gif)]) == 0
    with Image.open(gif) as image:
        assert image.n_frames == 5 and image.size == (1280, 800)


def test_export_without_every_draws_the_town_every_ten_minutes(town_run, tmp_path):
    out = tmp_path / "frames"
    assert main(["replay", str(town_run), "--export", str(out), "--size", "800x500"]) == 0
    frames = sorted(out.glob("*.png"))
    assert len(frames) == 3  # 08:00, 08:10 and the end (08:11:50)
    assert pygame.image.load(str(frames[-1])).get_size() == (800, 500)


def test_export_can_follow_an_agent(town_run, tmp_path):
    out = tmp_path / "frames"
    assert main(["replay", str(town_run), "--export", str(out), "--every", "30s",
                 "--from", f"+{int(ADA_ARRIVAL)}s", "--to", f"+{int(ADA_ARRIVAL) + 30}s",
                 "--follow", "Ada Stone"]) == 0
    assert len(list(out.glob("*.png"))) == 2


def test_a_corrupt_log_still_exports_and_warns_with_the_first_bad_line(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", town_events())
    lines = (run_dir / "events.jsonl").read_text().splitlines(keepends=True)
    lines[3] = "{oops\n"
    (run_dir / "events.jsonl").write_text("".join(lines))
    assert main(["replay", str(run_dir), "--export", str(tmp_path / "f"), "--every", "5m"]) == 0
    out = capsys.readouterr().out
    assert "events.jsonl line 4: unreadable" in out and "showing the valid events" in out


def test_user_errors_exit_2_with_one_line(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", town_events())
    cases = [
        ([str(tmp_path / "missing")], "no such directory"),
        ([str(tmp_path)], "not a run directory"),
        ([str(run_dir), "--export", str(tmp_path / "f"), "--every", "soon"], "not a duration"),
        ([str(run_dir), "--export", str(tmp_path / "f"), "--from", "25:00"], "not a clock time"),
        ([str(run_dir), "--export", str(tmp_path / "f"), "--from", "08:10", "--to", "08:05"],
         "before --from"),
        ([str(run_dir), "--follow", "Nobody"], "no such agent"),
        ([str(run_dir), "--world", str(tmp_path / "nope.yaml")], "no such file"),
        ([str(run_dir), "--size", "big"], "WIDTHxHEIGHT"),
    ]
    for argv, message in cases:
        assert main(["replay", *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, (argv, err)


def test_an_unknown_format_version_exits_2_naming_it(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", town_events())
    header = json.loads((run_dir / "header.json").read_text())
    header["format_version"] = 7
    (run_dir / "header.json").write_text(json.dumps(header))
    assert main(["replay", str(run_dir), "--export", str(tmp_path / "f")]) == 2
    assert "format version 7" in capsys.readouterr().err


def test_a_run_without_a_world_exits_2_and_opens_with_world(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", town_events(), world=None)
    assert main(["replay", str(run_dir), "--export", str(tmp_path / "f")]) == 2
    assert "names no world" in capsys.readouterr().err
    assert main(["replay", str(run_dir), "--export", str(tmp_path / "f"),
                 "--world", str(MINI_TOWN)]) == 0



def test_replay_without_a_display_says_so_in_one_line_and_exits(town_run):
    import os
    import subprocess
    import sys
    from pathlib import Path

    # A machine without a screen: no display variable, no SDL driver chosen (SDL would print
    # its own error and wait for a display that never comes).
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2]),
                                         env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "sandbox.app.cli", "replay", str(town_run)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert err == ["sandbox replay: error: no display to open a window on ($DISPLAY and "
                   "$WAYLAND_DISPLAY are not set): write PNG frames with --export DIR or an "
                   "animated GIF with --gif FILE"]


def right_of_top_bar(png) -> int:
    """The leftmost column of what the top bar shows at its right (the clock, and in a window
    the play state before it): pixels other than the bar's own colour."""
    import numpy as np

    from viewer.draw import theme
    from viewer.draw.hud import TOP_BAR

    image = pygame.image.load(str(png))
    pixels = pygame.surfarray.array3d(image)[:, 2:TOP_BAR - 2]
    width = image.get_width()
    right = pixels[width * 3 // 4:]
    columns = np.nonzero(np.any(np.any(right != theme.PANEL, axis=-1), axis=1))[0]
    return width * 3 // 4 + int(columns.min())


def test_an_exported_frame_has_the_clock_but_no_pause_or_speed_glyph(town_run, tmp_path):
    from viewer import Replay
    from viewer.draw import theme
    from viewer.draw.hud import MARGIN, format_clock

    out = tmp_path / "frames"
    assert main(["replay", str(town_run), "--export", str(out), "--from", "08:01",
                 "--to", "08:01"]) == 0
    (frame,) = out.glob("*.png")
    pygame.font.init()
    clock = theme.text(format_clock(Replay(town_run), 60.0), 16, theme.TEXT, bold=True)
    assert abs(right_of_top_bar(frame) - (1280 - MARGIN - clock.get_width())) <= 2
