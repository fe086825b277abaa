"""The PingPong role-play benchmark (Gusev 2024, version 2) as single-room scenarios.

    from tasks.pingpong import load_settings, PingPongScenario
    roleplay = load_settings()                      # our own 8 x 8 set
    roleplay = load_settings("settings.json", "en")  # a public settings file
    for c, s in roleplay.pairs(every=8): ...

Judging and aggregation live in evaluation.pingpong.
"""

from .importer import OUR_SET, load_settings
from .models import (
    INTERROGATOR_SAMPLING,
    JUDGE_SAMPLING,
    PLAYER_SAMPLING,
    Character,
    RoleplaySet,
    Sampling,
    Situation,
)
from .scenario import SCENARIO, PingPongScenario, pair_id

__all__ = [
    "INTERROGATOR_SAMPLING", "JUDGE_SAMPLING", "OUR_SET", "PLAYER_SAMPLING", "SCENARIO",
    "Character", "PingPongScenario", "RoleplaySet", "Sampling", "Situation", "load_settings",
    "pair_id",
]
