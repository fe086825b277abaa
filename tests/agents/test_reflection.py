"""Reflection fires when summed importance reaches the threshold and stores evidence."""

from __future__ import annotations

import json

from agents.agent import GenerativeAgent
from agents.persona import Persona
from sandbox.events.agent import Reflected
from tests.agents.ga_helpers import Recorder, architecture, make_engine


def _insights(request):
    return json.dumps({"insights": [{"insight": "Ada cares about her garden",
                                     "evidence": [1, 2], "importance": 6}]})


def _questions(request):
    return json.dumps({"questions": ["What does Ada care about?"]})


def run(importances, threshold=20):
    recorder = Recorder({"reflect.insights": _insights, "reflect.questions": _questions})
    engine = make_engine(recorder)
    arch = architecture("ga").with_params("reflector", threshold=threshold)
    ada = GenerativeAgent(Persona(name="Ada", living_area="mini:Rose Cottage:bedroom"), arch)
    ada._engine = engine
    for i, score in enumerate(importances):
        ada.memory.add("event", f"Ada waters plant number {i}", 0, importance=score)

    def proc():
        yield engine.timeout(60)
        yield from ada.reflector.maybe_reflect(ada, engine)

    engine.process(proc())
    engine.run()
    return recorder, engine, ada


def test_no_reflection_below_the_threshold():
    recorder, engine, ada = run([5, 5, 5], threshold=20)
    assert recorder.requests == []
    assert not [e for e in engine.events if isinstance(e, Reflected)]


def test_reflection_at_the_threshold_stores_thoughts_with_evidence():
    recorder, engine, ada = run([5, 5, 5, 5], threshold=20)
    assert [r.tag for r in recorder.requests] == ["reflect.questions", "reflect.insights"]
    thoughts = [n for n in ada.memory.nodes if n.kind == "thought"]
    assert [t.description for t in thoughts] == ["Ada cares about her garden"]
    assert len(thoughts[0].evidence) == 2
    assert all(ada.memory.nodes[i].kind == "event" for i in thoughts[0].evidence)
    (event,) = [e for e in engine.events if isinstance(e, Reflected)]
    assert event.trigger == 20 and event.insights[0].evidence == thoughts[0].evidence
    assert ada.memory.importance_since_reflection == 0
