"""The forms a person answers when they play a resident: one per point of choice of the
architecture, each turning the person's few answers into the answer the call expects.

    form = decision_form(request)        # None: not a point of choice a person decides
    text = form.answer({"decision": "talk"})

| purpose        | the person is asked                                | becomes                  |
|----------------|----------------------------------------------------|--------------------------|
| plan.daily     | when to get up; what to do today (a ;-list)        | DailyPlan                |
| plan.hourly    | at what hour each of those things happens, and     | Schedule                 |
|                | one more thing to add if they like                 |                          |
| plan.revise    | the same, for the rest of the day after a talk     | Schedule                 |
|                | that changed it                                    |                          |
| plan.steps     | where to go for the activity at hand (one of the   | Steps: one step filling  |
|                | places the resident knows), and what to do there   | the window               |
| react.talk     | talk to the one met, or wait                       | TalkDecision             |
| converse.turn  | the line to say; whether it ends the talk          | the chat line + [END]    |

Each field's default is the call's own fallback (the plan a model would have fallen back to,
the place where the resident is), so Enter goes on as a careful do-nothing would. A step's
importance (memory bookkeeping) is the fallback's; a decision's reason says the person chose.
Which purposes go to the person and why: tasks/routing.py (HUMAN_PURPOSES).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sandbox.llm import LLMRequest
from sandbox.llm.human import Field, Form

from .chat import END_MARK

HOURS = tuple(f"{h:02d}:00" for h in range(24))
DROP = "-"  # a schedule's hour choice that leaves the activity out


def decision_form(request: LLMRequest) -> Form | None:
    """The form for a request at a point of choice; None for any other purpose."""
    build = _FORMS.get(request.tag)
    return None if build is None else build(request)


def prompt_lines(request: LLMRequest) -> list[str]:
    """The call's prompt as the person reads it beside the form: its lines without the
    answer-format instructions a model needs (the form is the format)."""
    lines: list[str] = []
    for message in request.messages:
        for line in message.content.splitlines():
            if "JSON" in line or END_MARK in line:
                continue
            if line.strip() or (lines and lines[-1].strip()):  # one blank line between parts
                lines.append(line.rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _daily(request: LLMRequest) -> Form:
    fallback = request.fallback
    wake = tuple(str(h) for h in range(4, 12))

    def build(v: dict[str, str]) -> str:
        items = [item.strip() for item in v["plan"].split(";") if item.strip()]
        if not 3 <= len(items) <= 8:
            raise ValueError(f"the plan: 3 to 8 things separated by ';' ({len(items)} given)")
        return json.dumps({"wake_up_hour": int(v["wake_up_hour"]), "plan": items})

    return Form(request.tag, request.agent or "", f"{_now(request)}your plan for "
                f"{request.about.get('date', 'today')}: when you get up and what you do",
                prompt_lines(request), [
                    Field("wake_up_hour", "wake up at (hour)", "choice", wake,
                          str(fallback.wake_up_hour)),
                    Field("plan", "what you do today, in order, separated by ;",
                          default="; ".join(fallback.plan), max_length=8 * 81)], build)


def _schedule(request: LLMRequest) -> Form:
    """plan.hourly and plan.revise: an hour for each activity (or '-' to leave it out), and
    one more activity at an hour."""
    blocks = request.fallback.blocks
    fields = [Field(f"hour_{i}", b.activity, "choice", (DROP, *HOURS), HOURS[b.hour])
              for i, b in enumerate(blocks)]
    fields += [Field("add", "one more thing to do (empty: nothing)", max_length=80),
               Field("add_hour", "at (hour)", "choice", HOURS, HOURS[blocks[-1].hour])]

    def build(v: dict[str, str]) -> str:
        items = [{"hour": int(v[f"hour_{i}"][:2]), "activity": b.activity}
                 for i, b in enumerate(blocks) if v[f"hour_{i}"] != DROP]
        if v["add"]:
            items.append({"hour": int(v["add_hour"][:2]), "activity": v["add"]})
        if not items:
            raise ValueError("keep at least one activity")
        return json.dumps({"blocks": sorted(items, key=lambda i: i["hour"])})

    if request.tag == "plan.revise":
        title = (f"It is {request.about.get('now', 'now')}: the rest of your day after "
                 f"{request.about.get('reason', 'what happened')}")
    else:
        title = (f"{_now(request)}your day, {request.about.get('date', 'today')}: when does "
                 "each thing start?")
    return Form(request.tag, request.agent or "", title, prompt_lines(request), fields, build)


def _now(request: LLMRequest) -> str:
    now = request.about.get("now")
    return f"It is {now}: " if now else ""


def _places(request: LLMRequest) -> tuple[str, ...]:
    """The places a step may name: the enum the schema binds `place` to."""
    schema = request.json_schema() or {}
    step = next(iter((schema.get("$defs") or {}).values()), {})
    return tuple(step.get("properties", {}).get("place", {}).get("enum", ()))


def _steps(request: LLMRequest) -> Form:
    first = request.fallback.steps[0]
    about = request.about

    def build(v: dict[str, str]) -> str:
        return json.dumps({"steps": [{"description": v["what"], "minutes": 60,
                                      "place": v["place"], "importance": first.importance}]})

    return Form(request.tag, request.agent or "",
                f"Where do you go for '{about.get('activity', first.description)}'"
                f" ({about.get('start', '?')}-{about.get('end', '?')})?",
                prompt_lines(request), [
                    Field("place", "where", "choice", _places(request), first.place),
                    Field("what", "what you are doing there (e.g. baking bread)",
                          default=first.description, max_length=80)], build)


def _talk(request: LLMRequest) -> Form:
    other = request.about.get("other", "someone")
    doing = request.about.get("other_doing")

    def build(v: dict[str, str]) -> str:
        return json.dumps({"decision": v["decision"],
                           "reason": f"the person chose to {v['decision']}"})

    return Form(request.tag, request.agent or "",
                f"You see {other}" + (f", {doing}" if doing else "") + ". Talk now, or wait?",
                prompt_lines(request),
                [Field("decision", "talk or wait", "choice", ("talk", "wait"), "wait")], build)


def _turn(request: LLMRequest) -> Form:
    partner = request.about.get("partner", "them")

    def build(v: dict[str, str]) -> str:
        if not v["line"]:
            raise ValueError("type what you say")
        return v["line"] + (f" {END_MARK}" if v["end"] == "yes" else "")

    return Form(request.tag, request.agent or "", f"What do you say to {partner}?",
                chat_lines(request, partner), [
                    Field("line", "you say (one or two sentences)", max_length=300),
                    Field("end", "end the conversation with this line", "choice",
                          ("no", "yes"), "no")], build)


def chat_lines(request: LLMRequest, partner: str) -> list[str]:
    """A conversation as the person reads it: the situation, then the lines so far."""
    lines = prompt_lines(request.model_copy(update={"messages": request.messages[:1]}))
    for message in request.messages[1:]:
        who = "you" if message.role == "assistant" else partner
        lines += [f"{who}: {line}" for line in message.content.splitlines() if line.strip()]
    return lines


_FORMS: dict[str, Callable[[LLMRequest], Form]] = {
    "plan.daily": _daily, "plan.hourly": _schedule, "plan.revise": _schedule,
    "plan.steps": _steps, "react.talk": _talk, "converse.turn": _turn,
}
FORM_PURPOSES = frozenset(_FORMS)
