"""Roles: which model answers which call of an episode.

A paper evaluates a model *in a role*: a social-task paper gives the evaluated model only the
performer's high-level calls and runs the rest of the town on a background model; a role-play
benchmark's player and judge sit on different endpoints. Two shapes do that here:

- `RoleLLM(stack, role)`: one model stack as one role uses it. The engine records the role, the
  model and the endpoint alias of every call it dispatches through one (calls.jsonl).
- `Router(llms, route)`: an episode's model when its calls go to different models by who asks
  and why. `route(request)` names the role (a key of `llms`) from the request's agent and tag;
  the engine asks `pick(request)` for the role's stack before dispatching. Which purposes go
  where is the task's to say (tasks/routing.py), not the engine's.

    router = Router({"evaluated": gpt, "background": local}, route=lambda r: ...)
    engine = Engine(llm=router, ...)
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Completion, LLMRequest


class RoleLLM:
    """A model stack as one role uses it: the same stack (its cache, its connection limit),
    named by the role its calls are recorded under."""

    def __init__(self, inner, role: str):
        self.inner = inner
        self.role = role
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.endpoint = getattr(inner, "endpoint", None)

    def complete(self, request: LLMRequest) -> Completion:
        return self.inner.complete(request)


class Router:
    """An episode's model made of several roles' stacks, each call to the role `route` names.

    `default` is the role whose model stands for the episode where one model id is asked for
    (the header's default, the backend settings): the evaluated model."""

    def __init__(self, llms: dict[str, object], route: Callable[[LLMRequest], str],
                 default: str, *, named: dict[str, str] | None = None,
                 others: str | None = None, recorded: dict | None = None):
        """`named` (agent -> role) and `others` say which role's model an agent is listed with
        in the run header (`model_of`); `recorded` is what the header's config keeps of the
        roles (`config.roles`: who answered what, without a credential)."""
        if default not in llms:
            raise ValueError(f"the default role {default!r} has no model")
        self.llms = {role: RoleLLM(llm, role) for role, llm in llms.items()}
        self.route = route
        self.default = default
        self.named = dict(named or {})
        self.others = others or default
        self.recorded = dict(recorded or {})
        self.inner = self.llms[default].inner  # what backend_settings and cache_in walk
        self.model_id = self.inner.model_id
        self.endpoint = getattr(self.inner, "endpoint", None)
        # Calls in flight at once: each backend still holds its own limit (ConnectionLimit);
        # the engine may have every role's share out together.
        self.max_concurrency = sum(llm.max_concurrency for llm in
                                   {id(s.inner): s for s in self.llms.values()}.values())

    def pick(self, request: LLMRequest) -> RoleLLM:
        role = self.route(request)
        if role not in self.llms:
            raise ValueError(f"a call ({request.tag}, {request.agent}) was routed to the role "
                             f"{role!r}, which has no model (roles: {', '.join(self.llms)})")
        return self.llms[role]

    def model_of(self, agent: str) -> str:
        """The model id an agent is listed with in the run header: its role's (the performer:
        the evaluated model, whose score a board's row is)."""
        return self.llms[self.named.get(agent, self.others)].model_id

    def complete(self, request: LLMRequest) -> Completion:
        return self.pick(request).complete(request)
