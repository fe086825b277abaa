"""How long an episode may be in simulated time: the maximum, and the check every template,
window and config goes through before anything runs; and the times a user types for a moment of
a run (`parse_time`: HH:MM, a date and time, +2h). Kept out of the engine so that the task
files that check it load no SimPy.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

from .env import env_number

# The longest episode, in simulated hours, a command runs: a template or config asking for more
# (a typo such as `duration_minutes: 1000000000`) is refused when it is checked, before anything
# runs. `--max-sim-hours` on the commands that run towns, or this variable.
MAX_SIM_HOURS_ENV = "SANDBOX_MAX_SIM_HOURS"
DEFAULT_MAX_SIM_HOURS = 72.0


class SimTimeTooLong(ValueError):
    """An episode asks for more simulated time than the maximum (`max_sim_hours`)."""


def max_sim_hours() -> float:
    """The longest episode in simulated hours: $SANDBOX_MAX_SIM_HOURS, else 72 (ValueError
    when the variable is not a positive number)."""
    return env_number(MAX_SIM_HOURS_ENV, DEFAULT_MAX_SIM_HOURS, lambda v: 0 < v < math.inf,
                      "a number of hours above 0")


def sim_time_problem(seconds: float | None) -> str | None:
    """Why `seconds` of simulated time is too long for an episode, or None."""
    limit = max_sim_hours()
    if seconds is None or seconds <= limit * 3600:
        return None
    return (f"asks for {seconds / 3600:,.1f} simulated hours, more than the longest episode "
            f"allowed ({limit:g} h; --max-sim-hours or {MAX_SIM_HOURS_ENV} to allow more)")


def check_sim_time(seconds: float | None, what: str) -> None:
    """SimTimeTooLong when `seconds` of simulated time is more than the maximum; `what` says
    which field or option asks for it (the message names it)."""
    problem = sim_time_problem(seconds)
    if problem is not None:
        raise SimTimeTooLong(f"{what}: {problem}")


# -- reading the times and durations a user types (`--at 08:30`, `--every 10m`, `+2h`) --------

_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")


class TimeSpecError(ValueError):
    pass


def parse_duration(text: str) -> float:
    """'90' (seconds), '30s', '10m', '1h30m', '2d' -> seconds (> 0)."""
    spec = text.strip().lower().replace(" ", "")
    try:
        seconds = float(spec)
    except ValueError:
        parts = _PART.findall(spec)
        if not parts or "".join(n + u for n, u in parts) != spec:
            raise TimeSpecError(f"{text!r} is not a duration; write e.g. 30s, 10m, 1h30m"
                                ) from None
        seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    if seconds <= 0 or not math.isfinite(seconds):
        raise TimeSpecError(f"{text!r}: a duration must be positive")
    return seconds


def parse_time(text: str, start: datetime) -> float:
    """A moment of a run as seconds since its start (may be negative: before it).

    '+2h' (after the start), 'HH:MM[:SS]' (that clock time, the first one at or after the start),
    'YYYY-MM-DD HH:MM[:SS]' (a full date and time).
    """
    spec = text.strip()
    if spec.startswith("+"):
        return parse_duration(spec[1:]) if spec[1:].strip() not in ("0", "") else 0.0
    if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", spec):
        parts = [int(p) for p in spec.split(":")]
        hour, minute, second = (parts + [0])[:3]
        if hour > 23 or minute > 59 or second > 59:
            raise TimeSpecError(f"{text!r} is not a clock time")
        when = start.replace(hour=hour, minute=minute, second=second, microsecond=0)
        if when < start:
            when += timedelta(days=1)
        return (when - start).total_seconds()
    try:
        when = datetime.fromisoformat(spec)
    except ValueError:
        raise TimeSpecError(f"{text!r} is not a time; write HH:MM, 'YYYY-MM-DD HH:MM' or +1h30m"
                            ) from None
    return (when - start).total_seconds()


def clock_text(start: datetime, seconds: float) -> str:
    """Seconds since `start` as the clock a user reads: 'HH:MM' on the first day, else
    'YYYY-MM-DD HH:MM' (seconds shown when there are any)."""
    when = start + timedelta(seconds=seconds)
    shown = "%H:%M:%S" if when.second or when.microsecond else "%H:%M"
    return when.strftime(shown if when.date() == start.date() else f"%Y-%m-%d {shown}")
