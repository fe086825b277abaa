"""The memory stream scores importance in batches, never twice for one text, embeds once."""

from __future__ import annotations

import json

from agents.embedding import hashing_embedder
from agents.memory import MemoryParams, MemoryStream
from agents.persona import Persona
from sandbox.events.agent import MemoryAdded
from tests.agents.ga_helpers import Recorder, make_engine


class _Agent:
    def __init__(self, memory):
        self.name = "Ada"
        self.persona = Persona(name="Ada", living_area="mini:Rose Cottage:bedroom")
        self.memory = memory
        memory.on_added.append(lambda node, t: self.added.append((node.id, t)))
        self.added = []


def _scores(request):
    lines = [line for line in request.messages[0].content.splitlines() if line[:1].isdigit()]
    return json.dumps({"scores": [7] * len(lines)})


def test_importance_is_asked_once_per_batch_and_never_again_for_a_known_text():
    recorder = Recorder({"memory.importance": _scores})
    engine = make_engine(recorder)
    memory = MemoryStream(MemoryParams(embedder="hashing", importance_batch=3))
    agent = _Agent(memory)

    def proc():
        memory.add("event", "Bob is reading", 0)
        memory.add("event", "Cleo is painting", 0)
        yield from memory.settle(agent, engine)  # 2 < batch: nothing asked yet
        assert memory.pending == [0, 1]
        memory.add("event", "Bob is reading", 10)  # same text as a pending one
        yield from memory.settle(agent, engine)  # batch full: one call for 2 distinct texts
        memory.add("event", "Cleo is painting", 20)  # known now: scored at once, no call
        yield from memory.settle(agent, engine, force=True)

    engine.process(proc())
    engine.run()
    calls = recorder.prompts(tag="memory.importance")
    assert len(calls) == 1
    assert "Bob is reading" in calls[0] and calls[0].count("Bob is reading") == 1
    assert [n.importance for n in memory.nodes] == [7, 7, 7, 7]
    assert memory.importance_since_reflection == 28
    assert [e.memory for e in engine.events if isinstance(e, MemoryAdded)] == []  # no host
    assert sorted(i for i, _ in agent.added) == [0, 1, 2, 3]


def test_memories_with_a_known_importance_need_no_call():
    recorder = Recorder()
    engine = make_engine(recorder)
    memory = MemoryStream(MemoryParams(embedder="hashing", importance_batch=1))
    agent = _Agent(memory)
    memory.add("event", "Ada is sleeping", 0, importance=1)

    def proc():
        yield from memory.settle(agent, engine, force=True)

    engine.process(proc())
    engine.run()
    assert recorder.requests == [] and memory.nodes[0].importance == 1


def test_each_distinct_text_is_embedded_once():
    embedder = hashing_embedder(32)
    memory = MemoryStream(MemoryParams(embedder="hashing"), embedder=embedder)
    for t in range(5):
        memory.add("event", "Bob is reading", t, importance=2)
    memory.add("event", "Cleo is painting", 6, importance=2)
    memory.search(memory.embed("Bob"), 3)
    memory.search(memory.embed("Bob"), 3)
    assert embedder.encoded == 3  # two memory texts and one query


def test_state_round_trips():
    memory = MemoryStream(MemoryParams(embedder="hashing"))
    memory.add("event", "Bob is reading", 0, importance=2)
    memory.add("thought", "Bob likes books", 5, importance=6, evidence=[0])
    copy = MemoryStream(MemoryParams(embedder="hashing"))
    copy.set_state(json.loads(json.dumps(memory.get_state())))
    assert [n.description for n in copy.nodes] == ["Bob is reading", "Bob likes books"]
    assert copy.nodes[1].evidence == [0]
    ids, _ = copy.search(copy.embed("Bob likes books"), 1)
    assert list(ids) == [1]
