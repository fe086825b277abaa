"""Which calls of a town episode the evaluated model answers: the STSS protocol's roles.

The STSS paper (section 5.1) gives the evaluated model "target-driven plans, conversations,
and high-level planning for the performer agent, while the low-level simulation is delegated"
to another model, which also runs every background resident. The authors' public code picks
the performer's model in exactly these places, and `paper` routing does the same:

| purpose                      | what it is                                  | answered by |
|------------------------------|---------------------------------------------|-------------|
| tdp.general_plan             | TDP: the plan towards the task's target     | evaluated   |
| tdp.plan_reminder            | TDP: the daily-requirement reminder         | evaluated   |
| tdp.conversation_reminder    | TDP: the reminder before a conversation     | evaluated   |
| plan.daily                   | the day's plan (with or without TDP)        | evaluated   |
| converse.turn                | each line the performer speaks              | evaluated   |
| everything else              | hourly schedule, step decomposition, plan   | background  |
|                              | revision, whether to start a conversation,  |             |
|                              | the conversation's summary, importance,     |             |
|                              | reflection                                  |             |

Every call of a background resident goes to the background model. `all` routing gives every
call of the performer to the evaluated model. tasks/stss/README.md holds the same table for a
reader; `sandbox run town_day --performer NAME --background-model M` routes the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from sandbox.llm import LLMRequest

Routing = Literal["paper", "all"]
ROUTINGS = ("paper", "all")
EVALUATED, BACKGROUND = "evaluated", "background"

# The performer's purposes the evaluated model answers under `paper` routing (the table above).
PAPER_PURPOSES = frozenset({
    "tdp.general_plan", "tdp.plan_reminder", "tdp.conversation_reminder",
    "plan.daily", "converse.turn",
})


def performer_route(performer: str, routing: Routing) -> Callable[[LLMRequest], str]:
    """The Router's rule: the role (evaluated or background) that answers a request."""
    if routing not in ROUTINGS:
        raise ValueError(f"unknown performer routing {routing!r}: use one of {ROUTINGS}")

    def route(request: LLMRequest) -> str:
        if request.agent != performer:
            return BACKGROUND
        if routing == "all" or request.tag in PAPER_PURPOSES:
            return EVALUATED
        return BACKGROUND

    return route
