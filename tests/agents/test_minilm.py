"""The numpy MiniLM (agents/minilm.py, the default embedder) computes sentence-transformers'
all-MiniLM-L6-v2: the same vectors to float32 rounding, the same retrieval order, texts cut
where sentence-transformers cuts them, and the same bits every time."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.embedding import make_embedder

WORDS = ("the cafe party spring tasting Maya Julian walks to the park and talks about music "
         "bread coffee morning evening plans invite friends Café naïve 東京 — don't! 17:00 "
         "Copper-Kettle").split()


def _texts() -> list[str]:
    rng = random.Random(7)
    texts = ["", "hello", "Maya Lindqvist is hosting a spring tasting party at Copper Kettle "
             "Cafe at 17:00 on Wednesday, February 14", "Julian Reyes is sleeping"]
    texts += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))) for _ in range(30)]
    # past the model's 256 tokens: both cut there, so the tail changes nothing
    long = " ".join(rng.choice(WORDS) for _ in range(400))
    return texts + [long, long + " and then a different ending about taxes"]


@pytest.fixture(scope="module")
def both():
    texts = _texts()
    ours = make_embedder("minilm").many(texts)
    reference = make_embedder("minilm-torch").many(texts)
    return texts, ours, reference


def test_the_vectors_are_sentence_transformers_to_float32_rounding(both):
    texts, ours, reference = both
    assert ours.shape == reference.shape == (len(texts), 384)
    assert float(np.abs(ours - reference).max()) < 2e-6
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_retrieval_ranks_the_memories_in_the_same_order(both):
    _, ours, reference = both
    for query in range(4):
        assert (np.argsort(-(ours @ ours[query]), kind="stable").tolist()
                == np.argsort(-(reference @ reference[query]), kind="stable").tolist())


def test_a_text_is_cut_at_256_tokens_as_sentence_transformers_cuts_it(both):
    _, ours, reference = both
    assert np.array_equal(ours[-1], ours[-2])  # the tails past 256 tokens differ
    assert np.array_equal(reference[-1], reference[-2])


def test_the_same_text_gives_the_same_bits_in_a_fresh_model():
    from agents.embedding import _BackgroundLoad

    texts = _texts()[:8]
    first = _BackgroundLoad().encode(texts)
    again = _BackgroundLoad().encode(list(reversed(texts)))[::-1]
    assert np.array_equal(first, again)
