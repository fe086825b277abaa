"""Headless export: PNG frames of a run (or of two side by side, `viewer.beside.Beside`) at
regular simulated times, no screen needed.

Frames are drawn on plain pygame Surfaces, so no display is opened at all (SDL_VIDEODRIVER=dummy
is set anyway in case a pygame build wants one). `write_gif` assembles the frames into an
animated GIF with Pillow. For MP4, `ffmpeg -framerate 4 -pattern_type glob -i 'DIR/*.png'
out.mp4` does it where ffmpeg is installed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .playback import Playback
from .replay import Replay

if TYPE_CHECKING:
    from .beside import Beside

DEFAULT_SIZE = (1280, 800)
# What an export writes into its directory: frame_0001_2024-02-14_15-00-00.png, ...
FRAME_NAME = re.compile(r"frame_\d{4,}_[\d_-]+\.png")


def frame_times(replay: Replay | Beside, every: float | None, start: float | None = None,
                end: float | None = None) -> list[float]:
    """The simulated times to draw: every `every` seconds from `start` through `end` (the last
    one included), or at each distinct event time (of either run) when `every` is None."""
    first = replay.start if start is None else max(start, replay.start)
    last = replay.end if end is None else min(end, replay.end)
    if last < first:
        return []
    if every is None:
        return [t for t in replay.event_times if first <= t <= last] or [first]
    times, n = [], 0
    while first + n * every <= last + 1e-9:
        times.append(first + n * every)
        n += 1
    if last - times[-1] > 1e-6:
        times.append(last)  # the final state, even off the grid
    return times


def export_frames(replay: Replay | Beside, out_dir: Path | str, times: list[float],
                  size: tuple[int, int] = DEFAULT_SIZE, follow: str | None = None,
                  progress=None) -> list[Path]:
    """Write one PNG per time into `out_dir`; returns the paths in order. `follow`: keep that
    agent in view and inspect it (in each pane whose run has it)."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from .frame import make_renderer

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    renderer = make_renderer(replay, size)
    renderer.still = True
    if follow:
        renderer.follow(follow)
    surface = pygame.Surface(size)
    playback = Playback(start=replay.start, end=replay.end)
    paths = []
    for number, t in enumerate(times, start=1):
        playback.seek(t)
        renderer.draw(surface, playback)
        stamp = replay.clock(t).strftime("%Y-%m-%d_%H-%M-%S")
        path = out / f"frame_{number:04d}_{stamp}.png"  # FRAME_NAME
        pygame.image.save(surface, str(path))
        paths.append(path)
        if progress is not None:
            progress(number, len(times))
    return paths


def write_gif(frames: list[Path], gif_path: Path | str, seconds_per_frame: float = 0.5) -> Path:
    """An animated GIF of the PNG `frames`, in order, looping."""
    from PIL import Image

    if not frames:
        raise ValueError("no frames to put in a GIF")
    gif_path = Path(gif_path)
    gif_path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.open(path).convert("P", palette=Image.Palette.ADAPTIVE) for path in frames]
    images[0].save(gif_path, save_all=True, append_images=images[1:], loop=0,
                   duration=int(seconds_per_frame * 1000))
    return gif_path
