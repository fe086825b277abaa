"""Retrieval ranks memories by recency, relevance and importance, and logs what it chose."""

from __future__ import annotations

import numpy as np
import pytest

from agents.embedding import CachedEmbedder
from agents.memory import MemoryParams, MemoryStream
from agents.retrieval import RecencyRetriever, WeightedParams, WeightedRetriever
from sandbox.events.agent import MemoryRetrieved
from tests.agents.ga_helpers import Recorder, make_engine

VECTORS = {
    "coffee at the cafe": [1.0, 0.0, 0.0],
    "a walk in the park": [0.0, 1.0, 0.0],
    "reading a novel": [0.0, 0.0, 1.0],
    "coffee": [1.0, 0.0, 0.0],
    "park": [0.0, 1.0, 0.0],
}
HOUR = 3600.0


def known_vectors() -> CachedEmbedder:
    return CachedEmbedder(lambda texts: np.array([VECTORS[t] for t in texts], np.float32), 3,
                          "known")


def stream(*memories: tuple[str, float, int]) -> MemoryStream:
    memory = MemoryStream(MemoryParams(embedder="hashing"), embedder=known_vectors())
    for text, t, importance in memories:
        memory.add("event", text, t, importance=importance)
    return memory


def test_relevance_dominates_when_the_rest_is_equal():
    memory = stream(("coffee at the cafe", 0, 5), ("a walk in the park", 0, 5),
                    ("reading a novel", 0, 5))
    ranking = WeightedRetriever().rank(memory, memory.embed("park"), now=HOUR)
    assert ranking.ids[0] == 1
    assert ranking.relevance[0] == 1.0


def test_scores_follow_the_weighted_formula_with_hourly_decay():
    memory = stream(("coffee at the cafe", 0, 2), ("a walk in the park", 5 * HOUR, 9),
                    ("reading a novel", 10 * HOUR, 4))
    retriever = WeightedRetriever(WeightedParams(decay=0.9))
    ranking = retriever.rank(memory, memory.embed("coffee"), now=10 * HOUR)
    recency = np.array([0.9 ** 10, 0.9 ** 5, 1.0])
    relevance = np.array([1.0, 0.0, 0.0])
    importance = np.array([2.0, 9.0, 4.0])

    def norm(x):
        return (x - x.min()) / (x.max() - x.min())

    expected = 0.5 * norm(recency) + 3 * norm(relevance) + 2 * norm(importance)
    assert ranking.ids == list(np.argsort(-expected))
    assert ranking.total == pytest.approx(sorted(expected, reverse=True))


def test_rank_based_recency_prefers_the_last_accessed():
    memory = stream(("coffee at the cafe", 0, 5), ("a walk in the park", 60, 5),
                    ("reading a novel", 120, 5))
    retriever = WeightedRetriever(WeightedParams(recency_unit="rank", relevance_weight=0,
                                                 importance_weight=0))
    assert retriever.rank(memory, memory.embed("coffee"), now=200).ids == [2, 1, 0]


def test_top_k_limits_the_answer():
    memory = stream(("coffee at the cafe", 0, 5), ("a walk in the park", 0, 5),
                    ("reading a novel", 0, 5))
    assert len(WeightedRetriever().rank(memory, memory.embed("coffee"), now=0, k=2).ids) == 2


def test_a_large_stream_is_searched_through_candidates_and_still_finds_the_best():
    rng = np.random.default_rng(0)
    texts = [f"memory {i}" for i in range(3000)]
    vectors = rng.standard_normal((3000, 16)).astype(np.float32)
    table = dict(zip(texts, vectors, strict=True))
    table["query"] = vectors[1234]
    embedder = CachedEmbedder(lambda ts: np.array([table[t] for t in ts]), 16, "random")
    memory = MemoryStream(MemoryParams(embedder="hashing"), embedder=embedder)
    for i, text in enumerate(texts):
        memory.add("event", text, float(i), importance=5)
    retriever = WeightedRetriever(WeightedParams(pool=64, recency_weight=0,
                                                 importance_weight=0))
    assert retriever.rank(memory, memory.embed("query"), now=3000.0).ids[0] == 1234


class _Agent:
    def __init__(self, memory):
        from agents.persona import Persona

        self.name = "Ada"
        self.persona = Persona(name="Ada", living_area="mini:Rose Cottage:bedroom")
        self.memory = memory


def test_a_retrieval_is_logged_and_refreshes_the_memories_it_returns():
    engine = make_engine(Recorder())
    memory = stream(("coffee at the cafe", 0, 5), ("a walk in the park", 0, 5),
                    ("reading a novel", 0, 5))
    agent = _Agent(memory)
    found = []

    def proc():
        yield engine.timeout(HOUR)
        found.extend((yield from WeightedRetriever().retrieve(agent, engine, "coffee",
                                                              "converse.turn", k=1)))

    engine.process(proc())
    engine.run()
    logged = [e for e in engine.events if isinstance(e, MemoryRetrieved)]
    assert [m.description for m in found] == ["coffee at the cafe"]
    assert logged[0].query == "coffee" and logged[0].ids == [0]
    assert logged[0].purpose == "converse.turn" and len(logged[0].scores) == 1
    assert memory.nodes[0].last_accessed == HOUR and memory.nodes[1].last_accessed == 0


def test_recency_only_retrieval_ignores_the_query():
    engine = make_engine(Recorder())
    memory = stream(("coffee at the cafe", 0, 9), ("reading a novel", 10, 1))
    found = []

    def proc():
        found.extend((yield from RecencyRetriever().retrieve(_Agent(memory), engine, "coffee",
                                                             "plan.daily", k=1)))

    engine.process(proc())
    engine.run()
    assert [m.description for m in found] == ["reading a novel"]
