"""Checkpoints: an episode's whole state at an instant, written during a run, so that a fork or
a resume starts there instead of replaying everything before it.

A run writes one every `--checkpoint-every` simulated seconds (RUN/checkpoints/NNNNNNNNN.json.gz,
named by the second), between two instants: after every event due then and before a fork's
changes at that instant, with no call in flight. Then every process waits on a timeout (or on
another process), and a checkpoint holds:
- the scenario's state (`scenario.checkpoint(engine)`: for a town, every agent's modules, plan,
  action and where its process waits, the positions and walks under way, the conversations in
  progress, the whispers to come) and the timeouts its processes wait on, by owner;
- those timeouts in the order SimPy would process them, each at its exact time, so that a
  restore schedules them again in that order (same-time events run in the order they were
  scheduled) and the episode goes on byte for byte as the uninterrupted one did;
- the episode's generator, and how many events and calls the run had written (their files' first
  lines are the restored run's first lines, checked against the digests kept here).

A scenario that cannot be checkpointed (no `checkpoint` method: the single-room benchmarks, short
anyway) gets none; an instant where a process waits somewhere a restore could not resume it
from is skipped with a warning in the run's result. A checkpoint that does not read, or that
belongs to another episode config, raises NotResumable: `sandbox fork` and `sandbox rerun` then
replay from the start and say so.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import MAX_LOG_BYTES, FileFormatError, open_input
from .llm.accounting import steady

CHECKPOINTS = "checkpoints"
FORMAT = 2  # 2: residents' own clocks and streams (running ahead)


class NotResumable(Exception):
    """No checkpoint can be taken at this instant, or this one cannot be restored (and why)."""


@dataclass
class Checkpoint:
    """One checkpoint read back, with the first lines of its run's events and calls."""

    path: Path
    t: float  # the simulated second it was taken at (its name)
    now: float  # the engine's clock then: the last event's time
    state: dict[str, Any]
    events: list[str]
    calls: list[str]


def config_digest(config: dict[str, Any]) -> str:
    """The digest of a scenario's config, without where its files were read from (a run
    moved to another checkout is still the same episode)."""
    return hashlib.sha256(json.dumps(_without_sources(config), sort_keys=True,
                                     default=str).encode()).hexdigest()


def _without_sources(value):
    if isinstance(value, dict):
        return {k: _without_sources(v) for k, v in value.items() if k != "source"}
    if isinstance(value, list):
        return [_without_sources(v) for v in value]
    return value


def _file_digest(path: Path, lines: int, read=str.encode) -> tuple[str, list[str]]:
    """The sha256 of a file's first `lines` lines (each as `read` gives it), and those lines;
    NotResumable when it has fewer."""
    kept: list[str] = []
    if lines:
        if not path.is_file():
            raise NotResumable(f"{path} is missing")
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if len(kept) == lines:
                    break
                kept.append(line)
    if len(kept) < lines or (kept and not kept[-1].endswith("\n")):
        raise NotResumable(f"{path} has {len(kept)} whole lines; the checkpoint follows {lines}")
    digest = hashlib.sha256()
    for line in kept:
        digest.update(read(line))
    return digest.hexdigest(), kept


def take(engine, scenario, at: float, log, calls, seed: int, config: str) -> dict[str, Any]:
    """The episode's state at simulated second `at`, after `engine.run(until=at)` (the
    engine's clock is then at the last event before: a restored engine starts there), as JSON
    data; NotResumable when the scenario has no checkpoint or a process cannot be resumed.
    `log` and `calls`: the run's EpisodeLog and CallLog (how many lines each wrote, and their
    digest); `config`: the scenario's `config_digest` (the same all run long: computed once)."""
    hook = getattr(scenario, "checkpoint", None)
    if hook is None:
        raise NotResumable(f"a {scenario.name} episode is not checkpointed")
    state, waits = hook(engine)
    owner_of = {id(event): owner for owner, event in waits.items()}
    scheduled = []
    for due, event, lp in engine.scheduled():
        owner = owner_of.pop(id(event), None)
        if owner is None and not event.callbacks:
            # Nobody waits on it any more (an agent's rest cut short by a conversation: its
            # condition took its callback back); processing it changes nothing, so a restore
            # need not schedule it again.
            continue
        if owner is None:
            raise NotResumable(f"a {type(event).__name__} due at {due} that no process of the "
                               "episode claims")
        scheduled.append([due, owner, lp])
    if owner_of:
        raise NotResumable(f"{', '.join(owner_of.values())} waits on an event not scheduled")
    return {"format": FORMAT, "t": at, "now": engine.now, "seed": seed, "config": config,
            "events": log.count, "events_sha256": log.digest(),
            "calls": len(calls.records), "calls_sha256": calls.digest(),
            "residents": engine.residents(), "rng": engine.streams(),
            "depths": engine.depths(), "shown": engine.shown(), "scheduled": scheduled,
            "scenario": state}


def file_name(t: float) -> str:
    return f"{int(t):09d}.json.gz"


def write(run_dir: Path, state: dict[str, Any]) -> Path:
    """Write a checkpoint into RUN/checkpoints (atomically: a kill leaves the old ones)."""
    folder = run_dir / CHECKPOINTS
    folder.mkdir(exist_ok=True)
    path = folder / file_name(state["t"])
    tmp = path.with_suffix(".tmp")
    # Encoded whole, then compressed at once: json.dump into a gzip stream writes it in
    # thousands of small pieces, several times slower.
    # mtime 0: the same state is the same file (two schedules' checkpoints compare equal)
    tmp.write_bytes(gzip.compress(json.dumps(state, separators=(",", ":")).encode(), 3,
                                  mtime=0))
    os.replace(tmp, path)
    return path


def listed(run_dir: Path) -> list[tuple[float, Path]]:
    """A run's checkpoint files by time (their names), oldest first."""
    found = []
    for path in (run_dir / CHECKPOINTS).glob("*.json.gz"):
        stem = path.name.split(".")[0]
        if stem.isdigit():
            found.append((float(stem), path))
    return sorted(found)


def latest(run_dir: Path, at: float) -> Path | None:
    """The run's last checkpoint at or before simulated second `at`, if any."""
    before = [path for t, path in listed(run_dir) if t <= at]
    return before[-1] if before else None


def read(path: Path) -> Checkpoint:
    """A checkpoint and its run's first events and calls; NotResumable when it does not read
    or its run's files no longer begin as they did when it was written."""
    try:
        with open_input(path, MAX_LOG_BYTES) as raw, \
                gzip.open(raw, "rt", encoding="utf-8") as fh:  # a FIFO refused, not read
            state = json.load(fh)
    except FileFormatError as exc:
        raise NotResumable(str(exc)) from None
    except (OSError, EOFError, ValueError) as exc:
        raise NotResumable(f"{path} does not read ({type(exc).__name__}: {exc})") from exc
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise NotResumable(f"{path} is not a checkpoint of format {FORMAT}")
    run_dir = path.parent.parent
    try:
        found = {}
        for kind in ("events", "calls"):
            digest, lines = _file_digest(run_dir / f"{kind}.jsonl", int(state[kind]),
                                         steady if kind == "calls" else str.encode)
            if digest != state[f"{kind}_sha256"]:
                raise NotResumable(f"{run_dir / kind}.jsonl no longer begins as it did when "
                                   f"{path.name} was written")
            found[kind] = lines
        return Checkpoint(path, float(state["t"]), float(state["now"]), state, found["events"],
                          found["calls"])
    except (KeyError, TypeError, ValueError) as exc:
        raise NotResumable(f"{path} lacks {exc}") from exc


def restore(engine, scenario, checkpoint: Checkpoint, seed: int) -> None:
    """Make a new episode (its engine started at the checkpoint's time, nothing set up) the
    one the checkpoint saw, its processes waiting where they waited; NotResumable when it
    belongs to another episode."""
    state = checkpoint.state
    hook = getattr(scenario, "restore", None)
    if hook is None:
        raise NotResumable(f"a {scenario.name} episode cannot be restored from a checkpoint")
    if state["seed"] != seed or state["config"] != config_digest(scenario.config()):
        raise NotResumable(f"{checkpoint.path} belongs to another episode (its seed or config "
                           "differs from this one's)")
    try:
        engine.register(state["residents"])  # in the episode's order: their keys' index
        engine.set_streams(state["rng"])
        engine.set_depths(state["depths"])
        engine.set_shown(state.get("shown", {}))  # none before residents' steps went aside
        waits = {}
        for at, owner, lp in state["scheduled"]:  # in order, each on its LP's clock
            with engine.resident(lp) if lp else nullcontext():
                waits[owner] = engine.timeout_at(at)
        hook(engine, state["scenario"], waits)
    except (KeyError, TypeError, ValueError) as exc:  # written by another version of the code
        raise NotResumable(f"{checkpoint.path} does not fit this episode ({type(exc).__name__}"
                           f": {exc})") from exc


def keep_until(source: Path, run_dir: Path, t: float) -> None:
    """RUN's checkpoints are those of `source` up to `t` (a run restored from one of them:
    the same prefix): later ones removed, earlier ones of another run linked or copied in."""
    folder = run_dir / CHECKPOINTS
    for at, path in listed(run_dir):
        if at > t:
            path.unlink()
    if source.resolve() == run_dir.resolve():
        return
    folder.mkdir(exist_ok=True)
    for at, path in listed(source):
        if at <= t and not (folder / path.name).exists():
            try:
                os.link(path, folder / path.name)
            except OSError:
                shutil.copyfile(path, folder / path.name)
