"""`scripted/stss-lang`: the scripted town model (agents/scripted.py) plus a rule-based judge of
goal conditions, for offline tests of the language level. A test double, never a default.

The judge reads its own prompt: a condition naming a place or a time in parentheses is met when
that place (or the hour) appears in the judged text; an invitation or a request for help is met
when the text invites, asks or agrees; an agreed time when any HH:MM appears; a step when its
keyword does; a platform when the text says "online".
"""

from __future__ import annotations

import json
import re

from agents.scripted import RESPONDERS
from sandbox.llm import LLMRequest, ScriptedBackend

_QUESTION = re.compile(r"^(c\d+)\. (.*)$", re.MULTILINE)
_INVITE = re.compile(r"\b(come|join|invite|help|agreed|meet|be there)\b", re.IGNORECASE)


def _judged(prompt: str) -> str:
    start = max(prompt.find("The conversation between"), prompt.find("What "))
    return prompt[start:prompt.find("Questions:")].lower()


def _met(question: str, text: str) -> bool:
    given = re.search(r"\(([^)]*)\)", question)
    if given:
        fact = given[1]
        clock = re.match(r"(\d{1,2}):(\d{2})", fact)
        if clock:
            return f"{int(clock[1])}:{clock[2]}" in text or f"{clock[1]}:{clock[2]}" in text
        return fact.lower() in text
    if "online" in question and "platform" in question:
        return "online" in text
    if "agree on a time" in question or "time of the meeting" in question:
        return bool(re.search(r"\d{1,2}:\d{2}", text))
    step = re.search(r"the step '([^']+)'", question)
    if step:
        return step[1].lower() in text
    return bool(_INVITE.search(text))


def judge(request: LLMRequest) -> str:
    prompt = request.messages[-1].content
    text = _judged(prompt)
    answer = {}
    for key, question in _QUESTION.findall(prompt):
        met = _met(question.strip(), text)
        answer[key] = {"reason": "found in the text" if met else "not said",
                       "answer": "yes" if met else "no"}
    return json.dumps(answer)


def stss_lang_backend() -> ScriptedBackend:
    return ScriptedBackend({**RESPONDERS, "stss_lang.judge.conversation": judge,
                            "stss_lang.judge.summary": judge}, model_id="scripted/stss-lang")
