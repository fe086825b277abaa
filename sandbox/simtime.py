"""Simulated time outside the engine: how long an episode may be (the maximum, and the check
every template, window and config goes through before anything runs), and the one reading of
the times a user types for a moment of a run (`parse_time`: HH:MM, the first such time after
the start; 'day N HH:MM'; a date and time; +2h; seconds), with `parse_moment` adding `end` and
the run's bounds for a finished run.
Kept out of the engine so that the task files that check it load no SimPy.
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


MOMENTS = ("HH:MM[:SS] (the first such time at or after the start), 'day N HH:MM' (day 1 is "
           "the day the run started), 'YYYY-MM-DD HH:MM', +1h30m (after the start), or "
           "simulated seconds since the start (5400, 5400s)")
_CLOCK = r"(\d{1,2}):(\d{2})(?::(\d{2}))?"


def parse_time(text: str, start: datetime) -> float:
    """A moment of a run a user writes (MOMENTS), as seconds since the run's `start` (negative:
    before it). The one reading of every command's times: replay, fork, whisper, interview."""
    spec = text.strip()
    if spec.startswith("+"):
        return parse_duration(spec[1:]) if spec[1:].strip() not in ("0", "") else 0.0
    if seconds := re.fullmatch(r"(\d+(?:\.\d+)?)\s*s?", spec.lower()):
        return float(seconds[1])
    if clock := re.fullmatch(r"(?:day\s+(\d+)\s+)?" + _CLOCK, spec.lower()):
        hour, minute, second = int(clock[2]), int(clock[3]), int(clock[4] or 0)
        if hour > 23 or minute > 59 or second > 59:
            raise TimeSpecError(f"{text!r} is not a clock time")
        if clock[1] is not None:
            if int(clock[1]) < 1:
                raise TimeSpecError(f"{text!r}: days count from 1 (the day the run started)")
            day = start.date() + timedelta(days=int(clock[1]) - 1)
            when = datetime(day.year, day.month, day.day, hour, minute, second)
        else:
            when = start.replace(hour=hour, minute=minute, second=second, microsecond=0)
            if when < start:
                when += timedelta(days=1)
        return (when - start).total_seconds()
    try:
        when = datetime.fromisoformat(spec)
    except ValueError:
        raise TimeSpecError(f"{text!r} is not a time; write {MOMENTS}") from None
    return (when - start).total_seconds()


class MomentError(ValueError):
    """A moment that is not one of the run's (unreadable, before its start or after its end)."""


MOMENT_FORMATS = f"end (the default: the run's last event), {MOMENTS}"


def parse_moment(text: str | None, start: datetime, end: float) -> float:
    """Simulated seconds since the start of the moment `text` names (MOMENT_FORMATS: `end`, or
    what parse_time reads), for a run that started at `start` and whose last event is at `end`
    seconds. MomentError when it does not read or lies outside the run."""
    spec = (text or "end").strip()
    if spec.lower() == "end":
        return end
    try:
        at = parse_time(spec, start)
    except TimeSpecError as exc:
        raise MomentError(str(exc)) from None
    first, last = start, start + timedelta(seconds=end)
    if at < 0:
        raise MomentError(f"{text!r} is before the run started ({first:%a %Y-%m-%d %H:%M:%S})")
    wrapped = start + timedelta(seconds=at)
    if at > end and re.fullmatch(_CLOCK, spec.lower()) and wrapped.date() > start.date():
        # A bare clock time reads as the first such time after the start: one earlier than
        # the start's own lands on the next day, but the user meant the start's day.
        raise MomentError(f"{text!r} is before the run started ({first:%a %Y-%m-%d %H:%M:%S}; "
                          f"the next {spec} is after its end, {last:%a %H:%M:%S})")
    if at > end:
        raise MomentError(f"{text!r} is after the run's end ({last:%a %Y-%m-%d %H:%M:%S}, "
                          f"{end:g} s in)")
    return at


def clock_text(start: datetime, seconds: float) -> str:
    """Seconds since `start` as the clock a user reads: 'HH:MM' on the first day, else
    'YYYY-MM-DD HH:MM' (seconds shown when there are any)."""
    when = start + timedelta(seconds=seconds)
    shown = "%H:%M:%S" if when.second or when.microsecond else "%H:%M"
    return when.strftime(shown if when.date() == start.date() else f"%Y-%m-%d {shown}")
