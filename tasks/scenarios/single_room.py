"""The single-room scenario: two chat agents in one room talk until one ends it or turns run out.

The degenerate case of the engine that the role-play, refutation and text-simulation benchmarks
reuse: same engine, LLM layer and log format, no map to walk.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from agents.chat import ChatAgent, ChatPersona, converse
from sandbox.engine import Engine
from sandbox.events import AgentJoined
from sandbox.files import load_model

DEFAULT_CONFIG = Path(__file__).with_name("single_room.yaml")
PLACE = "single_room:house:room:table"


class SingleRoomConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    personas: list[ChatPersona] = Field(min_length=2)
    situation: str = ""
    # Strict numbers: YAML's `true` once read as 1 turn, `.inf` seconds a turn ran an episode
    # that never reached its next minute (tests/fuzz/file_walk.py).
    max_turns: StrictInt = Field(default=8, ge=1, le=200)
    seconds_per_turn: float = Field(default=20.0, gt=0, le=24 * 3600, allow_inf_nan=False)
    start_time: datetime = datetime(2024, 3, 4, 10, 0)
    temperature: float = Field(default=0.7, ge=0, le=2)
    top_p: float = Field(default=0.95, gt=0, le=1)
    max_tokens: StrictInt = Field(default=80, ge=8, le=32_768)

    @field_validator("seconds_per_turn", "temperature", "top_p", mode="before")
    @classmethod
    def _no_boolean(cls, value):
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a number")
        return value

    @field_validator("personas")
    @classmethod
    def _one_name_each(cls, personas: list[ChatPersona]) -> list[ChatPersona]:
        # Events, turns and models are keyed by name: a second persona of one name would be
        # the first one speaking twice.
        names = [p.name for p in personas]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"two personas are named {twice[0]!r}; give each its own name")
        return personas


class SingleRoomScenario:
    name = "single_room"
    world = "single_room"
    until = None

    def __init__(self, config: SingleRoomConfig):
        self.cfg = config
        self.start_time = config.start_time

    @classmethod
    def from_file(cls, path: Path | str | None = None, **overrides: Any) -> SingleRoomScenario:
        config = load_model(path or DEFAULT_CONFIG, SingleRoomConfig)
        set_fields = {k: v for k, v in overrides.items() if v is not None}
        return cls(config.model_copy(update=set_fields))

    def config(self) -> dict[str, Any]:
        return self.cfg.model_dump(mode="json")

    def models(self, default_model: str) -> dict[str, str]:
        return {p.name: default_model for p in self.cfg.personas}

    def setup(self, engine: Engine) -> None:
        agents = [ChatAgent(p, temperature=self.cfg.temperature, top_p=self.cfg.top_p,
                            max_tokens=self.cfg.max_tokens) for p in self.cfg.personas]
        for agent in agents:
            engine.emit(AgentJoined(t=0, agent=agent.name, location=PLACE,
                                    persona=agent.persona.description.split(".")[0],
                                    architecture="chat"))
        engine.process(converse(engine, agents, conversation="c0", place="the room",
                                situation=self.cfg.situation, max_turns=self.cfg.max_turns,
                                seconds_per_turn=self.cfg.seconds_per_turn))
