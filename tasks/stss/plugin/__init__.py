"""The STSS action level declared as a benchmark plug-in (entry point `sandbox.benchmarks:
stss`): social tasks in the town, one episode per template x architecture x seed, scored from
the log by the rules of evaluation/stss (Table 4 of the paper).

What it adds to `sandbox`:
`sandbox stss`: run a suite of episodes and write the Table-4-style table (commands.py, whose
    runner is suite.py).
`sandbox stss-board`: the board of one or more suites (intervals, n, every episode accounted).
`sandbox score`: score finished runs (or a suite's) again, offline, from their logs.
`sandbox run TEMPLATE`: one episode of a task template (a .yaml file or a built-in template
    name), then its score: the plug-in's run target.
`sandbox list templates`: the built-in templates. `sandbox sweep`: suites as cells, boarded.
A suite directory is marked by its `suite.json`, which other commands' outputs may not share.

Like every benchmark's plugin package, this is the benchmark's composition root: the one place
of tasks/stss that may name its scorers (evaluation/stss), run episodes and use the app's
command helpers. Importing it loads nothing but this declaration: the commands' modules load
when `sandbox` registers them or runs a template.
"""

from __future__ import annotations

from sandbox.app.plugins import Plugin, RunTarget, Sweep
from sandbox.errors import one_line

SUITE_FILE = "suite.json"  # what marks a suite directory (suite.py writes it)


def register(sub) -> None:
    """`sandbox score`, `sandbox stss`, `sandbox stss-board`."""
    from .commands import register as register_commands

    register_commands(sub)


def owns(scenario: str) -> bool:
    """Whether `sandbox run SCENARIO` names a task template: a .yaml file or a built-in
    template's name."""
    from tasks.stss import is_template_ref

    return is_template_ref(scenario)


def near(name: str) -> list[str]:
    """The built-in template names closest to a misspelt one (`sandbox run`'s error)."""
    from pathlib import Path

    from tasks.stss import nearest_templates

    return nearest_templates(Path(name).stem)


def sweep_check(args) -> None:
    """A sweep's cell, before any runs: its templates found (a misspelt one would otherwise
    fail only when its cell's turn comes; the parser has checked the architectures)."""
    from .suite import find_templates, template_specs

    specs = template_specs(args.templates)
    if specs and not any(s.endswith(".json") for s in specs):  # a public file is imported
        find_templates(specs)  # a SuiteError (a ValueError) naming the nearest names


def templates() -> list[tuple[str, str]]:
    """`sandbox list templates`: every built-in template, its task type and title."""
    from tasks.stss import builtin_templates, load_template

    rows = []
    for path in builtin_templates():
        template = load_template(path)
        rows.append((path.stem, f"{template.type.value}: {one_line(template.title)}"))
    return rows


def board(dirs) -> object:
    """The board of suite directories as `sandbox stss-board DIR...` prints it (what `sandbox
    report` shows of a suite)."""
    from evaluation.stss import suite_board

    return suite_board(dirs)


def add_run_options(p) -> None:
    from .commands import add_run_options as add

    add(p)


def run_template(args) -> int:
    from .commands import run_template as run

    return run(args)


PLUGIN = Plugin(
    "stss", "STSS action level: social tasks in the town, scored from the log (Table 4)",
    commands=register,
    run_target=RunTarget(
        describe="an STSS task template: a .yaml file or a built-in template name "
                 "(tasks/stss/templates); a template run ends with its score",
        owns=owns, add_options=add_run_options, run=run_template, near=near,
        listing="templates"),
    lists={"templates": templates},
    # A cell: `sandbox stss ... --model M --arch A --seeds 0,1 --out CELL`; the board names
    # each row by its model and architecture itself.
    sweep=Sweep("stss", "--model", "stss-board", arch_flag="--arch", seeds_flag="--seeds",
                label_flag=None, check=sweep_check),
    outputs={SUITE_FILE: "an STSS suite (sandbox stss)"},
    boards={SUITE_FILE: board}, board_commands={SUITE_FILE: "stss-board"})
