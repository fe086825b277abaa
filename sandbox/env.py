"""Numbers a user sets through the environment (SANDBOX_...): read in one way, a bad value a
ValueError naming the variable and what it should be."""

from __future__ import annotations

import math
import os
from collections.abc import Callable


def env_number(name: str, default: float, valid: Callable[[float], bool], should_be: str
               ) -> float:
    """$name as a number, `default` when unset or blank; ValueError when it is not a number
    `valid` accepts (the message says it should be `should_be`)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value) or not valid(value):
        raise ValueError(f"{name}={text!r}: not {should_be}")
    return value
