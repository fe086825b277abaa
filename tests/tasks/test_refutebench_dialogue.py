"""RefuteBench's items and dialogues: the built-in set, the shapes of both settings, what the
refuter and the model under test are shown, and the focus schedule every model shares."""

from __future__ import annotations

from collections import Counter

import pytest

from evaluation.refutebench.scripted import refutebench
from sandbox.app.suites.benchmark import Configuration, ModelPool, run_benchmark
from sandbox.llm import SCRIPTS, LLMRequest, LLMSettings, ScriptedBackend
from sandbox.log import load_run
from tasks.refutebench import (
    ANSWER_TAG,
    ASSISTANT_SYSTEM,
    FOCI,
    REFUTER_TAG,
    clean,
    focus,
    load_file,
    load_items,
)
from tasks.refutebench.plugin import REFUTEBENCH
from tasks.refutebench.scripted import assistant, refuter


def test_the_built_in_set_has_25_seeds_per_family_and_100_unrelated_requests():
    data = load_file()
    families = Counter(s.family for s in data.seeds)
    assert min(families.values()) >= 25 and set(families) == {"mt", "summ", "writing"}
    assert set(Counter(s.kind for s in data.seeds if s.family == "writing")) == \
        {"article", "counter", "story"}
    assert len(data.distractors) >= 100
    summ = [len(s.text.split()) for s in data.seeds if s.family == "summ"]
    assert 150 <= min(summ) and max(summ) <= 400


def test_items_of_both_settings_with_ids_and_spread():
    transient = load_items(None, {"tasks": "mt,summ,writing", "setting": "transient"})
    assert len(transient) == 80 and transient.ids[0] == "mt-espresso-review"
    quick = transient.select(9)
    assert Counter(i.seed.family for _, i in quick) == {"mt": 3, "summ": 3, "writing": 3}
    persistent = load_items(None, {"tasks": "summ", "setting": "persistent",
                                   "distractors": "0,1,3"})
    assert persistent.ids[:3] == ["summ-harbour-ferry-cup__c0", "summ-harbour-ferry-cup__c1",
                                  "summ-harbour-ferry-cup__c3"]
    c1, c3 = persistent.items[1], persistent.items[2]
    assert c1.distractors == c3.distractors[:1]  # nested, as in 1.0's email files
    german = load_items(None, {"tasks": "mt", "language": "German"})
    assert german.items[0].query.endswith("[German]:")
    assert german.digest != load_items(None, {"tasks": "mt"}).digest


def test_the_focus_schedule_is_keyed_by_seed_and_refutation_only():
    assert focus("mt-espresso-review", 1) == focus("mt-espresso-review", 1)
    drawn = Counter(focus(f"seed-{i}", k) for i in range(300) for k in (1, 2, 3))
    assert set(drawn) == set(FOCI) and min(drawn.values()) > 250  # about uniform
    item = load_items(None, {"tasks": "mt"}).items[0]
    assert item.foci == [focus(item.seed.id, k) for k in (1, 2, 3)]


@pytest.mark.parametrize("raw, cleaned", [
    ('Refutation: "This is flat. Make it sing!"', "This is flat. Make it sing!"),
    ("**New demand:** Ugh, too stiff.\n\nNote: I focused on style.", "Ugh, too stiff."),
    ("“Why so bland?”", "Why so bland?"),
])
def test_refuter_output_is_cleaned(raw, cleaned):
    assert clean(raw).text == cleaned


def test_a_refuter_answer_with_nothing_left_is_refused():
    with pytest.raises(ValueError):
        clean('Refutation: ""')


class Recorder:
    """The scripted roles, keeping every request by tag."""

    def __init__(self, name: str, stubborn: bool = False):
        self.seen: dict[str, list[LLMRequest]] = {}
        answers = {REFUTER_TAG: refuter, ANSWER_TAG: assistant(stubborn)}
        self.backend = ScriptedBackend({tag: self._keep(tag, fn) for tag, fn in answers.items()},
                                       model_id=f"scripted/{name}")

    def _keep(self, tag, fn):
        def answer(request):
            self.seen.setdefault(tag, []).append(request)
            return fn(request)
        return answer


def _run(tmp_path, monkeypatch, setting: str, model: str = "rec-model", **options):
    recorders = {"rec-model": Recorder("rec-model"),
                 "rec-stubborn": Recorder("rec-stubborn", stubborn=True),
                 "rec-refuter": Recorder("rec-refuter")}
    for name, rec in recorders.items():
        monkeypatch.setitem(SCRIPTS, name, lambda rec=rec: rec.backend)
    monkeypatch.setitem(SCRIPTS, "refutebench", refutebench)
    opts = {"tasks": "mt", "setting": setting, **options}
    items = load_items(None, opts)
    out = tmp_path / f"{setting}-{model}"
    report = run_benchmark(REFUTEBENCH, out, items, ModelPool(LLMSettings()), Configuration(
        models={"model": f"scripted/{model}", "refuter": "scripted/rec-refuter"},
        sampling={"model": REFUTEBENCH.role("model").sampling,
                  "refuter": REFUTEBENCH.role("refuter").sampling},
        judges=["scripted/refutebench"], every=27, options=opts))
    assert not report.failures
    return out, recorders


def test_transient_dialogue_is_8_messages_and_the_refuter_sees_only_its_inputs(tmp_path,
                                                                               monkeypatch):
    out, rec = _run(tmp_path, monkeypatch, "transient")
    run = load_run(out / "runs" / "mt-espresso-review")
    said = [e for e in run.events if e.kind == "utterance"]
    assert [u.agent for u in said] == ["User", "Assistant"] * 4
    plan = run.header.config["plan"]
    assert [p["kind"] for p in plan] == ["task_query", "response"] + \
        ["refutation", "response"] * 3
    query = run.header.config["query"]
    assert said[0].text == query

    calls = rec["rec-refuter"].seen[REFUTER_TAG]
    assert len(calls) == 3
    for k, request in enumerate(calls, start=1):
        system, user = (m.content for m in request.messages)
        assert [m.role for m in request.messages] == ["system", "user"]
        assert f"about the answer's {plan[2 * k]['focus']}." in system
        assert "standing rule" not in system
        assert query in user and said[2 * k - 1].text in user  # the latest answer
        for j in range(1, k):  # its own earlier refutations, and not the dialogue
            assert f"{j}. {said[2 * j].text}" in user
        assert said[2 * k - 3].text not in user if k > 1 else True
    written = [e for e in run.events if e.kind == "refutation_written"]
    assert [w.k for w in written] == [1, 2, 3]
    assert written[0].raw.startswith("Refutation:") and written[0].cleaned == said[2].text

    # the model under test sees the whole dialogue, greedily
    last = rec["rec-model"].seen[ANSWER_TAG][-1]
    assert last.temperature == 0.0
    assert [m.role for m in last.messages] == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert last.messages[0].content == ASSISTANT_SYSTEM
    assert [m.content for m in last.messages[1:]] == [u.text for u in said[:7]]


def test_persistent_dialogue_is_6_plus_2c_messages_with_a_standing_refutation(tmp_path,
                                                                              monkeypatch):
    out, rec = _run(tmp_path, monkeypatch, "persistent", distractors="0,2")
    for c in (0, 2):
        run = load_run(out / "runs" / f"mt-espresso-review__c{c}")
        said = [e for e in run.events if e.kind == "utterance"]
        assert len(said) == 6 + 2 * c
        kinds = [p["kind"] for p in run.header.config["plan"] if p["speaker"] == "User"]
        assert kinds == ["task_query", "refutation"] + ["distractor"] * c + ["re_ask"]
        assert said[-2].text == said[0].text  # the same query again, verbatim
        assert run.header.config["distractors"] == [said[4 + 2 * i].text for i in range(c)]
    system = rec["rec-refuter"].seen[REFUTER_TAG][0].messages[0].content
    assert "standing rule" in system


def test_two_models_under_test_get_the_same_focus_schedule(tmp_path, monkeypatch):
    a, _ = _run(tmp_path, monkeypatch, "transient", "rec-model")
    b, rec = _run(tmp_path, monkeypatch, "transient", "rec-stubborn")
    foci = []
    for out in (a, b):
        run = load_run(out / "runs" / "mt-espresso-review")
        foci.append([e.focus for e in run.events if e.kind == "refutation_written"])
    assert foci[0] == foci[1] == load_items(None, {"tasks": "mt"}).items[0].foci
    # the stubborn model's answers differ, the refuter's history still reaches it
    user = rec["rec-refuter"].seen[REFUTER_TAG][-1].messages[-1].content
    assert "1. " in user and "2. " in user
