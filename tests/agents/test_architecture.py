"""Architecture files: built-ins load, mistakes are reported with file, field and reason."""

from __future__ import annotations

import pytest

from agents.architecture import available, load_architecture
from agents.reflection import NoReflection
from agents.retrieval import RecencyRetriever, WeightedRetriever
from agents.tdp import NoTaskPlanner, TargetDrivenPlanner
from sandbox.files import FileFormatError

GOOD = """\
name: mine
modules:
  memory: {module: stream, params: {embedder: hashing}}
  retriever: {module: ga, params: {top_k: 10}}
  planner: {module: ga}
  reflector: {module: ga, params: {threshold: 100}}
  conversation: {module: ga}
  task_planner: {module: none}
"""


def write(tmp_path, text):
    path = tmp_path / "arch.yaml"
    path.write_text(text)
    return path


def test_the_built_in_architectures_differ_where_they_say():
    assert {"ga", "ga_tdp", "ga_recency", "ga_no_reflection"} <= set(available())
    ga, tdp = load_architecture("ga"), load_architecture("ga_tdp")
    assert ga.classes["task_planner"] is NoTaskPlanner
    assert tdp.classes["task_planner"] is TargetDrivenPlanner
    assert ga.classes["retriever"] is WeightedRetriever
    assert load_architecture("ga_recency").classes["retriever"] is RecencyRetriever
    assert load_architecture("ga_no_reflection").classes["reflector"] is NoReflection
    assert ga.params["retriever"].relevance_weight == 3.0


def test_each_agent_gets_its_own_modules(tmp_path):
    arch = load_architecture(write(tmp_path, GOOD))
    first, second = arch.build(), arch.build()
    assert first["memory"] is not second["memory"]
    assert first["retriever"].params.top_k == 10


def test_an_unknown_module_names_the_file_the_field_and_the_choices(tmp_path):
    path = write(tmp_path, GOOD.replace("retriever: {module: ga,", "retriever: {module: bm25,"))
    with pytest.raises(FileFormatError) as err:
        load_architecture(path)
    text = str(err.value)
    assert str(path) in text and "modules.retriever.module" in text
    assert "unknown retriever module 'bm25'" in text and "ga, recency" in text
    assert "sandbox.agent_modules" in text


def test_a_misspelt_parameter_is_an_error(tmp_path):
    path = write(tmp_path, GOOD.replace("threshold: 100", "treshold: 100"))
    with pytest.raises(FileFormatError) as err:
        load_architecture(path)
    assert "modules.reflector.params.treshold" in str(err.value)
    assert "Extra inputs are not permitted" in str(err.value)


def test_an_out_of_range_parameter_is_an_error(tmp_path):
    path = write(tmp_path, GOOD.replace("top_k: 10", "top_k: 0"))
    with pytest.raises(FileFormatError) as err:
        load_architecture(path)
    assert "modules.retriever.params.top_k" in str(err.value)
    assert "greater than or equal to 1" in str(err.value)


def test_a_missing_slot_and_an_unknown_slot_are_errors(tmp_path):
    with pytest.raises(FileFormatError, match="no module chosen for task_planner"):
        load_architecture(write(tmp_path, GOOD.replace("  task_planner: {module: none}\n", "")))
    with pytest.raises(FileFormatError, match="unknown slot 'planer'"):
        load_architecture(write(tmp_path, GOOD.replace("  planner:", "  planer:")))


def test_an_unknown_built_in_name_lists_the_built_ins():
    with pytest.raises(FileFormatError, match="ga_tdp"):
        load_architecture("no_such_architecture")


@pytest.mark.parametrize("edit, where, said", [
    (("recency_weight: 0.5", "recency_weight: .inf"), "modules.retriever.params.recency_weight",
     "Input should be a finite number"),
    (("recency_weight: 0.5", "recency_weight: -.inf"), "modules.retriever.params.recency_weight",
     "Input should be a finite number"),
    (("top_k: 30", "top_k: true"), "modules.retriever.params.top_k",
     "Input should be a number, not a boolean"),
    (("threshold: 150", "threshold: false"), "modules.reflector.params.threshold",
     "Input should be a number, not a boolean"),
])
def test_a_param_that_is_no_number_is_refused_naming_slot_and_key(tmp_path, edit, where, said):
    """`recency_weight: .inf` once ran, every score infinite, until the run's log broke
    mid-run with a traceback; `top_k: true` ran as 1 (found by the file walk)."""
    from agents.architecture import BUILT_IN, load_architecture
    from sandbox.files import FileFormatError

    text = (BUILT_IN / "ga.yaml").read_text(encoding="utf-8")
    assert edit[0] in text
    path = tmp_path / "mine.yaml"
    path.write_text(text.replace(*edit), encoding="utf-8")
    with pytest.raises(FileFormatError) as refused:
        load_architecture(path)
    assert refused.value.where == where and said in refused.value.reason


def test_a_boolean_param_still_takes_a_boolean(tmp_path):
    from agents.architecture import BUILT_IN, load_architecture

    text = (BUILT_IN / "ga.yaml").read_text(encoding="utf-8")
    path = tmp_path / "mine.yaml"
    path.write_text(text.replace("params: {max_turns: 8}",
                                 "params: {max_turns: 8, retrieve_every_turn: true}"),
                    encoding="utf-8")
    assert "retrieve_every_turn: true" in path.read_text(encoding="utf-8")
    assert load_architecture(path).params["conversation"].retrieve_every_turn is True
