"""The PingPong role-play benchmark (Gusev 2024, version 2) as single-room dialogues on the kit.

    from tasks.pingpong import load_settings, pair_items, PingPongScenario
    roleplay = load_settings()                      # our own 8 x 8 set
    roleplay = load_settings("settings.json", "en")  # a public settings file
    for pair_id, (character, situation) in pair_items(roleplay).select(every=8): ...

Judging and aggregation live in evaluation.pingpong; running it in sandbox.suites.
"""

from tasks.kit import Sampling

from .importer import OUR_SET, load_settings
from .items import Pair, character_ids, pair_items
from .models import (
    INTERROGATOR_SAMPLING,
    JUDGE_SAMPLING,
    PLAYER_SAMPLING,
    Character,
    RoleplaySet,
    Situation,
)
from .scenario import SCENARIO, PingPongScenario

__all__ = [
    "INTERROGATOR_SAMPLING", "JUDGE_SAMPLING", "OUR_SET", "PLAYER_SAMPLING", "SCENARIO",
    "Character", "Pair", "PingPongScenario", "RoleplaySet", "Sampling", "Situation",
    "character_ids", "load_settings", "pair_items",
]
