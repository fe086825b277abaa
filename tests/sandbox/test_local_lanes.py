"""The local backend's lanes and why they may answer in any order: a prompt's logits are the same
bits whatever part of it the context held, so answers do not depend on the prefix store, on the
lane, or on which call another lane finished first."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from sandbox.llm import LLMRequest, Message
from sandbox.llm.base import LLMConfigError
from sandbox.llm.local import llm_lanes


def test_lanes_are_a_setting_two_by_default_with_two_threads(monkeypatch):
    monkeypatch.delenv("SANDBOX_LLM_LANES", raising=False)
    assert llm_lanes(threads=2) == 2 and llm_lanes(threads=8) == 2
    assert llm_lanes(threads=1) == 1  # one thread: nothing to share
    monkeypatch.setenv("SANDBOX_LLM_LANES", "3")
    assert llm_lanes(threads=2) == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("SANDBOX_LLM_LANES", bad)
        with pytest.raises(LLMConfigError, match="SANDBOX_LLM_LANES"):
            llm_lanes(threads=2)


PERSONA = ("You are Maya Lindqvist, who runs the cafe by the river and keeps a tidy diary of "
           "who comes in. ") * 4


def request(question: str, seed: int, answer_before: str | None = None) -> LLMRequest:
    messages = [Message(role="system", content=PERSONA)]
    if answer_before is not None:  # a later turn: the model's own earlier answer in the prompt
        messages += [Message(role="user", content="Good morning!"),
                     Message(role="assistant", content=answer_before)]
    messages.append(Message(role="user", content=question))
    return LLMRequest(messages=messages, temperature=0.8, max_tokens=24, seed=seed, tag="test")


@pytest.mark.model
class TestOnTheEmbeddedModel:
    @pytest.fixture(scope="class")
    @classmethod
    def backend(cls, split_sensitive_weights):
        from sandbox.llm.local import LocalBackend

        return LocalBackend(n_threads=1, prefix_mb=64, dictation="sample", lanes=1,
                            weights=split_sensitive_weights)

    def prompt_logits(self, llama, tokens: list[int]) -> np.ndarray:
        """The logits the answer starts from, after the context evaluated `tokens` from
        whatever it held."""
        import llama_cpp

        first = llama.generate(tokens, temp=0.0)
        next(first)  # the prompt is evaluated and its first token picked
        first.close()
        row = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1)
        return np.ctypeslib.as_array(row, shape=(llama.n_vocab(),)).copy()

    def test_a_prompt_gives_the_same_logits_whatever_the_context_held(self, backend):
        llama = backend.contexts[0]
        tokens = llama.tokenize((PERSONA + " What is on the menu today?").encode())
        llama.reset()
        fresh = self.prompt_logits(llama, tokens)
        # all of it held already, all but its last token, and a restored state of it: llama.cpp
        # would evaluate a lone last token, computed another way
        assert (self.prompt_logits(llama, tokens) == fresh).all()
        llama.reset()
        self.prompt_logits(llama, tokens[:-1])
        assert (self.prompt_logits(llama, tokens) == fresh).all()
        saved = llama.save_state()
        llama.reset()
        self.prompt_logits(llama, llama.tokenize(b"Something else entirely."))
        llama.load_state(saved)
        assert (self.prompt_logits(llama, tokens) == fresh).all()

    @pytest.fixture(scope="class")
    @classmethod
    def small_batch(cls, backend):
        """A context of the backend's own class and weights whose batch is 64 tokens instead of
        llama-cpp-python's 512: the same split of a prompt one token longer than a batch, in an
        eighth of the evaluation (with the split undone, the logits below differ from F16 at
        either size: tests/conftest.py)."""
        from sandbox.llm.local import _llama_class

        return _llama_class()(model_path=str(backend.path), n_ctx=256, n_batch=64,
                              n_threads=1, n_threads_batch=1, verbose=False)

    def test_a_prompt_of_one_more_than_a_batch_ends_on_two_tokens(self, small_batch):
        llama = small_batch
        tokens = (llama.tokenize(PERSONA.encode()) * 8)[: llama.n_batch + 1]
        llama.reset()
        whole = self.prompt_logits(llama, tokens)
        llama.reset()
        head = llama.n_batch // 5
        llama.eval(tokens[:head])
        llama.answer_start = head  # as if a call's prompt ended there: the rest is evaluated
        assert (self.prompt_logits(llama, tokens) == whole).all()

    def test_two_lanes_asked_at_once_answer_as_one_lane_without_reuse(self,
                                                                      split_sensitive_weights):
        from sandbox.llm.local import LocalBackend

        lanes = LocalBackend(n_threads=2, prefix_mb=64, lanes=2,
                             weights=split_sensitive_weights)
        plain = LocalBackend(n_threads=1, prefix_mb=0, lanes=1, weights=lanes.weights)
        assert lanes.max_concurrency == 2
        first = plain.complete(request("Good morning!", seed=1)).text
        asked = [request("Good morning!", seed=1),
                 request("What will you bake today?", seed=2),
                 request("Who came in yesterday?", seed=3, answer_before=first),
                 request("What will you bake today?", seed=4, answer_before=first)]
        with ThreadPoolExecutor(max_workers=2) as pool:
            together = [c.text for c in pool.map(lanes.complete, asked)]
        # plain's answer to the first is `first`, already computed
        assert together == [first] + [plain.complete(r).text for r in asked[1:]]
        assert all(llama.n_tokens for llama in lanes.contexts)  # both lanes answered
        assert lanes.contexts[0].cache is lanes.contexts[1].cache  # one store for both
