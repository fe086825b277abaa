"""A deterministic stand-in model for generative agents: `--model scripted/town`.

A test double and the backend of the call-count benchmark, never a default. It answers each
purpose tag of the agent modules from the prompt alone, with plain rules: a fixed daily routine,
steps placed where the activity's words match a known place, talk when the speaker has a goal
(or on one in three encounters), invitations when the persona's `currently` or the TDP context
mentions an event with a time and place, summaries that keep the time and place, and revisions
that add an agreed appointment to the schedule. It reads only what the modules put into their
prompts, so a fact that does not reach a prompt (a summary that was never stored, a reminder that
was never injected) cannot shape what the agent does.
"""

from __future__ import annotations

import hashlib
import json
import re

from sandbox.llm import LLMRequest, ScriptedBackend

from .tdp import clip  # an STSS task (300+ characters) is longer than a TDP schema string

_EVENT = re.compile(r"(?P<what>party|gathering|picnic|meeting|concert|dinner|celebration)"
                    r"[^.\n]*? at (?P<place>[A-Z][\w' ]+?)(?: at | on |,|\.|\n)"
                    r"[^\n]*?(?P<hour>\d{1,2}):(?P<minute>\d{2})", re.IGNORECASE)
_HOUR = re.compile(r"(\d{1,2}):00")


def _prompt(request: LLMRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _section(prompt: str, start: str, end: str | None = None) -> str:
    _, _, rest = prompt.partition(start)
    return rest.partition(end)[0] if end else rest


def _event(text: str):
    """(what, place, hour) of an event mentioned with a place and a time, or None."""
    m = _EVENT.search(text)
    return (m["what"].lower(), m["place"].strip(), int(m["hour"])) if m else None


def _goal_text(prompt: str) -> str:
    """The parts of a prompt that state the speaker's own aims: `Currently:` of the persona and
    the task planner's context (TDP), not memories (hearsay is not a goal)."""
    lines = [line for line in prompt.splitlines() if line.startswith("Currently:")]
    if "'s goal:" in prompt:
        lines.append(_section(prompt, "'s goal:", "\n\n"))
    return "\n".join(lines)


def daily(request: LLMRequest) -> str:
    return json.dumps({"wake_up_hour": 7, "plan": [
        "have breakfast", "work", "have lunch", "take a walk in the park", "have dinner",
        "read before bed"]})


def hourly(request: LLMRequest) -> str:
    prompt = _prompt(request)
    blocks = [(7, "having breakfast at home"), (8, "working"), (12, "having lunch at the cafe"),
              (13, "working"), (16, "taking a walk in the park"), (18, "having dinner at home"),
              (20, "reading at home"), (22, "going to bed")]
    event = _event(_section(prompt, "Keep in mind today:", "\n"))
    if event:  # a performer told to keep its event in mind puts it into the day
        what, place, hour = event
        blocks = [b for b in blocks if b[0] != hour] + [(hour, f"hosting the {what} at {place}")]
    return json.dumps({"blocks": [{"hour": h, "activity": a} for h, a in sorted(blocks)]})


def steps(request: LLMRequest) -> str:
    prompt = _prompt(request)
    activity = _section(prompt, "is busy with: ", "\n").strip().rstrip(".")
    here = _section(prompt, " is now at ", "\n").strip().rstrip(".")
    places = [line[2:].strip() for line in _section(prompt, "Places ", "Today is").splitlines()
              if line.startswith("- ")]
    words = set(re.findall(r"[a-z]+", activity.lower()))
    home = "home" in words

    def overlap(place: str) -> int:
        return len(words & set(re.findall(r"[a-z]+", place.lower().split(":", 1)[-1])))

    best = max(places, key=lambda p: (overlap(p), p == here)) if places else here
    if overlap(best) == 0:
        best = here if here in places else best
    own = _section(prompt, "Home: ", "\n").strip()
    if home and own in places:
        best = own
    elif "work" in activity.lower() and not home:
        # Somewhere outside the agent's own home (the agent knows no one else's), one per
        # person: works on any map, as it reads only the places the prompt lists.
        own_sector = own.rsplit(":", 1)[0] + ":"
        public = [p for p in places if not p.startswith(own_sector)]
        best = public[_h(_section(prompt, "Name: ", "\n")) % len(public)] if public else best
    important = 7 if re.search(r"party|hosting|gathering|meeting", activity) else 2
    return json.dumps({"steps": [
        {"description": activity, "minutes": 15, "place": best, "importance": important},
        {"description": f"{activity}, continuing", "minutes": 15, "place": best,
         "importance": max(1, important - 1)}]})


def revise(request: LLMRequest) -> str:
    prompt = _prompt(request)
    hour = int(_section(prompt, "from hour ", " ").strip() or 0)
    kept = []
    for line in _section(prompt, "rest of the day:", "Something just happened").splitlines():
        m = re.match(r"(\d{2}):\d{2}-\d{2}:\d{2} (.+)", line.strip())
        if m:
            kept.append((max(hour, int(m[1])), m[2]))
    event = _event(_section(prompt, "Something just happened:", "Rewrite"))
    if event:
        what, place, at = event
        if at >= hour:
            kept = [k for k in kept if k[0] != at] + [(at, f"attending the {what} at {place}")]
    kept = sorted(dict(sorted(kept)).items())
    return json.dumps({"blocks": [{"hour": h, "activity": a} for h, a in kept]
                       or [{"hour": hour, "activity": "going to bed"}]})


def talk(request: LLMRequest) -> str:
    prompt = _prompt(request)
    goal = _event(_goal_text(prompt))
    # One encounter in three, drawn from the situation (what follows the instructions), so
    # the draw does not change when the instructions are reworded.
    wants = goal is not None or _h(_section(prompt, "\nIt is ")) % 3 == 0
    return json.dumps({"decision": "talk" if wants else "wait",
                       "reason": "has news to share" if goal else "feels like chatting"})


def turn(request: LLMRequest) -> str:
    system = request.messages[0].content
    # The transcript is the chat itself; cues in parentheses are the module's, not speech.
    said = [m.content for m in request.messages[1:] if not m.content.startswith("(")]
    goal = _event(_goal_text(system))
    found = re.search(r"^It is [^\n]*?\. You are talking with ([^.\n]+)\.", system, re.MULTILINE)
    partner = found[1].strip() if found else "friend"
    if goal and not any("come to" in line for line in said):
        what, place, hour = goal
        text = f"{partner}, would you come to my {what} at {place} at {hour}:00 today?"
    elif said and "come to" in said[-1]:
        text = "I'd love to, I'll be there."
    else:
        text = ["Good to see you!", "How has your day been?", "Same as always, busy.",
                "Let's catch up again soon."][len(said) % 4]
    return text + (" [END]" if len(said) >= 3 else "")


def summary(request: LLMRequest) -> str:
    prompt = _prompt(request)
    partner = _section(prompt, " just talked with ", " at ").strip()
    talk_text = _section(prompt, "):", "Summarise")
    event = _event(talk_text)
    if event:
        what, place, hour = event
        text = f"{partner} and I agreed to meet for the {what} at {place} at {hour}:00 today."
        return json.dumps({"summary": text, "importance": 8, "changes_today": "yes"})
    return json.dumps({"summary": f"Had a friendly chat with {partner}.", "importance": 3,
                       "changes_today": "no"})


def importance(request: LLMRequest) -> str:
    items = [line for line in _prompt(request).splitlines() if re.match(r"\d+\. ", line)]
    return json.dumps({"scores": [8 if re.search(r"party|invite|agreed", i) else
                                  1 if re.search(r"sleeping|idle", i) else 2 + _h(i) % 3
                                  for i in items]})


def _task(request: LLMRequest) -> str:
    return _section(_prompt(request), "'s task: ", "\n")


def general_plan(request: LLMRequest) -> str:
    task = _task(request)
    event = _event(task)
    first = (f"Decide the details of the {event[0]} at {event[1]} at {event[2]}:00" if event
             else f"Decide the details: {clip(task, 120)}")
    return json.dumps({"items": [first,
                                 "Tell people the time and place",
                                 "Be there on time and welcome everyone"]})


def plan_reminder(request: LLMRequest) -> str:
    event = _event(_task(request))
    text = (f"Keep time for the {event[0]} at {event[1]} at {event[2]}:00." if event
            else f"Make room for the task: {clip(_task(request), 220)}")
    return json.dumps({"reminder": text})


def conversation_reminder(request: LLMRequest) -> str:
    return json.dumps({"checklist": ["Invite them clearly", "Say the date, time and place",
                                     "Ask them to bring friends"]})


def interview(request: LLMRequest) -> str:
    """An interview answer from the latest memory the prompt offers, so an answer shows what
    was retrieved: a different moment of the run, a different answer."""
    system = request.messages[0].content
    recalled = [line[2:] for line in _section(system, "What you remember").splitlines()
                if line.startswith("- ")]
    if not recalled:
        return "I'm afraid I don't remember anything about that."
    latest = max(recalled, key=lambda line: re.findall(r"\d\d:\d\d", line)[:1])
    return f"What comes to mind is this: {latest.rstrip('.')}."


RESPONDERS = {
    "tdp.general_plan": general_plan, "tdp.plan_reminder": plan_reminder,
    "tdp.conversation_reminder": conversation_reminder,
    "plan.daily": daily, "plan.hourly": hourly, "plan.steps": steps, "plan.revise": revise,
    "react.talk": talk, "converse.turn": turn, "converse.summary": summary,
    "memory.importance": importance, "interview.answer": interview,
}


def town_backend() -> ScriptedBackend:
    """The scripted model of generative agents (other tags: schema-filled answers); registered
    as `scripted/town` in pyproject.toml (entry point group sandbox.scripted)."""
    return ScriptedBackend(RESPONDERS, model_id="scripted/town")
