"""Goal conditions per task type (written by us): yes/no questions a judge answers about a
conversation, or about the partner's summary of it, given the task's facts.

| type | conditions |
|---|---|
| public activity | invited, place conveyed, time conveyed |
| online activity | invited, time conveyed, platform or activity conveyed |
| inviting companions | invited, place conveyed, a time agreed |
| appointment | meeting agreed, time agreed, place agreed |
| asking for help | asked for help, each step conveyed with its place |

A condition is about what reached the partner: the performer saying it counts, the partner
guessing it does not. SR of a conversation = 1 when every condition is met; GCSR = the share
met (the STSS paper, section 3.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tasks.stss.schema import TaskType


@dataclass(frozen=True)
class Condition:
    key: str  # the answer field (c1, c2, ...) and the flag's name in a judgment
    name: str  # what it checks, for people (invited, place, time, ...)
    question: str


def place_name(address: str | None) -> str:
    """'town:Copper Kettle Cafe:dining room' -> 'Copper Kettle Cafe' (the sector: what people
    name when they say where)."""
    if not address:
        return "a place of their choice"
    parts = address.split(":")
    return parts[1] if len(parts) > 1 else parts[0]


def _when(start: Any) -> str | None:
    if not start:
        return None
    at = start if isinstance(start, datetime) else datetime.fromisoformat(str(start))
    return at.strftime("%H:%M on %A, %B %d").replace(" 0", " ")


def conditions(task: dict[str, Any]) -> list[Condition]:
    """The goal conditions of a task (its facts as a harvested scenario stores them)."""
    kind = TaskType(task["type"])
    performer, target = task["performer"], task.get("target") or "the other person"
    steps = task.get("steps") or []
    place = place_name(steps[0].get("location") if steps else None)
    activity = steps[0]["keyword"] if steps else "the activity"
    when = _when(task.get("start"))
    time_q = (f"Did {performer} tell the other person the time ({when}), or did they agree on "
              f"it?" if when else f"Did {performer} tell the other person when it happens?")
    if kind is TaskType.public_activity:
        asked = [("invited", f"Did {performer} invite the other person to the {activity}?"),
                 ("place", f"Did {performer} tell the other person where it is ({place})?"),
                 ("time", time_q)]
    elif kind is TaskType.online_activity:
        asked = [("invited", f"Did {performer} invite the other person to the online "
                             f"{activity}?"),
                 ("time", time_q),
                 ("platform", f"Did {performer} say what the online {activity} is or where "
                              "online it happens (the platform)?")]
    elif kind is TaskType.inviting_companions:
        asked = [("invited", f"Did {performer} invite the other person to come along to the "
                             f"{activity}?"),
                 ("place", f"Did {performer} tell the other person where it is ({place})?"),
                 ("time", "Did the two of them agree on a time to go?")]
    elif kind is TaskType.appointment:
        asked = [("meeting", f"Did {performer} and {target} agree to meet for the "
                             f"{activity}?"),
                 ("time", "Did they agree on the time of the meeting"
                          + (f" ({when})?" if when else "?")),
                 ("place", "Did they agree on the place of the meeting"
                           + (f" ({place})?" if steps and steps[0].get("location") else "?"))]
    else:  # asking for help
        asked = [("asked", f"Did {performer} ask the other person for help?")]
        for i, step in enumerate(steps, 1):
            where = place_name(step.get("location")) if step.get("location") else None
            asked.append((f"step{i}", f"Did {performer} explain the step '{step['keyword']}'"
                                      + (f" and where it is done ({where})?" if where else "?")))
    return [Condition(key=f"c{i}", name=name, question=q)
            for i, (name, q) in enumerate(asked, 1)]
