"""The local backend's sampling under a grammar (sandbox/llm/llama_sampling.py): greedy answers
are llama-cpp-python's own, a token the grammar turns down is drawn again within the grammar,
and a seed gives the same answer every time."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from sandbox.llm import LLMRequest, Message
from sandbox.llm.structured import parse_structured

pytestmark = pytest.mark.model


class Step(BaseModel):
    description: str = Field(max_length=60)
    minutes: int
    # Places no model would write unprompted: the grammar must steer every character.
    place: Literal["quay 7 (north)", "the old tannery yard"]


class Steps(BaseModel):
    steps: list[Step] = Field(min_length=1, max_length=2)


def request(temperature: float, seed: int = 1, schema=Steps, max_tokens: int = 120
            ) -> LLMRequest:
    return LLMRequest(
        messages=[Message(role="system", content="You are Maya, who runs a small cafe."),
                  Message(role="user", content="Plan your next half hour in steps, as JSON.")],
        schema=schema, temperature=temperature, max_tokens=max_tokens, seed=seed, tag="test")


@pytest.fixture(scope="module")
def backends(embedded_weights):
    from sandbox.llm.local import LocalBackend

    return {"stock": LocalBackend(n_threads=1, prefix_mb=0, grammar="first",
                                  weights=embedded_weights),
            "grammar_last": LocalBackend(n_threads=1, prefix_mb=0, grammar="last",
                                         dictation="sample", weights=embedded_weights)}


def test_greedy_answers_are_the_grammar_first_chains(backends):
    # Free text has no closing brace to end it and may run to its token limit: 48 tokens are
    # 48 picks of the two chains compared (120 compared more of the same kind of pick).
    for schema, max_tokens in ((Steps, 120), (None, 48)):
        asked = request(0.0, schema=schema, max_tokens=max_tokens)
        stock = backends["stock"].complete(asked).text
        assert backends["grammar_last"].complete(asked).text == stock


def test_a_vetoed_token_is_drawn_again_within_the_grammar(backends):
    model = backends["grammar_last"]
    sampled = []
    original = model.contexts[0]._init_sampler

    def keep(**options):
        sampler = original(**options)
        sampled.append(sampler)
        return sampler

    model.contexts[0]._init_sampler = keep
    try:
        answers = [model.complete(request(0.8, seed=seed)) for seed in (1, 2)]
    finally:
        del model.contexts[0]._init_sampler
    for answer in answers:
        parsed, faults = parse_structured(answer.text, Steps)
        assert isinstance(parsed, Steps), (answer.text, faults)
    assert sum(s.vetoes for s in sampled) > 0  # the places had to be forced


def test_the_same_seed_gives_the_same_answer(backends):
    model = backends["grammar_last"]
    first = model.complete(request(0.8, seed=5)).text
    assert model.complete(request(0.8, seed=5)).text == first


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_a_veto_answered_from_the_shortlist_is_the_whole_vocabularys_answer(
        backends, monkeypatch, temperature):
    """After a veto the grammar is asked about the best 512 tokens first; what the sampler
    then picks must be what asking it about all 49,152 would give."""
    from sandbox.llm import llama_sampling

    model = backends["grammar_last"]
    shortlisted = model.complete(request(temperature, seed=7)).text
    monkeypatch.setattr(llama_sampling, "SHORTLIST", 0)  # every veto asks the whole vocabulary
    assert model.complete(request(temperature, seed=7)).text == shortlisted
