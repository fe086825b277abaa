"""`sandbox replay RUN_DIR`: watch a run in a window, or export PNG frames headless; with
`--beside [OTHER]`, a fork beside its parent (or any two runs) on one clock."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sandbox.app.options import (
    HOURS,
    PERSON,
    Duration,
    InputDir,
    InputFile,
    Moment,
    Number,
    Size,
    declared,
)
from sandbox.errors import UserError

from .common import output_dir, output_file

# A window or frame of 8K at most (a frame of 100,000 px square would take 40 GB); at least
# what the viewer's panels need to be drawn.
FRAME_SIZE = Size((640, 400), 7_680)

_PARENT = "(the parent)"  # --beside given no value


@declared("input-dir")
def _other_run(text: str):
    """--beside OTHER: a run directory (argparse passes the bare flag's value through too)."""
    return text if text == _PARENT else InputDir()(text)


def register(sub) -> None:
    p = sub.add_parser(
        "replay", help="watch a run in the viewer, or export frames",
        description="Open a run directory in the replay viewer: the town with its agents, "
                    "speech bubbles and clock (or, for single-room runs, the conversation). "
                    "A run still being written is followed live. With --export (PNG frames) "
                    "or --gif (an animated GIF), write files instead, without a screen. With "
                    "--beside, two runs side by side on one clock: a fork (sandbox fork) on "
                    "the right, its parent on the left, the fork point and the moment their "
                    "events first differ marked on the shared timeline.",
        epilog="keys in the window: space play/pause, +/- speed, left/right step to the "
               "previous/next event (shift: the inspected agent's), page up/down 10 minutes, "
               "click the timeline to jump, click an agent to inspect it, f follow it, wheel "
               "or [ ] zoom, drag to pan, h help, q quit (beside: keys that move time act on "
               "both runs; clicks, zoom and pan on the pane they happen in).  examples: "
               "sandbox replay runs/demo --export frames --every 10m --from 08:00 --to 12:00;"
               "  sandbox replay runs/day-fork --beside --export frames")
    p.add_argument("run_dir", type=InputDir(), help="a run directory written by `sandbox run`")
    p.add_argument("--world", type=InputFile(),
                   help="the world map file (YAML) [default: the one the run names]")
    p.add_argument("--view", choices=["town", "conversation"],
                   help="force a view [default: town when the run has a map, else conversation]")
    p.add_argument("--size", type=FRAME_SIZE, default="1280x800",
                   help="window or frame size [default: "
                        "%(default)s]")
    p.add_argument("--at", type=Moment(),
                   help="start at this time (HH:MM, 'YYYY-MM-DD HH:MM' or +1h)")
    p.add_argument("--speed", type=Number(0, 100_000, above=True), default=None,
                   help="simulated seconds per wall second [default: 1 for a conversation, "
                        "64 for the town]")
    p.add_argument("--follow", type=PERSON, metavar="AGENT",
                   help="keep this agent in view (and inspect it)")
    p.add_argument("--beside", nargs="?", const=_PARENT, type=_other_run, metavar="OTHER",
                   help="show the run beside another, on one clock and one timeline: with "
                        "no value the run must be a fork, and its parent (named in its header) "
                        "goes on the left; with OTHER, any run (on the left, unless the run is "
                        "its parent: the parent always goes left). --follow then follows the "
                        "agent in both; times read the left run's clock. Give it after run_dir")
    g = p.add_argument_group("headless export")
    g.add_argument("--export", type=output_dir, metavar="DIR",
                   help="write PNG frames into DIR and exit")
    g.add_argument("--every", type=Duration(HOURS),
                   help="time between frames, e.g. 30s, 10m, 1h [default: one frame "
                        "per event for a conversation, 10m for the town]")
    g.add_argument("--gif", type=output_file, metavar="FILE",
                   help="write an animated GIF of the frames (with --export, the PNGs are "
                        "kept in DIR too)")
    g.add_argument("--from", dest="from_", type=Moment(), metavar="T", help="first frame time")
    g.add_argument("--to", type=Moment(), metavar="T", help="last frame time")
    p.set_defaults(func=main)


def main(args) -> int:
    from sandbox.simtime import MomentError, parse_moment
    from viewer import Replay, ReplayError

    size = args.size  # (width, height), checked at parsing
    headless = args.export is not None or args.gif is not None
    try:
        if args.beside is None:
            live = not headless and not (args.run_dir / "result.json").exists()
            replay = Replay(args.run_dir, world_file=args.world, view=args.view, follow=live)
            runs = [replay]
        else:
            replay = _beside(args, headless)
            runs = list(replay.replays)
            live = not headless and not replay.finished
    except ReplayError as exc:
        raise UserError(str(exc)) from exc
    agents = list(dict.fromkeys(name for run in runs for name in run.timeline.agents))
    if args.follow and args.follow not in agents:
        raise UserError(f"--follow {args.follow!r}: no such agent in this run; agents: "
                        f"{', '.join(agents) or 'none'}")
    started = runs[0].header.start_time  # beside: the left run's clock reads the times
    # Every time must be one of the run's: +300h of a 2-hour run is a mistake to say, not a
    # window with nothing in it.
    times = {}
    for flag, text in (("--from", args.from_), ("--to", args.to), ("--at", args.at)):
        try:
            times[flag] = parse_moment(text, started, replay.end) if text else None
        except MomentError as exc:
            raise UserError(f"{flag} {exc}") from exc
    start, end, at = times["--from"], times["--to"], times["--at"]
    every = args.every if args.every else 600.0 if replay.is_town else None
    if start is not None and end is not None and end < start:
        raise UserError(f"--to {args.to} is before --from {args.from_}")
    for run in runs:
        if run.problems:
            first = run.problems[0]
            where = f"{run.dir.name}: " if len(runs) > 1 else ""
            print(f"sandbox replay: warning: {where}{first.file} line {first.line}: "
                  f"{first.reason}" + (f" (and {len(run.problems) - 1} more bad lines)"
                                       if len(run.problems) > 1 else "")
                  + "; showing the valid events")
    if headless:
        return _export(replay, args, size, every, start, end)
    from viewer.app import run_window

    try:
        return run_window(replay, size=size, at=at if at is not None else start,
                          speed=args.speed, follow=args.follow, live=live)
    except ReplayError as exc:
        raise UserError(str(exc)) from exc


def _beside(args, headless: bool):
    """The pair --beside shows (viewer.beside.open_beside); one-line errors for a run that is
    no fork, or a parent that is not there."""
    from viewer.beside import open_beside

    other = None if args.beside == _PARENT else Path(args.beside)
    pair = open_beside(args.run_dir, other, world_file=args.world, view=args.view,
                       live=not headless)
    if pair.forks:
        print(f"sandbox replay: {pair.right.dir} beside {pair.left.dir}, its parent: fork at "
              f"{pair.fork_time()}, {pair.parting_text()}")
    else:
        print(f"sandbox replay: {pair.right.dir} beside {pair.left.dir} (not a fork of it): "
              f"{pair.parting_text()}")
    return pair


def _export(replay, args, size, every, start, end) -> int:
    from sandbox.lock import hold_output
    from viewer.export import FRAME_NAME, export_frames, frame_times, write_gif

    times = frame_times(replay, every, start, end)
    if not times:
        raise UserError(f"no frames: the window {args.from_ or 'start'}..{args.to or 'end'} "
                        f"lies outside the run (it spans 0..{replay.end:g} s)")
    # Both ends with their date: a run over midnight has two 06:38s.
    span = (f"{replay.clock(times[0]):%Y-%m-%d %H:%M:%S} .. "
            f"{replay.clock(times[-1]):%Y-%m-%d %H:%M:%S}")
    from .common import claim_directory, claim_outputs

    claim_outputs(args, args.export, args.gif, what="a replay's frames")
    if args.export is not None:
        claim_directory(args.export, FRAME_NAME, "a replay's export")
    for output, is_file in ((args.export, False), (args.gif, True)):
        if output is not None:
            hold_output(output, file=is_file)
    if args.export is None:
        # --gif alone: the GIF is assembled from PNG frames, which need not outlive it.
        with tempfile.TemporaryDirectory(prefix="sandbox-frames-") as scratch:
            paths = export_frames(replay, scratch, times, size=size, follow=args.follow)
            print(f"wrote {write_gif(paths, args.gif)} ({len(paths)} frames, {span})")
        return 0
    paths = export_frames(replay, args.export, times, size=size, follow=args.follow)
    print(f"wrote {len(paths)} frame{'' if len(paths) == 1 else 's'} to {args.export} ({span})")
    if args.gif is not None:
        print(f"wrote {write_gif(paths, args.gif)} ({len(paths)} frames)")
    return 0
