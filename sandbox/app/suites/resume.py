"""What every resumable suite shares: is a run finished, which seed an episode gets, and the
record of the options a directory was run with (a second run with other options is refused)."""

from __future__ import annotations

from pathlib import Path

from sandbox.hashing import stable_seed
from sandbox.log import run_outcome


def finished(run_dir: Path | str) -> bool:
    """A run whose header reads, whose result.json says it completed and whose events are all
    still there (sandbox.log.run_outcome); anything else is run again."""
    return run_outcome(run_dir).finished


def episode_seed(base: int, key: str) -> int:
    """The seed of one episode of a suite: fixed by the base seed and the episode's stable key
    (an item id), not by its position, so a reordered or subsampled set keeps its seeds."""
    return stable_seed(base, key)
