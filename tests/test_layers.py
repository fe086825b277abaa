"""The layers (STYLE.md, last section; DESIGN.md section 2), checked on every import statement
of every module, including imports inside functions:

- `sandbox`'s kernel knows no world, mind, task, score or viewer;
- `worlds` knows no minds or tasks; `agents` are told their goal and never see templates,
  scorers or commands; `tasks` never see scorers;
- `evaluation` reads logs and judgments: it never imports agents nor runs an episode;
- the viewer reads run directories, and maps and legs through `worlds`;
- orchestration (`sandbox.app.suites`) and the commands are the composition root: only the
  command line imports them (bench/ may drive the orchestration, never a command module).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = ("sandbox.app",)
# What each package may not import (prefixes of module names).
FORBIDDEN = {
    "sandbox": ("worlds", "agents", "tasks", "evaluation", "viewer", *ROOT_ONLY),
    "worlds": ("agents", "tasks", "evaluation", "viewer", *ROOT_ONLY),
    "agents": ("tasks", "evaluation", "viewer", *ROOT_ONLY),
    "tasks": ("evaluation", "viewer", *ROOT_ONLY),
    # running an episode: the runner and the engine that drives one
    "evaluation": ("agents", "viewer", "sandbox.runner", "sandbox.engine", *ROOT_ONLY),
    "viewer": ("agents", "tasks", "evaluation", *ROOT_ONLY),
    # benchmarks may drive the orchestration, but not through a command module
    "bench": ("sandbox.app.cli", "sandbox.app.commands"),
    # the set-up's scripts run before the project is installed: the standard library only
    "setup": ("sandbox", "worlds", "agents", "tasks", "evaluation", "viewer", *ROOT_ONLY),
}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[:len(package) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}" if base else alias.name)
                      for alias in node.names]
    return found


def in_layer(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


PLUGIN_MODULE = re.compile(r"tasks\.[a-z0-9_]+\.plugin(\..*)?")


def is_plugin_module(module: str) -> bool:
    return PLUGIN_MODULE.fullmatch(module) is not None


def violations(package: str, root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted((root / package).rglob("*.py")):
        name = module_name(path, root)
        if package == "sandbox" and any(in_layer(name, r) for r in ROOT_ONLY):
            continue  # the composition root may import everything
        if is_plugin_module(name):
            continue  # a benchmark's own composition root
        for line, imported in imports(path, root):
            for banned in FORBIDDEN[package]:
                if in_layer(imported, banned):
                    out.append(f"{path.relative_to(root)}:{line} imports {imported}")
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_imports_across_its_layer(package):
    assert violations(package) == []


def plugin_imports(root: Path = ROOT) -> list[str]:
    """Imports of a benchmark's plugin module from any package (not tests, not bench/, not
    the plugin's own modules): found by entry point only."""
    out = []
    for package in sorted(set(FORBIDDEN) - {"bench"}):
        for path in sorted((root / package).rglob("*.py")):
            if is_plugin_module(module_name(path, root)):
                continue
            out += [f"{path.relative_to(root)}:{line} imports {imported}"
                    for line, imported in imports(path, root) if is_plugin_module(imported)]
    return out


def test_nothing_imports_a_benchmark_plugin_but_its_entry_point():
    assert plugin_imports() == []


def test_the_plugin_check_sees_an_import(tmp_path):
    (tmp_path / "sandbox" / "app").mkdir(parents=True)
    (tmp_path / "sandbox" / "app" / "cli.py").write_text(
        "from tasks.pingpong.plugin import PINGPONG\n")
    (tmp_path / "tasks" / "toy").mkdir(parents=True)
    (tmp_path / "tasks" / "toy" / "plugin.py").write_text("from evaluation.toy import board\n")
    assert plugin_imports(tmp_path) == [
        "sandbox/app/cli.py:1 imports tasks.pingpong.plugin.PINGPONG"]
    assert violations("tasks", tmp_path) == []  # the plugin module may name its scorer


def test_the_check_sees_a_crossing(tmp_path):
    # a throwaway tree: an agents module importing a task at the top and a command inside a
    # function, and an evaluation module that runs an episode through a relative import
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "bad.py").write_text(
        "from tasks.stss import x\n\ndef f():\n    from sandbox.app.commands.common import y\n")
    (tmp_path / "evaluation" / "pp").mkdir(parents=True)
    (tmp_path / "evaluation" / "pp" / "run.py").write_text(
        "from ...sandbox.runner import run_episode\nfrom . import judge\n")
    assert violations("agents", tmp_path) == [
        "agents/bad.py:1 imports tasks.stss.x",
        "agents/bad.py:4 imports sandbox.app.commands.common.y"]
    assert violations("evaluation", tmp_path) == [
        "evaluation/pp/run.py:1 imports sandbox.runner.run_episode"]


# Packages of the repository that are not code layers (tests import everything; runs/ is output).
NOT_LAYERS = {"tests", "runs"}


def top_level_packages(root: Path = ROOT) -> set[str]:
    """Every folder at the top that holds Python code (a package or scripts)."""
    return {p.name for p in root.iterdir()
            if p.is_dir() and not p.name.startswith(".") and not p.name.endswith(".egg-info")
            and any(p.rglob("*.py"))}


def test_every_top_level_package_has_its_layer_rules():
    """A new package must say what it may not import, or nothing is checked for it."""
    unknown = top_level_packages() - set(FORBIDDEN) - NOT_LAYERS
    assert unknown == set(), f"add {sorted(unknown)} to FORBIDDEN in tests/test_layers.py"


def test_a_package_the_table_does_not_know_is_found(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "x.py").write_text("import sandbox\n")
    assert top_level_packages(tmp_path) == {"plugins"}


HEAVY = ("agents", "faiss", "torch", "sentence_transformers", "llama_cpp", "sandbox.engine",
         "sandbox.runner")
# What importing each of these loads must stay light: a scorer re-reads a log, a board reads
# judgments, neither builds agents, an embedder or an engine.
LIGHT = ["evaluation.stss", "evaluation.kit", "evaluation.pingpong", "evaluation.simulbench",
         "evaluation.refutebench", "evaluation.stss_lang", "evaluation.interview", "tasks.kit",
         "tasks.stss.schema"]


def loaded_by(module: str) -> set[str]:
    """The modules a fresh interpreter holds after `import module`."""
    code = f"import sys, {module}; print('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize("module", LIGHT)
def test_light_packages_load_nothing_heavy(module):
    heavy = sorted(m for m in loaded_by(module) if any(in_layer(m, h) for h in HEAVY))
    assert heavy == [], f"importing {module} loads {heavy[:5]}"


def test_the_viewer_loads_no_minds_tasks_or_scorers():
    # the town view, the export and the replay: everything a frame is drawn from
    loaded = loaded_by("viewer.draw.town, viewer.export, viewer.replay")
    found = sorted(m for m in loaded if any(in_layer(m, p) for p in FORBIDDEN["viewer"]))
    assert found == [], f"the viewer loads {found[:5]}"
    assert "worlds.trajectory" in loaded  # the legs come from worlds (the check sees worlds)


def test_the_load_check_sees_a_heavy_import():
    assert "sandbox.engine" in loaded_by("sandbox.runner")


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports (at the top or inside a function); `from X
    import name` counts as importing X.name when that is a module, else X."""
    paths = [p for package in sorted(FORBIDDEN) for p in sorted((root / package).rglob("*.py"))]
    modules = {module_name(p, root) for p in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        name = module_name(path, root)
        targets = set()
        for _, imported in imports(path, root):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def import_circles(root: Path = ROOT) -> list[str]:
    """Pairs of modules that import each other, a package's __init__ and its own modules
    aside (the package gathers what they define)."""
    graph = import_graph(root)
    return sorted(f"{a} <-> {b}" for a, targets in graph.items() for b in targets
                  if a < b and a in graph.get(b, set())
                  and not in_layer(b, a) and not in_layer(a, b))


def test_no_two_modules_import_each_other():
    """A concept in one file: two modules that need each other (even lazily, inside a
    function) are one concept cut in two."""
    assert import_circles() == []


def test_the_circle_check_sees_a_lazy_import(tmp_path):
    pkg = tmp_path / "viewer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    assert import_circles(tmp_path) == ["viewer.a <-> viewer.b"]
