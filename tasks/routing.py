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

A person playing a resident (`sandbox run ... --human NAME`, `human_route`) answers that
resident's points of choice, the decisions a player makes, and the model (`--model`) answers
everything else, as the engine's part of the resident:

| purpose                      | answered by | why                                        |
|------------------------------|-------------|--------------------------------------------|
| plan.daily                   | the person  | what to do today: the player's plan        |
| plan.hourly, plan.revise     | the person  | when: the player's schedule, and its change |
|                              |             | after a talk                               |
| plan.steps                   | the person  | where to go next for the activity at hand   |
| react.talk                   | the person  | whether to talk to someone met             |
| converse.turn                | the person  | each line said, typed                      |
| tdp.*                        | the model   | a model's aid to keep its task in mind; the |
|                              |             | person sees the task on the screen         |
| converse.summary,            | the model   | memory: what the resident remembers and    |
| memory.importance, reflect.* |             | how much it matters is bookkeeping, not a  |
|                              |             | choice a player makes                      |

Paths along the map are the engine's (no call). agents/human.py holds the form of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from sandbox.llm import LLMRequest

Routing = Literal["paper", "all"]
ROUTINGS = ("paper", "all")
EVALUATED, BACKGROUND, HUMAN = "evaluated", "background", "human"

# The performer's purposes the evaluated model answers under `paper` routing (the table above).
PAPER_PURPOSES = frozenset({
    "tdp.general_plan", "tdp.plan_reminder", "tdp.conversation_reminder",
    "plan.daily", "converse.turn",
})


# The purposes a person playing a resident answers (the second table above).
HUMAN_PURPOSES = frozenset({
    "plan.daily", "plan.hourly", "plan.revise", "plan.steps", "react.talk", "converse.turn",
})


# How the header names the purposes a role answers that no list names (config.roles.purposes).
REST = "every other purpose"


def performer_purposes(routing: Routing) -> dict[str, list[str] | str]:
    """The performer's purposes by the role that answers them, as the run header records them
    (config.roles.purposes): a reader of the run knows the split without its calls."""
    if routing == "all":
        return {EVALUATED: REST}
    return {EVALUATED: sorted(PAPER_PURPOSES), BACKGROUND: REST}


def human_purposes() -> dict[str, list[str] | str]:
    """The person's resident's purposes by the role that answers them (config.roles.purposes)."""
    return {HUMAN: sorted(HUMAN_PURPOSES), EVALUATED: REST}


def human_route(person: str) -> Callable[[LLMRequest], str]:
    """The Router's rule with a person playing `person`: their points of choice to the person
    (role `human`), every other call to the model (role `evaluated`)."""

    def route(request: LLMRequest) -> str:
        return HUMAN if request.agent == person and request.tag in HUMAN_PURPOSES else EVALUATED

    return route


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
