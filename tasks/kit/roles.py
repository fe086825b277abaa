"""Roles of a dialogue: who takes part (player, interrogator, simulated user, refuter, ...),
with which model and which sampling. A role's model id and sampling go in the run header
(`models` and `config.sampling`), so a run says who played what."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


class Sampling(BaseModel):
    """Sampling parameters of one role."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(ge=0, le=2)
    top_p: float = Field(gt=0, le=1)
    max_tokens: int = Field(ge=8)


@dataclass(frozen=True)
class Role:
    """A part in a benchmark's dialogue, as its command line offers it.

    `name` is the option (`--player MODEL`, `--player-temperature`, ...) and the key in the
    run header; `tag` is the purpose its LLM calls carry (calls.jsonl counts them by role)."""

    name: str
    sampling: Sampling
    tag: str
    help: str = ""
    tokens_help: str = "per answer"


@dataclass
class Cast:
    """The models and sampling chosen for every role of one benchmark run, and the LLM stack
    of each role for one run directory (`llms`, filled by the runner per item)."""

    models: dict[str, str]
    sampling: dict[str, Sampling]
    llms: dict[str, object] | None = None

    def llm(self, role: str):
        return None if self.llms is None else self.llms[role]
