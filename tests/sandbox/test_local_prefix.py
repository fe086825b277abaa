"""The local backend's prompt-prefix store: the longest stored prefix is restored, the memory
budget evicts the least recently used states, and a restored state answers validly."""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import BaseModel, Field

from sandbox.llm import LLMRequest, Message
from sandbox.llm.base import LLMConfigError
from sandbox.llm.local import (
    DEFAULT_PREFIX_STORE_MB,
    dictation_mode,
    grammar_order,
    prefix_store,
    prefix_store_mb,
    weights_setting,
)


def state(tokens: list[int], kv_bytes: int = 1000) -> SimpleNamespace:
    """What the store keeps of a llama state: its tokens, KV bytes and the logits row."""
    return SimpleNamespace(input_ids=np.array(tokens, dtype=np.intc), n_tokens=len(tokens),
                           llama_state=(ctypes.c_uint8 * kv_bytes)(),
                           llama_state_size=kv_bytes, scores=np.zeros((1, 10), dtype=np.single))


def test_the_longest_matching_prefix_is_found():
    store = prefix_store(1 << 20)
    store[(1, 2, 3)] = state([1, 2, 3])
    store[(1, 2, 3, 4, 5)] = state([1, 2, 3, 4, 5])
    store[(9, 9)] = state([9, 9])
    assert store[(1, 2, 3, 4, 5, 6, 7)].input_ids.tolist() == [1, 2, 3, 4, 5]
    assert store[(1, 2, 8)].input_ids.tolist() in ([1, 2, 3], [1, 2, 3, 4, 5])
    with pytest.raises(KeyError):
        store[(7, 7)]


def test_the_budget_counts_the_whole_state_and_evicts_the_least_recently_used():
    per_state = 1000 + 40 + 3 * 4  # KV bytes, one row of logits, three token ids
    store = prefix_store(per_state * 2)
    store[(1, 1, 1)] = state([1, 1, 1])
    store[(2, 2, 2)] = state([2, 2, 2])
    store[(1, 1, 1, 5)]  # a lookup makes (1, 1, 1) the most recently used
    store[(3, 3, 3)] = state([3, 3, 3])  # over budget: (2, 2, 2) goes
    assert set(store.cache_state) == {(1, 1, 1), (3, 3, 3)}
    assert store.cache_size == per_state * 2


def test_a_state_is_stored_under_the_prompt_it_holds_not_the_answer_after_it():
    store = prefix_store(1 << 20)
    store[(1, 2, 3, 7, 7)] = state([1, 2, 3])  # the call's prompt 1 2 3, its answer 7 7
    assert list(store.cache_state) == [(1, 2, 3)]


def test_an_evicted_states_buffer_is_handed_to_the_next_state_saved():
    store = prefix_store(2 * (1000 + 40 + 3 * 4))
    first = state([1, 1, 1])
    kept = first.llama_state
    store[(1, 1, 1)] = first
    store[(2, 2, 2)] = state([2, 2, 2])
    store[(3, 3, 3)] = state([3, 3, 3])  # (1, 1, 1) goes
    assert first.llama_state is None  # a lane that found it before skips it
    assert store.buffer(2000) is not kept  # too small for this one: a new buffer
    assert store.buffer(900) is kept  # big enough: the evicted state's memory
    assert store.buffer(900) is not kept  # handed out once


def test_the_budget_is_a_setting_with_a_clear_error(monkeypatch):
    monkeypatch.delenv("SANDBOX_LLM_PREFIX_MB", raising=False)
    assert prefix_store_mb() == DEFAULT_PREFIX_STORE_MB
    monkeypatch.setenv("SANDBOX_LLM_PREFIX_MB", "0")
    assert prefix_store_mb() == 0
    monkeypatch.setenv("SANDBOX_LLM_PREFIX_MB", "lots")
    with pytest.raises(LLMConfigError, match="SANDBOX_LLM_PREFIX_MB"):
        prefix_store_mb()


@pytest.mark.parametrize("setting, read, default, other", [
    ("SANDBOX_LLM_GRAMMAR", grammar_order, "last", "first"),
    ("SANDBOX_LLM_WEIGHTS", weights_setting, "auto", "q8_0"),
    ("SANDBOX_LLM_DICTATION", dictation_mode, "write", "sample"),
])
def test_a_choice_setting_has_a_default_and_a_clear_error(monkeypatch, setting, read, default,
                                                          other):
    monkeypatch.delenv(setting, raising=False)
    assert read() == default
    monkeypatch.setenv(setting, other)
    assert read() == other
    monkeypatch.setenv(setting, "middle")
    with pytest.raises(LLMConfigError, match=setting):
        read()


class Plan(BaseModel):
    activity: str = Field(max_length=40)  # the grammar keeps the answer short
    minutes: int


@pytest.mark.model
def test_a_restored_prefix_answers_a_schema_bound_call_validly(embedded_weights):
    from sandbox.llm.local import LocalBackend
    from sandbox.llm.structured import parse_structured

    backend = LocalBackend(n_threads=1, prefix_mb=256, weights=embedded_weights)

    def ask(who: str, question: str, schema=None, max_tokens: int = 60):
        system = (f"You are {who}, who lives in a small river town and keeps a tidy diary. "
                  * 6)
        return backend.complete(LLMRequest(
            messages=[Message(role="system", content=system),
                      Message(role="user", content=question)],
            schema=schema, temperature=0.0, max_tokens=max_tokens, seed=1, tag="test"))

    # The greetings only fill the store (each call's prompt is stored, whatever its answer):
    # a few tokens of answer do that as well as a whole greeting.
    first = ask("Maya", "Say hello.", max_tokens=4)
    ask("Julian", "Say hello.", max_tokens=4)  # another agent between: the context holds Julian
    again = ask("Maya", "What will you do next, and for how many minutes?", Plan)
    assert not first.prefix_restored
    assert again.prefix_restored and again.prefix_tokens > 50  # Maya's prefix came back
    parsed, faults = parse_structured(again.text, Plan)
    assert isinstance(parsed, Plan), (again.text, faults)


def test_sandbox_log_shows_how_much_prompt_evaluation_was_saved(tmp_path, capsys):
    import json

    from sandbox.app.cli import main

    out = tmp_path / "room"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(out),
                 "--quiet"]) == 0
    calls = out / "calls.jsonl"
    records = [json.loads(line) for line in calls.read_text().splitlines()]
    for i, record in enumerate(records):  # as the local backend would have written them
        record.update(prompt_tokens=100, prefix_tokens=80 if i else 0, prefix_restored=i > 0,
                      prefix_restore_s=0.01 if i else 0.0)
    calls.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["log", str(out)]) == 0
    n = len(records)
    assert (f"prompt prefix reuse: {80 * (n - 1)} of {100 * n} prompt tokens not evaluated "
            f"again") in capsys.readouterr().out
