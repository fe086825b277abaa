"""RefuteBench's evaluator and metrics: the `[[n]]` parse rule with its re-asks, what each judge
is shown message by message, and Tables 4-7 computed by hand."""

from __future__ import annotations

import pytest

from evaluation.kit import judge_dialogue, read_dialogue
from evaluation.refutebench import (
    FIDELITY_TAG,
    JUDGE_TAG,
    JUDGES,
    Scored,
    judges,
    parse_rating,
    refute_dialogue,
    tables,
)
from evaluation.refutebench.board import Board, Row, board_markdown
from evaluation.refutebench.scripted import refutebench
from sandbox.app.suites.benchmark import Configuration, ModelPool, run_benchmark
from sandbox.llm import SCRIPTS, LLMSettings, ScriptedBackend, make_llm
from tasks.refutebench import JUDGE_SAMPLING, load_items
from tasks.refutebench.plugin import REFUTEBENCH


@pytest.mark.parametrize("text, rating", [
    ("Good revision. Rating: [[4]]", 4.0),
    ("Mostly there. [[4.5]]", 4.5),
    ("It half follows. Rating: [3]", 3.0),
    ("At first I thought [[2]], but on reflection [[5]]", 5.0),
    ("Scale is [1] to [5]; this one is [[1]]", 1.0),  # [[n]] wins over [n]
])
def test_the_last_rating_in_double_brackets_is_read(text, rating):
    assert parse_rating(text).rating == rating


@pytest.mark.parametrize("text", ["I would give it a four.", "Rating: [[7]]", "[[0]]", ""])
def test_no_rating_or_one_out_of_range_is_refused(text):
    with pytest.raises(ValueError):
        parse_rating(text)


@pytest.fixture
def transient_run(tmp_path, monkeypatch):
    monkeypatch.setitem(SCRIPTS, "refutebench", refutebench)
    opts = {"tasks": "mt", "setting": "transient"}
    out = tmp_path / "t"
    run_benchmark(REFUTEBENCH, out, load_items(None, opts), ModelPool(LLMSettings()),
                  Configuration(models={"model": "scripted/refutebench",
                                        "refuter": "scripted/refutebench"},
                                sampling={r.name: r.sampling for r in REFUTEBENCH.roles},
                                judges=[], every=27, options=opts))
    return out / "runs" / "mt-espresso-review"


def _judge_with(answers, monkeypatch, name="j"):
    """A judge model that answers each call with the next of `answers`."""
    said = list(answers)
    seen = []

    def answer(request):
        seen.append(request)
        return said.pop(0) if len(said) > 1 else said[0]

    monkeypatch.setitem(SCRIPTS, name, lambda: ScriptedBackend(
        {JUDGE_TAG: answer, FIDELITY_TAG: answer}, model_id=f"scripted/{name}"))
    return make_llm(LLMSettings(model=f"scripted/{name}", cache_mode="off")), seen


def test_each_judge_is_shown_exactly_its_four_messages(transient_run, monkeypatch):
    dialogue = read_dialogue(transient_run, "refutebench")
    d = refute_dialogue(dialogue)
    said = [u.text for u in dialogue.utterances]
    q, a0, r1, a1, r2, a2, r3, a3 = said
    assert (d.query, d.answers, d.refutations) == (q, [a0, a1, a2, a3], [r1, r2, r3])
    expected = {
        "revision_1": (a0, r1, a1), "revision_2": (a1, r2, a2), "revision_3": (a2, r3, a3),
        "kept_2": (a0, r1, a2), "kept_3": (a0, r1, a3)}
    llm, seen = _judge_with(["Fine. [[4]]"], monkeypatch)
    for spec in JUDGES:
        if not spec.applies(dialogue):
            assert spec.name.startswith("persistent")
            continue
        judgment = judge_dialogue(spec, dialogue, llm, JUDGE_SAMPLING)
        assert judgment.scores == {"rating": 4.0}
        user = seen[-1].messages[-1].content
        if spec.name in expected:
            previous, refutation, new = expected[spec.name]
            assert user == (f"[The user's original request]\n{q}\n\n[The assistant's answer "
                            f"before the new instruction]\n{previous}\n\n[The user's new "
                            f"instruction]\n{refutation}\n\n[The assistant's answer after the "
                            f"new instruction]\n{new}")
        else:
            k = int(spec.name.split("_")[1])
            assert user == (f"[The user's request]\n{q}\n\n[The assistant's answer]\n"
                            f"{[a0, a1, a2, a3][k]}")
            assert "translation" in seen[-1].messages[0].content
    assert len(seen) == 9


def test_an_answer_without_rating_is_asked_again_then_counted_missing(transient_run,
                                                                     monkeypatch):
    dialogue = read_dialogue(transient_run, "refutebench")
    spec = JUDGES[0]
    llm, seen = _judge_with(["I like it.", "Rating: [[3]]"], monkeypatch, "late")
    judgment = judge_dialogue(spec, dialogue, llm, JUDGE_SAMPLING)
    assert judgment.status == "ok" and judgment.scores == {"rating": 3.0}
    assert "reasked" in judgment.faults and len(seen) == 2
    llm, seen = _judge_with(["No idea."], monkeypatch, "never")
    judgment = judge_dialogue(spec, dialogue, llm, JUDGE_SAMPLING)
    assert judgment.status == "fallback" and judgment.scores == {}
    assert len(seen) == 3  # the ask and two re-asks


def test_the_json_format_binds_the_answer_to_a_schema_with_the_same_judgment(transient_run,
                                                                            monkeypatch):
    """A small judge that never writes [[n]] still rates in the json format: the request
    carries the schema (a local model's grammar), the prompt asks for JSON, and the judgment has
    the text format's name and score."""
    dialogue = read_dialogue(transient_run, "refutebench")
    as_json = '{"explanation": "It follows the request.", "rating": 4}'
    text_spec, json_spec = JUDGES[0], judges("json")[0]
    assert json_spec.name == text_spec.name == "revision_1"
    llm, seen = _judge_with([as_json], monkeypatch, "small")
    judgment = judge_dialogue(json_spec, dialogue, llm, JUDGE_SAMPLING)
    assert judgment.status == "ok" and judgment.scores == {"rating": 4.0}
    assert judgment.answer == {"rating": 4.0, "explanation": "It follows the request."}
    schema = seen[-1].json_schema()
    assert schema["properties"]["rating"]["enum"] == [1, 2, 3, 4, 5]
    assert 'Answer with one JSON object' in seen[-1].messages[0].content
    assert "[[score]]" not in seen[-1].messages[0].content
    # the same answer in the text format has no [[n]]: asked three times, then missing
    judgment = judge_dialogue(text_spec, dialogue, llm, JUDGE_SAMPLING)
    assert judgment.status == "fallback" and seen[-1].json_schema() is None
    for spec in judges("json"):  # fidelity judges too; every name as in the text format
        assert spec.schema is not None and spec.parser is None
    assert [j.name for j in judges("json")] == [j.name for j in JUDGES]


def _row(seed, setting, c=0, missing=None, **ratings):
    return Scored(seed=seed, family="mt", setting=setting, c=c, ratings=ratings,
                  missing=missing or {}, judgments=len(ratings) + sum((missing or {}).values()))


HAND_BUILT = [
    _row("s1", "transient", revision_1=5, revision_2=4, revision_3=3, kept_2=4, kept_3=2,
         fidelity_0=5, fidelity_1=4, fidelity_2=4, fidelity_3=3),
    _row("s2", "transient", revision_1=3, revision_2=5, revision_3=4, kept_2=3, kept_3=4,
         fidelity_0=4, fidelity_1=3, fidelity_2=2, fidelity_3=1),
    # revision_1's judge gave no rating: left out of Turn1, overall = mean of the other two
    _row("s3", "transient", missing={"revision_1": 1}, revision_2=2, revision_3=4),
    _row("s1", "persistent", 0, persistent_direct=5, persistent_final=5),
    _row("s1", "persistent", 3, persistent_final=2),
    _row("s2", "persistent", 0, persistent_direct=4, persistent_final=3),
    _row("s2", "persistent", 3, persistent_final=4),
]


def test_tables_4_to_7_by_hand():
    cells = tables(HAND_BUILT, ["mt"], resamples=200).cells["mt"]
    mean = {name: round(c.mean, 4) for name, c in cells.items() if c.mean is not None}
    assert mean["overall"] == round((4 + 4 + 3) / 3, 4)  # T4
    assert cells["overall"].n == 3
    assert (mean["revision_1"], mean["kept_3"], mean["turn_delta"]) == (4.0, 3.0, 1.0)  # T5
    assert cells["revision_1"].n == 2
    assert (mean["fidelity_0"], mean["fidelity_3"], mean["task_delta"]) == (4.5, 2.0, 2.5)
    assert (mean["c0"], mean["c3"], mean["c_delta"]) == (4.5, 3.0, 1.5)  # T7
    assert [mean[n] for n in ("revision_1", "kept_2", "kept_3")] == [4.0, 3.5, 3.0]  # Fig. 6a
    assert [mean[f"fidelity_{k}"] for k in range(4)] == [4.5, 3.5, 3.0, 2.0]  # Fig. 6b
    for name in ("overall", "c_delta", "turn_delta"):  # 2-3 seeds: too few for an interval
        assert cells[name].lo is None and cells[name].hi is None


def test_the_board_has_the_papers_table_shapes():
    t = tables(HAND_BUILT, ["mt"], resamples=200)
    text = board_markdown(Board([Row("model-a", scored=HAND_BUILT, tables=t)], ["mt"], 0, 200))
    assert "| Model | MT |" in text
    assert "| Model | MT Turn1 | MT Turn3 | MT Δ |" in text
    assert "| Model | MT Initial | MT Final | MT Δ |" in text
    assert "| Model | MT C=0 | MT C=3 | MT Δ |" in text
    assert "| model-a | 3.67 n=3 |" in text
    assert "1 of 27 judgments without a usable rating" in text
