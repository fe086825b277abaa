"""Shared fixtures: small, offline, deterministic."""

from __future__ import annotations

import os

# pygame must never try to open a display in tests; the embedding model must never reach a hub.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# pytest-xdist's workers (`make test` runs two) are given COLUMNS=80 and LINES=24: without them
# the commands print as into a file or a pipe, the same as in a run without workers.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)
