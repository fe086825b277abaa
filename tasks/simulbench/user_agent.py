"""The SimulBench user agent: an LLM playing a person who puts a simulator through its paces.

Each call is stateless (as in the paper): it sees the task's name, the kind of request the
simulation takes (`request_type`) and the whole dialogue so far, picks one strategy and writes
the next request. The strategies (paper section 3.2): point out an error or ask for an
improvement, build on the state or results so far (next step), try a rarer or harder request
in the same domain (new request), or something else it must explain. The answer is a small JSON
object bound to a schema ({"user": {"strategy", "request"}}); a fenced or wrapped answer is
repaired, a broken one re-asked, and after the last attempt a plain follow-up is used and
counted as a fallback, so a bad answer never stops a collection. Temperature 1.2 by default.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sandbox.engine import Engine
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

from .models import SYSTEM_PROMPT, SimTask

USER_TAG = "simulbench.user"
PROMPTS = Path(__file__).with_name("prompts")
TEMPLATE = "simulbench_user.j2"
STRATEGIES = ("improvement", "next_step", "new_request", "other")


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
        generation = completion.parsed or FALLBACK
        self.generations.append(generation.model_dump())
        return generation.user.request.strip() or FALLBACK.user.request
