"""Fixtures of the viewer's tests: pygame without a screen, and small runs written by hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from tests.viewer.runs import town_events, write_run  # noqa: E402


@pytest.fixture
def town_run(tmp_path: Path) -> Path:
    """The mini-town run of tests/viewer/runs.py, finished."""
    return write_run(tmp_path / "town_run", town_events())
