"""SimulBench (Jia et al., NAACL 2025 Findings) as single-room dialogues on the kit: a model
acts as a simulator (a terminal, a board game, a converter) for a simulated user.

    from tasks.simulbench import load_tasks, load_scripts, script_items, collection_items
    tasks = load_tasks()                             # our 40 tasks
    scripts = load_scripts("simulbench_all.jsonl")   # the published 500 scripts

Judges, aggregation and the boards live in evaluation.simulbench; the benchmark is declared, and
its commands added, by the plug-in (plugin.py, entry point `sandbox.benchmarks: simulbench`).
See README.md.
"""

from .categories import OVERRIDES, categorize
from .extract import Collected, cut, extract, source_file
from .importer import (
    OUR_TASKS,
    check_history,
    load_scripts,
    load_tasks,
    read_jsonl,
    task_id,
    write_scripts,
    write_tasks,
)
from .items import SUBSETS, Collect, collection_items, in_subset, script_id, script_items
from .models import (
    CATEGORIES,
    DIALOGUES_PER_TASK,
    JUDGE_SAMPLING,
    SIMULATOR_SAMPLING,
    SOURCE_FILES,
    SYSTEM_PROMPT,
    TURNS,
    USER_SAMPLING,
    Category,
    Message,
    Script,
    SimTask,
)

__all__ = [
    "CATEGORIES", "DIALOGUES_PER_TASK", "JUDGE_SAMPLING", "OUR_TASKS", "OVERRIDES",
    "SIMULATOR_SAMPLING", "SOURCE_FILES", "SUBSETS", "SYSTEM_PROMPT", "TURNS", "USER_SAMPLING",
    "Category", "Collect", "Collected", "Message", "Script", "SimTask", "categorize",
    "check_history", "collection_items", "cut", "extract", "in_subset", "load_scripts",
    "load_tasks", "read_jsonl", "script_id", "script_items", "source_file", "task_id",
    "write_scripts", "write_tasks",
]
