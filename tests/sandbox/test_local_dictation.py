"""Text a grammar dictates, written into a schema-bound answer without sampling
(sandbox/llm/llama_dictation.py): what counts as dictated, and that the answers stay valid, the
same for a seed, and the same with prefix reuse on and off."""

from __future__ import annotations

import json
from typing import Literal

import llama_cpp
import pytest
from pydantic import BaseModel, Field

from sandbox.llm import LLMRequest, Message
from sandbox.llm.llama_dictation import CharProbe, dictated_text, spaced_before
from sandbox.llm.structured import parse_structured


class Step(BaseModel):
    description: str = Field(max_length=60)
    minutes: int
    place: Literal["quay 7 (north)", "quay 9 (south)", "the old tannery yard"]


class Steps(BaseModel):
    steps: list[Step] = Field(min_length=1, max_length=2)


def test_the_answers_own_spacing_habit_decides_an_optional_space():
    assert spaced_before('{"a": 1', ",", '"') is None  # never seen
    assert spaced_before('{"a": 1, "b": 2', ",", '"') is True
    assert spaced_before('{"a":1,"b":2', ",", '"') is False
    assert spaced_before('{"a":1, "b":2,"c":3', ",", '"') is None  # one of each: no habit


@pytest.mark.model
class TestOnTheEmbeddedModel:
    @pytest.fixture(scope="class")
    @classmethod
    def backends(cls, split_sensitive_weights):
        from sandbox.llm.local import LocalBackend

        # Answers compared with the prefix store on and off: a format that would show a split.
        weights = split_sensitive_weights
        return {"write": LocalBackend(n_threads=1, prefix_mb=64, dictation="write",
                                      weights=weights, grammar="last"),
                "write, no reuse": LocalBackend(n_threads=1, prefix_mb=0, dictation="write",
                                                weights=weights),
                "sample": LocalBackend(n_threads=1, prefix_mb=0, dictation="sample",
                                       weights=weights)}

    def dictated_after(self, backend, written: str) -> str:
        """What the Steps grammar dictates once `written` is written."""
        from llama_cpp import LlamaGrammar, _internals

        llama = backend.contexts[0]
        grammar = _internals.LlamaSampler()
        grammar.add_grammar(llama._model, LlamaGrammar.from_json_schema(
            json.dumps(Steps.model_json_schema()), verbose=False))
        for token in llama.tokenize(written.encode(), add_bos=False, special=False):
            llama_cpp.llama_sampler_accept(grammar.sampler, token)
        return dictated_text(grammar.sampler, CharProbe(llama), written)

    def test_keys_and_the_rest_of_a_place_are_dictated(self, backends):
        model = backends["write"]
        # Before the first key: only "{" is certain; then a space or a quote, and no habit yet.
        assert self.dictated_after(model, "") == "{"
        # A place once its first letters tell it apart, and the brace after it (the last key);
        # then a space, a comma or a bracket: the model's choice.
        start = '{"steps":[{"description":"Open up","minutes":5,"place":"'
        assert self.dictated_after(model, start + "the") == ' old tannery yard"}'
        assert self.dictated_after(model, start + "quay ") == ""  # 7 or 9
        assert self.dictated_after(model, start + "quay 9") == ' (south)"}'
        # A key, with the spacing the answer has used; a number is the model's to write.
        tight = '{"steps":[{"description":"Open up","minutes":5,"place":"quay 9 (south)"},'
        assert self.dictated_after(model, tight + '{"description":"Close",') == '"minutes":'
        spaced = '{ "steps" : [ { "description" : "Open up" , "minutes" : 5 , '
        assert self.dictated_after(model, spaced) == '"place" : "'

    def request(self, temperature: float, seed: int, schema=Steps, max_tokens: int = 120
                ) -> LLMRequest:
        return LLMRequest(
            messages=[Message(role="system", content="You are Maya, who runs a small cafe."),
                      Message(role="user", content="Plan your next half hour in steps, as JSON.")],
            schema=schema, temperature=temperature, max_tokens=max_tokens, seed=seed,
            tag="test")

    def test_a_written_in_answer_is_valid_reproducible_and_the_same_with_reuse_off(self,
                                                                                 backends):
        for temperature, seed in ((0.0, 0), (0.8, 3)):
            request = self.request(temperature, seed)
            answer = backends["write"].complete(request)
            parsed, faults = parse_structured(answer.text, Steps)
            assert isinstance(parsed, Steps), (answer.text, faults)
            assert 0 < answer.dictated_tokens < answer.usage.completion_tokens
            assert backends["write"].complete(request).text == answer.text
            assert backends["write, no reuse"].complete(request).text == answer.text

    def test_the_backend_names_its_settings_for_the_run_header(self, backends,
                                                               split_sensitive_weights):
        assert backends["write"].settings() == {"weights": split_sensitive_weights,
                                                "grammar": "last",
                                                "dictation": "write", "prefix_mb": 64}
        assert backends["sample"].settings()["dictation"] == "sample"

    def test_free_text_has_nothing_dictated(self, backends):
        # Free text may run to its token limit; 48 tokens show nothing dictated and the same
        # picks as well as 120 (which only compared more of them).
        request = self.request(0.0, 0, schema=None, max_tokens=48)
        write, sample = backends["write, no reuse"], backends["sample"]
        for model in (write, sample):  # both from an empty context: the same arithmetic
            model.contexts[0].reset()
        answer = write.complete(request)
        assert answer.dictated_tokens == 0
        assert answer.text == sample.complete(request).text
