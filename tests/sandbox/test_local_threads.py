"""How many CPU threads the embedded model takes: every core unless SANDBOX_LLM_THREADS says."""
import os

import pytest

from sandbox.llm.base import LLMConfigError
from sandbox.llm.local import llm_threads


def test_the_embedded_model_uses_every_core_by_default(monkeypatch):
    monkeypatch.delenv("SANDBOX_LLM_THREADS", raising=False)
    assert llm_threads() == (os.cpu_count() or 2)


def test_sandbox_llm_threads_sets_the_thread_count(monkeypatch):
    monkeypatch.setenv("SANDBOX_LLM_THREADS", "1")
    assert llm_threads() == 1


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_thread_count_is_a_clear_error(monkeypatch, value):
    monkeypatch.setenv("SANDBOX_LLM_THREADS", value)
    with pytest.raises(LLMConfigError, match="SANDBOX_LLM_THREADS"):
        llm_threads()
