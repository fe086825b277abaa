"""The project's scripts (bench/, setup/) are files, not packages: a test loads one as a module
from its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str) -> ModuleType:
    """The script at `relative` (to the checkout) run as a module, named after its folder and
    file (bench/growth.py -> bench_growth), afresh on every call. It is in sys.modules while it
    runs and after: a dataclass looks its module up there while being built."""
    path = ROOT / relative
    name = f"{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
