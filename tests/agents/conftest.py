"""Fixtures of the generative-agent tests; the helpers live in ga_helpers.py."""

from __future__ import annotations

import pytest

from tests.agents.ga_helpers import Recorder


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
