"""A text's MiniLM vector is the same bits whatever it is embedded with: a run restored from
a checkpoint, or an episode sharing the embedder with others, logs the run's own numbers."""

from __future__ import annotations

import random

import numpy as np

from agents.embedding import CachedEmbedder, _BackgroundLoad, normalise


def test_a_texts_vector_does_not_depend_on_the_rest_of_its_batch():
    load = _BackgroundLoad()
    rng = random.Random(0)
    words = ("the cafe party spring tasting Maya Julian walks to the park and talks about "
             "music bread coffee morning evening plans invite friends").split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 30))) for _ in range(24)]
    together = load.encode(texts)
    alone = np.stack([load.encode([text])[0] for text in texts])
    assert np.array_equal(together, alone)  # bit for bit (padding changed 20 of them before)
    # and through the shared, caching embedder, in another order and other batches
    fresh = CachedEmbedder(load.encode, together.shape[1], "minilm-test")
    again = np.stack([fresh.many(texts[i:i + 5]) for i in range(0, 20, 5)]).reshape(20, -1)
    assert np.array_equal(again, normalise(together[:20]))
