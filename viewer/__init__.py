"""The replay viewer: watch a run directory in pygame, inspect agents, export PNG frames.

Reads run directories only (header.json, events.jsonl, score.json and the world map file, read
through worlds/); it never imports agents/, tasks/ or evaluation/, so it replays any run, old or
new, finished or live.

    replay = Replay("runs/demo")              # a ReplayError says what is wrong with the dir
    export_frames(replay, "frames", frame_times(replay, every=600))
    run_window(replay)                        # viewer.app, needs a display
    pair = open_beside("runs/fork", None)     # a fork beside its parent: export or window it
"""

import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no banner in front of CLI output

from .beside import Beside, open_beside
from .export import export_frames, frame_times
from .playback import SPEEDS, Playback
from .replay import Replay
from .source import ReplayError, RunSource
from .timeline import Timeline

__all__ = ["SPEEDS", "Beside", "Playback", "Replay", "ReplayError", "RunSource", "Timeline",
           "export_frames", "frame_times", "open_beside"]
