"""The STSS language level (paper section 3.2): conversation scenarios harvested from action-
level runs, and their replay as single-room dialogue episodes on the kit.

    from tasks.stss_lang import harvest, load_set, save_set, scenario_items, StssLangScenario
"""

from .harvest import PER_PAIR, NotAnSTSSRun, harvest, run_scenarios, stss_runs, task_id
from .items import BUILTIN_SET, scenario_items
from .scenario import BENCHMARK, PARTNER, PARTNER_ARCH, PERFORMER, StssLangScenario, rebuild
from .schema import (
    FORMAT,
    VERSION,
    Character,
    FrozenMemory,
    Scenario,
    ScenarioSet,
    TaskFacts,
    load_set,
    save_set,
)

__all__ = [
    "BENCHMARK", "BUILTIN_SET", "FORMAT", "PARTNER", "PARTNER_ARCH", "PERFORMER", "PER_PAIR",
    "VERSION", "Character", "FrozenMemory", "NotAnSTSSRun", "Scenario", "ScenarioSet",
    "StssLangScenario", "TaskFacts", "harvest", "load_set", "rebuild", "run_scenarios",
    "save_set", "scenario_items", "stss_runs", "task_id",
]
