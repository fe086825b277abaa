"""No file under sandbox/ names a benchmark: each benchmark is a plug-in (entry-point group
`sandbox.benchmarks`, declared in pyproject.toml) whose code lives in its own folders (tasks/NAME,
evaluation/NAME, its prompts), and the kernel and the command line are the same whatever is
installed. A file's path and its text are both checked, so a docstring or a help line that
names one is found as well as an import.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = {".py", ".md", ".j2", ".json", ".yaml", ".txt"}


def benchmark_names(root: Path = ROOT) -> dict[str, str]:
    """Entry-point name -> its package (tasks.NAME): every benchmark the project installs."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    group = project.get("entry-points", {}).get("sandbox.benchmarks", {})
    return {name: value.split(":")[0].split(".")[1] for name, value in group.items()}


def name_pattern(names: dict[str, str]) -> re.Pattern:
    """Each name and its package as a word, its parts joined by '-', '_', ' ' or nothing
    (stss-lang, stss_lang, STSS language; PingPong, ping_pong)."""
    words = set()
    for name, package in names.items():
        for word in (name, package):
            parts = re.split(r"[-_]", word)
            words.add(r"[-_ ]?".join(re.escape(p) for p in parts))
    return re.compile(r"(?<![a-z0-9])(" + "|".join(sorted(words)) + r")(?![a-z0-9])",
                      re.IGNORECASE)


def named_in(package: Path, names: dict[str, str]) -> list[str]:
    """Where under `package` a benchmark is named: `path` or `path:line: the word`."""
    pattern, found = name_pattern(names), []
    for path in sorted(package.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        where = path.relative_to(package.parent)
        if pattern.search(str(where)):
            found.append(f"{where}")
        if path.suffix not in TEXT:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if hit := pattern.search(line):
                found.append(f"{where}:{n}: {hit.group(0)}")
    return found


def test_the_project_installs_its_benchmarks_as_plugins():
    assert {"pingpong", "refutebench", "simulbench", "stss", "stss-lang"} <= \
        set(benchmark_names())


def test_no_file_under_sandbox_names_a_benchmark():
    assert named_in(ROOT / "sandbox", benchmark_names()) == []


def test_the_check_finds_a_name_in_a_path_a_docstring_and_an_import(tmp_path):
    (tmp_path / "sandbox" / "app").mkdir(parents=True)
    (tmp_path / "sandbox" / "app" / "pingpong.py").write_text('"""Runs PingPong."""\n')
    (tmp_path / "sandbox" / "log.py").write_text("from tasks.stss_lang import x\n"
                                                  "STSS_LANGUAGE = 1  # not a name: a word\n")
    names = {"pingpong": "pingpong", "stss-lang": "stss_lang"}
    assert named_in(tmp_path / "sandbox", names) == [
        "sandbox/app/pingpong.py", "sandbox/app/pingpong.py:1: PingPong",
        "sandbox/log.py:1: stss_lang"]
