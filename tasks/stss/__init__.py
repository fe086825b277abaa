"""STSS social tasks (action level): templates, instantiation, the episode, the importer.

    from tasks.stss import load_template, instantiate, STSSEpisode, EpisodeWindow
    template = load_template("tasks/stss/templates/public_spring_tasting.yaml", world)
    task = instantiate(template, seed=0, world=world)           # performer, background, time...
    episode = STSSEpisode(task, "ga_tdp", window=EpisodeWindow(same_day=True, start="14:00"))
    run_episode(episode, llm, seed=0, out_dir="runs/x")         # task goes into header.json

Scoring lives in evaluation.stss. See tasks/README.md. The episode (which builds agents, and
so loads the embedding stack) is imported when first asked for: a scorer that reads a task
from a run's header loads no agent.
"""

from importlib import import_module

from .importer import PUBLIC_TYPES, ImportProblem, import_public_tasks, read_public_tasks
from .instantiate import DEFAULT_DATE, STSSTask, TaskStep, expected_count, instantiate
from .schema import (
    PERFORMER_HOME,
    TEMPLATES_DIR,
    Step,
    TaskTemplate,
    TaskType,
    builtin_templates,
    is_template_ref,
    load_template,
    nearest_templates,
    parse_template,
    template_names,
    template_path,
)

_EPISODE = ("DAY_END", "EpisodeWindow", "STSSEpisode")


def __getattr__(name: str):
    if name in _EPISODE:
        return getattr(import_module(".episode", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DAY_END", "DEFAULT_DATE", "PERFORMER_HOME", "PUBLIC_TYPES", "TEMPLATES_DIR",
    "EpisodeWindow", "ImportProblem", "STSSEpisode", "STSSTask", "Step", "TaskStep",
    "TaskTemplate", "TaskType", "builtin_templates", "expected_count", "import_public_tasks",
    "instantiate", "is_template_ref", "load_template", "nearest_templates", "parse_template",
    "read_public_tasks", "template_names", "template_path",
]
