"""The SimulBench user agent: an LLM playing a person who puts a simulator through its paces.

Each call is stateless (as in the paper): it sees the task's name, the kind of request the
simulation takes (`request_type`) and the whole dialogue so far, picks one strategy and writes
the next request. The strategies (paper section 3.2): point out an error or ask for an
improvement, build on the state or results so far (next step), try a rarer or harder request
in the same domain (new request), or something else it must explain. The answer is a small JSON
object bound to a schema ({"user": {"strategy", "request"}}); a fenced or wrapped answer is
repaired, a broken one re-asked, and after the last attempt a plain follow-up is used and
counted as a fallback, so a bad answer never stops a collection. Temperature 1.2 by default.
Each request is logged with its strategy (a `user_request_written` event): as written, and read
as one of STRATEGIES ("unnamed" when it names none, "fallback" when none was usable).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sandbox.engine import Engine
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

from .events import UserRequestWritten
from .models import STRATEGIES, SYSTEM_PROMPT, SimTask

USER_TAG = "simulbench.user"
PROMPTS = Path(__file__).with_name("prompts")
TEMPLATE = "simulbench_user.j2"
# How a strategy may be written: its name (any case, spaces or hyphens for the underscore), or
# its number in the prompt's list at the start ("2", "2.", "(2)").
_NAMED = re.compile(r"\b(improvement|next[ _-]?step|new[ _-]?request|other)s?\b", re.IGNORECASE)
_NUMBERED = re.compile(r"^\W*([1-4])\b")


def strategy_of(said: str) -> str:
    """The strategy a user agent's `strategy` text names: the first of STRATEGIES it mentions,
    or its number at the start; "unnamed" when it names none."""
    numbered = _NUMBERED.match(said)
    if numbered:
        return STRATEGIES[int(numbered.group(1)) - 1]
    named = _NAMED.search(said)
    if named is None:
        return "unnamed"
    return re.sub(r"[ -]", "_", named.group(1).lower()).replace("nextstep", "next_step") \
        .replace("newrequest", "new_request")


class UserRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    strategy: str = Field(min_length=1)
    request: str = Field(min_length=1)


class UserGeneration(BaseModel):
    """What the user agent answers: its strategy and its next request."""

    model_config = ConfigDict(extra="ignore")

    user: UserRequest


FALLBACK = UserGeneration(user=UserRequest(strategy="fallback",
                                           request="Please continue with the next step."))


class UserAgent:
    """Writes the user's next request from the task and the dialogue so far."""

    def __init__(self, task: SimTask, *, llm, sampling):
        self.task = task
        self.llm = llm
        self.sampling = sampling
        self.generations: list[dict] = []  # every answer as given (strategy and request)

    def messages(self, history: list[Message]) -> list[Message]:
        prompt = render(PROMPTS, TEMPLATE, task=self.task, history=history,
                        strategies=STRATEGIES)
        return [Message(role="system", content=SYSTEM_PROMPT),
                Message(role="user", content=prompt)]

    def request(self, engine: Engine, history):
        """A process step: the next user request (a string)."""
        request = LLMRequest(messages=self.messages(history.messages), tag=USER_TAG,
                             agent="User", schema=UserGeneration, fallback=FALLBACK,
                             temperature=self.sampling.temperature, top_p=self.sampling.top_p,
                             max_tokens=self.sampling.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        fallback = "fallback" in completion.faults or completion.parsed is None
        generation = FALLBACK if fallback else completion.parsed
        self.generations.append(generation.model_dump())
        text = generation.user.request.strip() or FALLBACK.user.request
        engine.emit(UserRequestWritten(
            t=engine.now, agent="User", turn=len(history.messages) // 2 + 1,
            strategy="fallback" if fallback else strategy_of(generation.user.strategy),
            said=generation.user.strategy, request=text))
        return text
