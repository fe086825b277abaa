"""PingPong data: character cards, situations, the set of both for one language, and sampling.

The field names follow the public PingPong settings format, so the original files load as they
are; our own set (settings.yaml) is written in the same shape. `Sampling` is the kit's.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tasks.kit import Sampling

SCENARIO = "pingpong"


class Character(BaseModel):
    """A character card: what the player is told to be. The interrogator sees only `summary`."""

    model_config = ConfigDict(extra="ignore")  # the public files carry keys we do not use

    char_name: str = Field(min_length=1)
    system_prompt: str = Field(min_length=1)  # the persona, in whatever style its author chose
    example_prompt: str | None = None  # an example exchange
    initial_message: str | None = None  # the character's greeting
    summary: str | None = None  # one or two sentences for the interrogator
    tags: list[str] = Field(default_factory=list)

    @field_validator("tags", mode="before")
    @classmethod
    def _no_tags(cls, value):  # the public files write `null` for no tags
        return value or []

    @property
    def public_summary(self) -> str:
        """What the interrogator may know: the summary, or just the name when there is none."""
        return self.summary or self.char_name


class Situation(BaseModel):
    """What the interrogator is asked to do, and for how many player turns."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    num_turns: int = Field(default=4, ge=1, le=50)  # player turns; the public code defaults to 4

    @field_validator("tags", mode="before")
    @classmethod
    def _no_tags(cls, value):
        return value or []


class RoleplaySet(BaseModel):
    """The characters and situations of one language: every pair is one conversation
    (tasks.pingpong.pair_items gives them their ids)."""

    language: str = "en"
    characters: list[Character] = Field(min_length=1)
    situations: list[Situation] = Field(min_length=1)
    source: str = ""  # the file it was read from
    ignored_keys: list[str] = Field(default_factory=list)  # unknown keys the reader skipped


# The paper's settings (section 4.2.2): player T=0.6 top_p=0.9; interrogator T=0.8 top_p=0.95;
# judge T=0.1 top_p=0.95. Token caps are ours; the judge's is per judged turn, because one judge
# answer scores every turn of a conversation.
PLAYER_SAMPLING = Sampling(temperature=0.6, top_p=0.9, max_tokens=256)
INTERROGATOR_SAMPLING = Sampling(temperature=0.8, top_p=0.95, max_tokens=100)
JUDGE_SAMPLING = Sampling(temperature=0.1, top_p=0.95, max_tokens=260)
