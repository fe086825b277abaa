"""Shared fixtures: small, offline, deterministic."""

from __future__ import annotations

import os

# pygame must never try to open a display in tests; the embedding model must never reach a hub.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
