"""Prompts live in Jinja2 files, one per purpose, in each package's `prompts/` folder.

A user can override any of them without editing the package: put a file of the same name in a
directory named by `--prompts DIR` or the SANDBOX_PROMPTS environment variable.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import jinja2

_user_dir: Path | None = None


def set_prompt_dir(path: Path | str | None) -> None:
    global _user_dir
    _user_dir = Path(path) if path else None
    _environment.cache_clear()


def read_afresh() -> None:
    """Read the prompt files again from the next render on. Each command starts so
    (app/cli.py): a template is read once a command, and one edited between two commands of
    one process (a test, a notebook) is the edited one."""
    _environment.cache_clear()


@cache
def _environment(package: str | Path) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    user = _user_dir or (Path(os.environ["SANDBOX_PROMPTS"]) if os.environ.get("SANDBOX_PROMPTS")
                         else None)
    if user is not None:
        loaders.append(jinja2.FileSystemLoader(str(user)))
    # A package's prompts/ folder, or a folder of its own (a benchmark outside the packages).
    loaders.append(jinja2.FileSystemLoader(str(package)) if isinstance(package, Path)
                   else jinja2.PackageLoader(package, "prompts"))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders),
                              undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=False,
                              autoescape=False,
                              # not asked again whether its file changed at every render
                              # (two stat calls each, which give up the interpreter's lock
                              # to hundreds of threads waiting on an endpoint): once a command
                              auto_reload=False)


def render(package: str | Path, name: str, **variables) -> str:
    """Render `<package>/prompts/<name>` (or the user's override) with `variables`; `package`
    may also be a folder (a Path) holding the templates."""
    return _environment(package).get_template(name).render(**variables).strip()
