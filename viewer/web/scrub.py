"""What a shared page must not hold: credentials and the absolute paths of the user's machine.

Every text that goes into a report passes through one `Scrubber`: credentials inside URLs and
every secret the command line remembered are masked (`sandbox.redact`), values under a key that
names a credential are masked whatever they look like, and, unless asked to keep them
(`--paths`), absolute paths become relative: a reported directory by its own name, the working
directory and the project by nothing, the home directory by `~`, any other path by its last
part.

    scrub = Scrubber({Path("/home/me/runs/suite"): "suite"})
    scrub.text("/home/me/runs/suite/a/s0")    ->  "suite/a/s0"
    scrub.data({"api_key": "sk-1", "out": "/srv/x/y"})  ->  {"api_key": "***", "out": "…/y"}
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sandbox.redact import MASK, redact

# Keys whose value is a credential whatever it looks like (a header's backend settings, an
# endpoint's options).
_SECRET_KEY = re.compile(r"api[_-]?key|(^|[_-])token$|secret|passw|authorization|credential",
                         re.IGNORECASE)
# An absolute path: a slash that starts a word (not the slash of a URL, a fraction or "and/or"),
# then at least two parts.
_ABSOLUTE = re.compile(r"(?<![\w:/.~\-])/(?:[^\s/'\"<>`|]+/)+[^\s/'\"<>`|,;)\]]*")
_PROJECT = Path(__file__).resolve().parents[2]


class Scrubber:
    """Masks credentials and, unless `keep_paths`, makes absolute paths relative.

    Args:
        roots: absolute directories -> the name a page calls them by (the reported dirs).
        keep_paths: leave paths as they are (`sandbox report --paths`).
    """

    def __init__(self, roots: Mapping[Path, str] | None = None, keep_paths: bool = False):
        self.keep_paths = keep_paths
        known: dict[str, str] = {}
        for path, name in (roots or {}).items():
            known[str(Path(path).resolve())] = name
            known[str(Path(path).absolute())] = name
        for path in (_PROJECT, Path.cwd().resolve()):
            known.setdefault(str(path), "")
        known.setdefault(os.path.expanduser("~"), "~")
        # The root (a command run from /, a home of /) would unmake every path.
        known = {k: v for k, v in known.items() if len(Path(k).parts) > 1}
        # The longest first: a reported directory inside the home directory keeps its name.
        self._known = sorted(known.items(), key=lambda kv: -len(kv[0]))

    def text(self, text: str) -> str:
        text = redact(text)
        if self.keep_paths or "/" not in text:
            return text
        for prefix, name in self._known:
            if prefix in text:
                text = re.sub(re.escape(prefix) + r"(/|(?![\w.\-]))",
                              lambda m, name=name: (name + m.group(1)) if name else
                              ("" if m.group(1) else "."), text)
        return _ABSOLUTE.sub(lambda m: "…/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)

    def data(self, value: Any) -> Any:
        """`value` (JSON-like) with every string scrubbed and credential keys masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            # A credential is a text: counts of tokens stay numbers.
            return {str(k): (MASK if _SECRET_KEY.search(str(k)) and isinstance(v, str) and v
                             else self.data(v)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value
