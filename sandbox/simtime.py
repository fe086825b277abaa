"""How long an episode may be in simulated time: the maximum, and the check every template,
window and config goes through before anything runs. Kept out of the engine so that the task
files that check it load no SimPy.
"""

from __future__ import annotations

import math

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
