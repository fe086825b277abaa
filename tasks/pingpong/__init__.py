"""The PingPong role-play benchmark (Gusev 2024, version 2) as single-room dialogues on the kit.

    from tasks.pingpong import load_settings, pair_items, PingPongScenario
    roleplay = load_settings()                      # our own 8 x 8 set
    roleplay = load_settings("settings.json", "en")  # a public settings file
    for pair_id, (character, situation) in pair_items(roleplay).select(every=8): ...

Judging and aggregation live in evaluation.pingpong; running it in sandbox.app.suites.
"""

from importlib import import_module

from tasks.kit import Sampling

from .importer import OUR_SET, load_settings
from .items import Pair, character_ids, pair_items
from .models import (
    INTERROGATOR_SAMPLING,
    JUDGE_SAMPLING,
    PLAYER_SAMPLING,
    SCENARIO,
    Character,
    RoleplaySet,
    Situation,
)


def __getattr__(name: str):
    # The scenario (the role-play agents, the engine) is imported when first asked for: the
    # judge and the board read characters and situations only.
    if name == "PingPongScenario":
        return import_module(".scenario", __name__).PingPongScenario
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "INTERROGATOR_SAMPLING", "JUDGE_SAMPLING", "OUR_SET", "PLAYER_SAMPLING", "SCENARIO",
    "Character", "Pair", "PingPongScenario", "RoleplaySet", "Sampling", "Situation",
    "character_ids", "load_settings", "pair_items",
]
