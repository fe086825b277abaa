"""Every SANDBOX_ setting of the environment, checked before a command does anything heavy.

    problems = environment_problems()   # ["SANDBOX_LLM_LANES must be ...", ...]

The command line calls it first (sandbox/app/cli.py): a bad value ends the command in one line
with exit 2 before a model is set up or a progress line is printed, not after 20 s of model
set-up. Each setting is read by the function that uses it (the embedded model's, the runner's,
the prompt loader's); this module only asks each of them, and holds the bounds of the counts.
SETTINGS lists every variable; tests/sandbox/test_environment.py checks that the code reads no
SANDBOX_ variable missing from it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

# Bounds of the counts: far above any machine this runs on, below what would not start.
MOST_THREADS = 1_024  # CPU threads for llama.cpp
MOST_LANES = 64  # llama contexts side by side, each holding its own KV cache
MOST_PREFIX_MB = 1_048_576  # a prefix store of 1 TiB


def _count(name: str, most: int, least: int = 1) -> Callable[[], None]:
    def check() -> None:
        text = os.environ.get(name, "").strip()
        if text and not (text.isdigit() and least <= int(text) <= most):
            raise ValueError(f"{name}={text!r}: must be a whole number from {least} to "
                             f"{most:,}")
    return check


def _llm(reader: str) -> Callable[[], None]:
    """The embedded model's own reader of a choice (sandbox/llm/local.py)."""
    def check() -> None:
        from sandbox.llm import local

        getattr(local, reader)()
    return check


def _json_dialect() -> None:
    from sandbox.llm.openai_compat import DIALECTS

    text = os.environ.get("SANDBOX_JSON_DIALECT", "").strip()
    if text and text not in DIALECTS:
        raise ValueError(f"SANDBOX_JSON_DIALECT={text!r}: must be one of {', '.join(DIALECTS)}")


def _schedule() -> None:
    from sandbox.engine import schedule_setting

    schedule_setting()


def _special(path: Path) -> bool:
    mode = path.stat().st_mode
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _models_file() -> None:
    from sandbox.llm.endpoints import MODELS_ENV

    text = os.environ.get(MODELS_ENV, "")
    if not text:
        return
    path = Path(text).expanduser()
    if not path.exists():
        raise ValueError(f"{MODELS_ENV}={text!r}: no such file")
    if path.is_dir() or _special(path):
        raise ValueError(f"{MODELS_ENV}={text!r}: not a regular file")


def _prompts_dir() -> None:
    text = os.environ.get("SANDBOX_PROMPTS", "")
    if not text:
        return
    path = Path(text).expanduser()
    if not path.is_dir():
        raise ValueError(f"SANDBOX_PROMPTS={text!r}: not a directory (it holds the prompt "
                         "templates that override the built-in ones)")
    from .prompt_dirs import check_prompt_dir

    check_prompt_dir(path, "SANDBOX_PROMPTS")


def _model_cache() -> None:
    text = os.environ.get("SANDBOX_MODEL_CACHE", "").strip()
    if not text:
        return
    path = Path(text).expanduser()
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"SANDBOX_MODEL_CACHE={text!r}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"SANDBOX_MODEL_CACHE={text!r}: cannot write in {existing}")


def _sim_hours() -> None:
    from sandbox.simtime import max_sim_hours

    max_sim_hours()


def _degraded() -> None:
    from sandbox.runner import degraded_above

    degraded_above()


SETTINGS: dict[str, Callable[[], None]] = {
    "SANDBOX_LLM_THREADS": _count("SANDBOX_LLM_THREADS", MOST_THREADS),
    "SANDBOX_LLM_LANES": _count("SANDBOX_LLM_LANES", MOST_LANES),
    "SANDBOX_LLM_PREFIX_MB": _count("SANDBOX_LLM_PREFIX_MB", MOST_PREFIX_MB, least=0),
    "SANDBOX_LLM_GRAMMAR": _llm("grammar_order"),
    "SANDBOX_LLM_WEIGHTS": _llm("weights_setting"),
    "SANDBOX_LLM_DICTATION": _llm("dictation_mode"),
    "SANDBOX_JSON_DIALECT": _json_dialect,
    "SANDBOX_MODELS": _models_file,
    "SANDBOX_MODEL_CACHE": _model_cache,
    "SANDBOX_PROMPTS": _prompts_dir,
    "SANDBOX_MAX_SIM_HOURS": _sim_hours,
    "SANDBOX_SCHEDULE": _schedule,
    "SANDBOX_DEGRADED_ABOVE": _degraded,
}


def environment_problems() -> list[str]:
    """What is wrong with the SANDBOX_ settings of the environment, one line each."""
    from sandbox.llm import LLMConfigError

    problems = []
    for check in SETTINGS.values():
        try:
            check()
        except (ValueError, LLMConfigError) as exc:
            problems.append(str(exc))
    return problems
