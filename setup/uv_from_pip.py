"""Where pip takes packages from, as uv's options, printed on one line.

The set-up installs torch with pip and the other packages with uv (the Makefile says why). uv
reads its own settings, not pip's: without this, a machine whose pip is set to a mirror, a
folder of wheels or a constraints file would get other packages from uv than from pip. This
reads pip's merged settings (`pip config list`: its config files and PIP_* variables) and maps
the ones that say where packages come from. pip's precedence holds: the environment over the
`install` section over `global`.

    python setup/uv_from_pip.py   ->   --index URL --find-links DIR ...
"""

from __future__ import annotations

import ast
import shlex
import subprocess
import sys

# pip's key -> uv's option; pip takes a space-separated list where uv repeats the option
OPTIONS = {"index-url": "--default-index", "extra-index-url": "--index",
           "find-links": "--find-links", "constraint": "--constraint"}
PRECEDENCE = (":env:", "install", "global")  # the first section that sets a key wins


def pip_settings(listing: str) -> dict[str, str]:
    """`pip config list`'s lines (`section.key='value'`) merged by pip's precedence."""
    sections: dict[str, dict[str, str]] = {section: {} for section in PRECEDENCE}
    for line in listing.splitlines():
        name, sep, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if sep and section in sections:
            sections[section][key] = ast.literal_eval(value)
    return {key: value for section in reversed(PRECEDENCE)
            for key, value in sections[section].items()}


def uv_options(settings: dict[str, str]) -> list[str]:
    options = [part for key, option in OPTIONS.items()
               for value in settings.get(key, "").split() for part in (option, value)]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        options.append("--no-index")
    if "--index" in options:  # pip takes the best version from all indexes; uv by default
        options += ["--index-strategy", "unsafe-best-match"]  # the first index holding a name
    return options


def main() -> None:
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                             capture_output=True, text=True, check=True).stdout
    print(shlex.join(uv_options(pip_settings(listing))))


if __name__ == "__main__":
    main()
