"""Shared fixtures: small, offline, deterministic."""

from __future__ import annotations

import os

import pytest

# pygame must never try to open a display in tests; the embedding model must never reach a hub.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# pytest-xdist's workers (`make test` runs two) are given COLUMNS=80 and LINES=24: without them
# the commands print as into a file or a pipe, the same as in a run without workers.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


@pytest.fixture(scope="session")
def embedded_weights() -> str:
    """The weights format the embedded-model tests compute with, set rather than "auto".

    "auto" times the formats on first use and keeps the figures for good in the user's model
    cache (sandbox/llm/weights.py): left to the tests, a fresh machine's `make test` would time
    them twice (1 and 2 threads), beside the other worker, and every later run of the user's
    would follow figures measured under that load. Q8_0 is one of the formats "auto" chooses
    among, and the one that generates fastest of the converted formats on both CPU kinds
    measured (bench/HISTORY.md: 7.1 ms a token against F16's 9.0 with AVX512-BF16; 25.9
    against 29.9 on one thread of the AVX2-only EPYC); these tests generate more than they
    evaluate. Only test_local_weights.py tests "auto" itself, in a model cache of its own."""
    return "q8_0"
