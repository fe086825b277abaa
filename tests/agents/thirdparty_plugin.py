"""A third-party retriever, registered only through an entry point (see test_entry_points)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class OldestFirstParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = 5


class OldestFirstRetriever:
    """Returns the oldest memories: deliberately unlike every built-in retriever."""

    Params = OldestFirstParams

    def __init__(self, params: OldestFirstParams | None = None):
        self.params = params or OldestFirstParams()

    def retrieve(self, agent, engine, query, purpose, k=None):
        return agent.memory.nodes[: k or self.params.top_k]
        yield

    def get_state(self):
        return {}

    def set_state(self, state):
        pass
