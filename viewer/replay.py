"""A replay: one run directory opened for viewing, with its timeline, world map and scores."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sandbox.log import SCORE, LogProblem

from .source import ReplayError, RunSource
from .timeline import Timeline


class Replay:
    """Everything a view draws from: `timeline` (events), `world` (the map, when the run has
    one), `score` (score.json, when scored), and `problems` (bad log lines).

    `refresh()` picks up events appended since the last call (a run still being written).
    """

    def __init__(self, run_dir: Path | str, *, world_file: Path | str | None = None,
                 view: str | None = None, follow: bool = False):
        self.source = RunSource.open(run_dir)
        self.timeline = Timeline()
        # Not following: whatever is in the file now is all there is.
        self.timeline.add(self.source.read_new(final=not follow))
        self.world = None
        self._world_file = Path(world_file) if world_file else None
        self.view = view or "auto"
        self.score: dict[str, Any] | None = None
        self._load_score()
        self._resolve_view()

    # -- facts about the run ------------------------------------------------------------------
    @property
    def dir(self) -> Path:
        return self.source.dir

    @property
    def header(self):
        return self.source.header

    @property
    def problems(self) -> list[LogProblem]:
        return self.source.problems

    @property
    def live_possible(self) -> bool:
        """No result.json yet: the run may still be writing (or was killed)."""
        return not (self.source.dir / "result.json").exists()

    @property
    def start(self) -> float:
        return 0.0

    @property
    def end(self) -> float:
        return self.timeline.end

    @property
    def event_times(self) -> list[float]:
        """The distinct times events happen at, in order."""
        return self.timeline.event_times

    def clock(self, t: float) -> datetime:
        return self.header.start_time + timedelta(seconds=t)

    def seconds(self, when: datetime) -> float:
        return (when - self.header.start_time).total_seconds()

    @property
    def task(self) -> dict[str, Any] | None:
        """The social task of an STSS run (header `config.stss_task`, or `config.task`)."""
        for key in ("stss_task", "task"):
            value = self.header.config.get(key)
            if isinstance(value, dict):
                return value
        return None

    def task_window(self) -> tuple[float, float] | None:
        """The task's scoring window in run seconds, when the task has one."""
        task = self.task or {}
        try:
            start = datetime.fromisoformat(str(task["start"]))
            end = datetime.fromisoformat(str(task.get("end") or task["start"]))
        except (KeyError, ValueError):
            return None
        return self.seconds(start), self.seconds(end)

    def fork_points(self) -> list[tuple[float, str]]:
        """Where a fork (`sandbox fork`) left its parent: (run seconds, "fork of PARENT at
        HH:MM"), oldest first; none for a run that is not a fork."""
        points = []
        for fork in self.header.config.get("forks") or []:
            try:
                at = float(fork["at"])
            except (KeyError, TypeError, ValueError):
                continue
            parent = Path(str(fork.get("parent", "?"))).name
            points.append((at, f"fork of {parent} at {fork.get('time', '?')}"))
        return points

    @property
    def is_town(self) -> bool:
        return self.view == "town"

    def problem_summary(self) -> str:
        """One line about bad log lines: the first one and how many more."""
        if not self.problems:
            return ""
        first = self.problems[0]
        more = len(self.problems) - 1
        tail = f" (+{more} more)" if more else ""
        return f"{first.file} line {first.line}: {first.reason}{tail}"

    # -- live follow --------------------------------------------------------------------------
    def refresh(self) -> int:
        """Read events appended since the last call; returns how many arrived."""
        if self.source.restarted():
            raise ReplayError(f"{self.dir}: the run was restarted (events.jsonl shrank); "
                              "open it again")
        new = self.source.read_new()
        self.timeline.add(new)
        if self.score is None:
            self._load_score()
        return len(new)

    # -- pieces -------------------------------------------------------------------------------
    def _load_score(self) -> None:
        path = self.dir / SCORE
        if path.exists():
            try:
                self.score = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                self.problems.append(LogProblem(file=SCORE, line=1, reason="not valid JSON"))
                self.score = {}

    def _resolve_view(self) -> None:
        """Town view when the run has a map to draw (and walks on it), else the conversation.
        A run whose agents walk but whose map cannot be found is an error, not an empty view."""
        from worlds import builtin_worlds

        from .worldmap import find_world_file, load_world_map

        walks = any(kind in self.timeline.by_kind for kind in ("move", "placed"))
        if self._world_file is not None and not self._world_file.is_file():
            raise ReplayError(f"--world {self._world_file}: no such file")
        path = self._world_file or find_world_file(self.header.world, self.dir)
        if path is not None:
            self.world = load_world_map(path)
        if self._world_file is not None and self.header.world:
            # The map given must be the run's own: another one would draw the agents in
            # places that are not there, or in the wrong places, without a word.
            named = self.header.world
            ran_in = Path(named).stem if named.endswith((".yaml", ".yml")) else named
            if self.world is not None and self.world.name != ran_in:
                raise ReplayError(f"--world {self._world_file}: a map of {self.world.name!r}, "
                                  f"but the run took place in {ran_in!r}")
        if self.view == "auto":
            town = walks or (self.world is not None and len(self.world.arenas) > 1)
            self.view = "town" if town else "conversation"
        if self.view == "town" and self.world is None:
            if not self.header.world:
                raise ReplayError(f"{self.dir}: the run names no world (header.json has no "
                                  "'world'), so there is no map to draw; pass --world FILE, "
                                  "or --view conversation")
            raise ReplayError(f"{self.dir}: the run's world {self.header.world!r} was not found "
                              "(neither a file nor a world of that name: "
                              f"{', '.join(builtin_worlds())}); pass --world FILE, "
                              "or --view conversation")
