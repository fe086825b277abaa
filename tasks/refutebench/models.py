"""RefuteBench's item files: the query templates (the paper's Table 3, in our wording), the seed
queries of the three task families, and the pool of unrelated requests for the persistent
setting. Authored in YAML (tasks/refutebench/items.yaml); a bad file fails naming the file, the
field and the reason.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tasks.kit import Sampling

SCENARIO = "refutebench"
ANSWER_TAG = "refutebench.answer"  # the model under test's calls
USER, ASSISTANT = "User", "Assistant"  # the two speakers of a dialogue

FAMILIES = ("mt", "summ", "writing")
FAMILY_NAMES = {"mt": "MT", "summ": "Sum", "writing": "Writing"}  # the paper's column heads
WRITING_KINDS = ("article", "counter", "story")
SETTINGS = ("transient", "persistent")
FOCI = ("style", "word usage", "phrase usage")  # what a refutation is about (Fig. 3)
REFUTATIONS = 3  # K: refutations per transient dialogue
ASSISTANT_SYSTEM = "You are a helpful assistant."  # [1.0]: every 1.0 file's system prompt

# Summaries need documents long enough to shorten and short enough for a small context.
SUMM_WORDS = (150, 400)
MT_MAX_WORDS = 80

# The model under test decodes greedily (the paper); the refuter too ([ours]: temperature 0,
# the spec's section 3); answers and judgments get room for a whole article ([ours] >= 1024 would
# be the spec's choice for large models; the embedded model's context is 2048 tokens in all).
ANSWER_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=512)
REFUTER_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=256)
JUDGE_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=384)

Family = Literal["mt", "summ", "writing"]


class Templates(BaseModel):
    """How a seed becomes the first user turn. `{text}` is the seed's text; the MT template
    also names the target language as `{language}`."""

    model_config = ConfigDict(extra="forbid")

    mt: str
    summ: str
    article: str
    counter: str
    story: str

    @model_validator(mode="after")
    def _placeholders(self) -> Templates:
        for key in ("mt", "summ", *WRITING_KINDS):
            if "{text}" not in getattr(self, key):
                raise ValueError(f"template {key!r} has no {{text}} slot")
        if "{language}" not in self.mt:
            raise ValueError("template 'mt' has no {language} slot")
        return self


class Seed(BaseModel):
    """One seed query's input: an English sentence (mt), a document (summ), or a headline, a
    post or a story prompt (writing, by `kind`)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=60)
    family: Family
    kind: Literal["article", "counter", "story"] | None = None
    text: str = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self) -> Seed:
        words = len(self.text.split())
        if self.family == "writing" and self.kind is None:
            raise ValueError("a writing seed needs a kind (article, counter or story)")
        if self.family != "writing" and self.kind is not None:
            raise ValueError(f"only writing seeds have a kind, not {self.family}")
        if self.family == "summ" and not SUMM_WORDS[0] <= words <= SUMM_WORDS[1]:
            raise ValueError(f"a document to summarise has {SUMM_WORDS[0]}-{SUMM_WORDS[1]} "
                             f"words, this one {words}")
        if self.family == "mt" and words > MT_MAX_WORDS:
            raise ValueError(f"a sentence to translate has at most {MT_MAX_WORDS} words, this "
                             f"one {words}")
        return self

    @property
    def template_key(self) -> str:
        return self.kind or self.family


class ItemFile(BaseModel):
    """The whole file: templates, seeds (ids unique) and unrelated requests."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    templates: Templates
    seeds: list[Seed] = Field(min_length=1)
    distractors: list[str] = Field(min_length=1)

    @field_validator("distractors")
    @classmethod
    def _distinct(cls, requests: list[str]) -> list[str]:
        seen: set[str] = set()
        for i, text in enumerate(requests):
            if not text.strip():
                raise ValueError(f"request {i} is empty")
            if text in seen:
                raise ValueError(f"request {i} appears twice: {text[:40]!r}")
            seen.add(text)
        return requests

    @model_validator(mode="after")
    def _unique_ids(self) -> ItemFile:
        first: dict[str, int] = {}
        for i, seed in enumerate(self.seeds):
            j = first.setdefault(seed.id, i)
            if j != i:
                raise ValueError(f"seeds {j} and {i} share the id {seed.id!r}")
        return self

    def query(self, seed: Seed, language: str) -> str:
        """The seed's first user turn."""
        template = getattr(self.templates, seed.template_key)
        return template.replace("{language}", language).replace("{text}", seed.text.strip())
