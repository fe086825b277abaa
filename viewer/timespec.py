"""Reading the times and durations a user types: `--every 10m`, `--from 08:30`, `--to +2h`."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

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
    if seconds <= 0:
        raise TimeSpecError(f"{text!r}: a duration must be positive")
    return seconds


def parse_time(text: str, start: datetime) -> float:
    """A moment of the run as seconds since its start.

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
