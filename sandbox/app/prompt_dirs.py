"""A directory of prompt overrides (--prompts DIR, $SANDBOX_PROMPTS), checked before it is used.

    check_prompt_dir(Path("my_prompts"), "--prompts")   # ValueError naming the file and line

Each file must override a built-in prompt (a misspelt name would be ignored without a word, the
built-in one used instead), be a regular file of at most PROMPT_BYTES read through the guarded
opener, hold something (an empty file is a save gone wrong more often than a wish), parse as
Jinja, and use only the variables its built-in counterpart uses: the prompts render with
StrictUndefined, so any other name would fail at the first call, after the run has started,
instead of here.
"""

from __future__ import annotations

import difflib
import importlib.util
from functools import cache
from pathlib import Path

import jinja2
from jinja2 import meta

from sandbox.files import FileFormatError, read_text

# A prompt template is a page of text; a megabyte is far beyond any model's context, and the
# bound keeps a huge or endless file (a 5 GiB one once hung the check) from being read whole.
PROMPT_BYTES = 2**20


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def builtin_prompts() -> dict[str, Path]:
    """Every built-in prompt file by name: the packages' prompts/ folders and those of the
    installed benchmark plug-ins."""
    from .plugins import installed

    folders: list[Path] = []
    for package in ("agents", "evaluation", "tasks", "sandbox"):
        root = _package_dir(package)
        if root is not None:
            folders += [root / "prompts", *sorted(root.glob("*/prompts"))]
    for found in installed():
        module = found.value.split(":")[0].split(".")[0] if found.value else ""
        root = _package_dir(module) if module else None
        if root is not None:
            folders += [root / "prompts", *sorted(root.glob("*/prompts"))]
    prompts: dict[str, Path] = {}
    for folder in folders:
        if folder.is_dir():
            for path in sorted(folder.glob("*.j2")):
                prompts.setdefault(path.name, path)
    return prompts


@cache
def passed_variables() -> dict[str, set[str] | None]:
    """The variables each prompt is rendered with, read from every `render(..., "NAME.j2",
    var=...)` call of the packages' code: the names a prompt may use besides those its
    built-in uses (None: a call passes **variables, so any name may be given)."""
    import ast

    given: dict[str, set[str] | None] = {}
    roots = [r for r in map(_package_dir, ("agents", "evaluation", "tasks", "sandbox")) if r]
    for root in roots:
        for path in root.rglob("*.py"):
            try:
                source = path.read_text(encoding="utf-8")
                if ".j2" not in source:
                    continue  # renders no prompt: not worth parsing
                tree = ast.parse(source)
            except (OSError, SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                        node.func, "attr", None)) == "render" and len(node.args) >= 2
                        and isinstance(node.args[1], ast.Constant)
                        and isinstance(node.args[1].value, str)):
                    continue
                name = node.args[1].value
                if any(k.arg is None for k in node.keywords) or given.get(name, set()) is None:
                    given[name] = None
                else:
                    given.setdefault(name, set()).update(k.arg for k in node.keywords)
    return given


def _variables(env: jinja2.Environment, text: str) -> set[str]:
    return meta.find_undeclared_variables(env.parse(text))


def _line_of(text: str, name: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if name in line:
            return number
    return 1


def check_prompt_dir(directory: Path, what: str) -> None:
    """ValueError, in one line naming `what`, the file and the line, when a file of
    `directory` overrides no built-in prompt, is not a regular file of at most PROMPT_BYTES,
    is not text, is empty, does not parse, or uses a variable its built-in counterpart does
    not."""
    builtins = builtin_prompts()
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for path in sorted(directory.iterdir()):
        if path.name.startswith("."):
            continue  # an editor's or a VCS's own files
        if path.is_dir() and path.name not in builtins:
            continue  # folders are not prompts
        if path.name not in builtins:
            near = difflib.get_close_matches(path.name, list(builtins), n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise ValueError(f"{what} {path}: no built-in prompt is named {path.name!r}, so it "
                             f"would be ignored{hint}")
        try:
            # One guarded read: a directory, a FIFO, a device or a file over the bound is
            # refused by name (a directory named as a prompt was skipped, the built-in used).
            text = read_text(path, PROMPT_BYTES)
        except FileFormatError as exc:
            place = f" {exc.where}" if exc.where else ""
            raise ValueError(f"{what} {path}{place}: {exc.reason}") from None
        if not text.strip():
            raise ValueError(f"{what} {path}: empty, so the model would be sent nothing; write "
                             "{# ... #} in it if an empty prompt is meant")
        try:
            used = _variables(env, text)
        except jinja2.TemplateSyntaxError as exc:
            raise ValueError(f"{what} {path} line {exc.lineno}: {exc.message}") from None
        calls = passed_variables()
        if calls.get(path.name, set()) is None:
            continue  # rendered with **variables: any name may be given
        # Rendered where its name is not written out (a constant, a parameter): what the
        # built-in uses is surely given, and nothing else is known to be; a name beyond it
        # would fail at its first call, after the run has started (StrictUndefined).
        passed = calls.get(path.name, set())
        given = _variables(env, builtins[path.name].read_text(encoding="utf-8")) | passed
        extra = sorted(used - given - set(env.globals))
        if extra:
            raise ValueError(
                f"{what} {path} line {_line_of(text, extra[0])}: {extra[0]!r} is not given to "
                f"this prompt ({path.name} is given "
                f"{', '.join(sorted(given)) or 'no variable'})")
