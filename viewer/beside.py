"""Two runs side by side on one clock: a fork beside its parent, or any two runs.

    parent = find_parent(Path("runs/day-fork"))     # the run a fork's header names, found
    pair = Beside(Replay(parent), Replay("runs/day-fork"))
    pair.forks          # the right run's fork records, from the one that left the left run
    pair.parted         # when their events first differ (run seconds), None: identical so far
    pair.labels()       # one line per pane: run, changed architectures, "fork at HH:MM"

Both panes show the same number of seconds since their own run's start: a fork starts where its
parent did, so that is the same moment in both; two unrelated runs are compared from their
starts, the clock reading the left run's. No pygame here: `draw/beside.py` draws a pair.
"""

from __future__ import annotations

import heapq
import os
from pathlib import Path
from typing import Any

from .replay import Replay
from .source import ReplayError

# Kinds that record a fork's own change (shown by its fork marker), not something that happened
# differently: the runs have parted where anything else first differs.
FORK_RECORDS = frozenset({"architecture_changed"})


def find_parent(fork_dir: Path, config: dict[str, Any]) -> Path:
    """The directory of the run `fork_dir` was last forked from (its header's `forks[-1]`).

    The header records the parent as `sandbox fork` was given it: a relative path is tried
    against the current directory, the directory `sandbox fork` ran in (found from its recorded
    `--out`), the directory holding the fork, and the fork's own. A ReplayError, in one line,
    when the run is no fork or the parent is not where it says."""
    forks = config.get("forks") or []
    if not forks or not isinstance(forks[-1], dict) or not forks[-1].get("parent"):
        raise ReplayError(f"{fork_dir} is not a fork (its header records no `forks`), so it "
                          "has no parent to show beside it; name the other run: "
                          "--beside OTHER_RUN")
    fork = forks[-1]
    candidates = _parent_candidates(fork_dir, fork)
    for path in candidates:
        if path.is_dir():
            return path
    tried = ", ".join(dict.fromkeys(str(p) for p in candidates))
    raise ReplayError(f"{fork_dir} is a fork of {fork['parent']}, which is not there (looked "
                      f"for {tried}); pass the parent's directory: --beside PARENT")


def _parent_candidates(fork_dir: Path, fork: dict[str, Any]) -> list[Path]:
    parent = Path(str(fork["parent"]))
    if parent.is_absolute():
        return [parent]
    found = [Path.cwd() / parent]
    ran_in = _fork_cwd(fork_dir, fork.get("command") or [])
    if ran_in is not None:
        found.append(ran_in / parent)
    # not a run of the same name found elsewhere: that may be another run altogether
    found += [fork_dir.parent / parent, fork_dir / parent]
    return found


def _fork_cwd(fork_dir: Path, command: list[str]) -> Path | None:
    """Where `sandbox fork ... --out NEW` ran: NEW's recorded path taken off the fork's own."""
    out = None
    for i, word in enumerate(command):
        if word == "--out" and i + 1 < len(command):
            out = command[i + 1]
        elif str(word).startswith("--out="):
            out = str(word)[len("--out="):]
    if not out or Path(out).is_absolute():
        return None
    here, parts = fork_dir.resolve(), Path(out).parts
    if here.parts[-len(parts):] != parts:
        return None
    return Path(*here.parts[:-len(parts)])


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def fork_records(right: Replay, left: Replay) -> list[dict[str, Any]]:
    """The right run's fork records from the one whose parent is the left run (a fork of a fork
    keeps the whole chain): every point where the right run was changed from the left's
    course. Empty when the right run is not a fork of the left."""
    forks = [f for f in right.header.config.get("forks") or []
             if isinstance(f, dict) and f.get("parent")]
    for i, fork in enumerate(forks):
        if any(_same_dir(path, left.dir) for path in _parent_candidates(right.dir, fork)):
            return forks[i:]
    return []


def architectures(replay: Replay) -> dict[str, str]:
    """Each agent's architecture by the end of the run: as it joined, then as a fork changed it."""
    archs = {name: info.architecture for name, info in replay.timeline.agents.items()}
    changed = replay.timeline.by_kind.get("architecture_changed")
    for event in changed.items if changed else []:
        archs[event.agent or ""] = str(getattr(event, "architecture", "") or "")
    return archs


def architecture_note(archs: dict[str, str], agents: list[str]) -> str:
    """'Kenji Mori: ga' for the named agents; one architecture shared by many, once."""
    chosen = {name: archs[name] for name in agents if archs.get(name)}
    if len(chosen) > 2 and len(set(chosen.values())) == 1:
        return f"{next(iter(chosen.values()))} ({len(chosen)} agents)"
    return ", ".join(f"{name}: {arch}" for name, arch in chosen.items())


def first_difference(left: list, right: list, *, finished: bool = False) -> float | None:
    """The time of the first event, in time order, that is not the same in both lists (every
    field equal as parsed); fork records skipped. When one list is the start of the other the
    runs are identical so far (None), unless both are `finished`: then the first extra event."""
    a = [e for e in left if e.kind not in FORK_RECORDS]
    b = [e for e in right if e.kind not in FORK_RECORDS]
    for x, y in zip(a, b, strict=False):
        if x != y:
            return min(x.t, y.t)
    if finished and len(a) != len(b):
        return (a if len(a) > len(b) else b)[min(len(a), len(b))].t
    return None


class Beside:
    """Two replays shown side by side: `left` (the parent), `right` (the fork), on one clock."""

    def __init__(self, left: Replay, right: Replay):
        self.left, self.right = left, right
        self.forks = fork_records(right, left)
        self.parted: float | None = None
        self._find_parting()

    @property
    def replays(self) -> tuple[Replay, Replay]:
        return self.left, self.right

    @property
    def is_town(self) -> bool:
        return self.left.is_town or self.right.is_town

    @property
    def start(self) -> float:
        return 0.0

    @property
    def end(self) -> float:
        return max(self.left.end, self.right.end)

    @property
    def event_times(self) -> list[float]:
        times = heapq.merge(self.left.timeline.event_times, self.right.timeline.event_times)
        return list(dict.fromkeys(times))

    @property
    def finished(self) -> bool:
        return self.left.source.finished and self.right.source.finished

    def clock(self, t: float):
        return self.left.clock(t)

    def hhmm(self, t: float) -> str:
        return f"{self.clock(t):%H:%M}"

    def fork_points(self) -> list[tuple[float, str]]:
        """(run seconds, "fork HH:MM") of each point the right run was changed from the left's."""
        points = []
        for fork in self.forks:
            try:
                at = float(fork["at"])
            except (KeyError, TypeError, ValueError):
                continue
            points.append((at, f"fork {fork.get('time') or self.hhmm(at)}"))
        return points

    def fork_time(self) -> str:
        """HH:MM of the first point the right run left the left run's course ('' if none)."""
        points = self.fork_points()
        return points[0][1].removeprefix("fork ") if points else ""

    def parting_text(self) -> str:
        return "identical so far" if self.parted is None else f"parted {self.hhmm(self.parted)}"

    def labels(self) -> tuple[str, str]:
        """The two panes' captions: run name, the architectures that differ between them (or
        that the fork changed), and the fork's point."""
        left_archs, right_archs = architectures(self.left), architectures(self.right)
        changed = [name for name in right_archs
                   if name in left_archs and left_archs[name] != right_archs[name]]
        for fork in self.forks:
            changed += [name for name in fork.get("architectures") or {} if name not in changed]
        left = [self.left.dir.name, architecture_note(left_archs, changed)]
        right = [self.right.dir.name, architecture_note(right_archs, changed)]
        if self.forks:
            whispers = sum(len(f.get("whispers") or []) for f in self.forks)
            left.append("parent")
            right += [f"{whispers} whisper{'s' * (whispers != 1)}" if whispers else "",
                      f"fork at {self.fork_time()}" if self.fork_time() else ""]
        return ("  ·  ".join(p for p in left if p), "  ·  ".join(p for p in right if p))

    def refresh(self) -> int:
        """Read what either run appended (live runs); returns how many events arrived."""
        arrived = self.left.refresh() + self.right.refresh()
        if arrived or self.finished:
            self._find_parting()
        return arrived

    def _find_parting(self) -> None:
        self.parted = first_difference(self.left.timeline.events.items,
                                       self.right.timeline.events.items,
                                       finished=self.finished)


def open_beside(run_dir: Path | str, other: Path | str | None, *,
                world_file: Path | str | None = None, view: str | None = None,
                live: bool = False) -> Beside:
    """The pair `sandbox replay RUN --beside [OTHER]` shows: with no OTHER, RUN's parent on the
    left and RUN on the right; with OTHER, OTHER on the left, unless OTHER is a fork of RUN
    (the parent is always on the left). `world_file` and `view` are each Replay's; with `live`,
    a run without result.json is followed as it grows."""
    from .source import read_header

    run_dir = Path(run_dir)
    if other is None:
        other = find_parent(run_dir, read_header(run_dir).config)
    left, right = (Replay(path, world_file=world_file, view=view,
                          follow=live and not (Path(path) / "result.json").exists())
                   for path in (Path(other), run_dir))
    pair = Beside(left, right)
    if not pair.forks and fork_records(left, right):
        pair = Beside(right, left)
    return pair
