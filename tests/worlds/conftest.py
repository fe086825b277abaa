"""Small worlds built from a few lines of YAML, and an engine to walk them in."""

from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from sandbox.engine import Engine
from sandbox.llm import LLMSettings, make_llm
from worlds import World

# Two rooms joined by one door, a corridor, and a garden outside.
#   x: 0123456789
TWO_ROOMS = """\
name: tiny
tile_meters: 1.4
legend:
  "#": {blocked: wall}
  "a": {sector: house, arena: kitchen}
  "b": {sector: house, arena: bedroom}
  "g": {sector: outside, arena: garden}
  "=": {object: bed}
  "t": {object: table}
grid: |
  ##########
  #aaa#bbb=#
  #ata#bbbb#
  #aaaabbbb#
  #a########
  #gggggggg#
  ##########
"""


def write_world(tmp_path: Path, text: str, name: str = "world.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def tiny(tmp_path) -> World:
    return World.load(write_world(tmp_path, TWO_ROOMS))


@pytest.fixture
def engine() -> Engine:
    llm = make_llm(LLMSettings(model="scripted/default", cache_mode="off"))
    return Engine(llm=llm, seed=0, start_time=datetime(2024, 3, 4, 0, 0))
