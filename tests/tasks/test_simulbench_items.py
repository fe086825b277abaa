"""SimulBench items: our tasks, the public task and script formats, categories, bad files."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from sandbox.files import FileFormatError
from tasks.simulbench import (
    Collected,
    Message,
    collection_items,
    extract,
    load_scripts,
    load_tasks,
    script_items,
    write_scripts,
    write_tasks,
)


def test_our_tasks_are_forty_half_stateful_and_span_every_kind():
    tasks = load_tasks()
    assert len(tasks) >= 40
    kinds = Counter(t.type for t in tasks)
    assert kinds["stateful"] == kinds["stateless"] == len(tasks) // 2
    assert {t.kind for t in tasks} == {"tool", "environment", "game", "role"}
    assert len({t.id for t in tasks}) == len(tasks)
    items = collection_items(tasks)
    assert len(items) == 3 * len(tasks) and len(set(items.ids)) == len(items)


@pytest.mark.parametrize("entry, where, reason", [
    ({"name": "X", "type": "stateful"}, "tasks.0.first_turn", "missing"),
    ({"name": "X", "first_turn": "Be X.", "type": "stateish"}, "tasks.0.type", "unknown type"),
    ({"name": "X", "first_turn": "Be X.", "type": "stateful", "colour": 1}, "tasks.0.colour",
     "unknown key"),
    ({"name": "X", "first_turn": "Be X.", "type": "stateful", "kind": "toy"}, "tasks.0.kind",
     "Input should be"),
])
def test_a_bad_task_file_names_the_field_and_the_reason(tmp_path, entry, where, reason):
    path = tmp_path / "tasks.yaml"
    import yaml

    path.write_text(yaml.safe_dump({"tasks": [entry]}))
    with pytest.raises(FileFormatError) as err:
        load_tasks(path)
    assert where in str(err.value) and reason in str(err.value)


def test_a_key_given_twice_in_our_yaml_is_an_error(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text("tasks:\n  - name: A\n    name: B\n    first_turn: x\n    type: stateful\n")
    with pytest.raises(FileFormatError, match="name"):
        load_tasks(path)


def test_the_public_task_format_round_trips(tmp_path):
    ours = load_tasks()
    path = write_tasks(ours, tmp_path / "simulbench_tasks.jsonl")
    back = load_tasks(path)
    assert [t.model_dump(exclude={"kind"}) for t in back] == \
        [t.model_dump(exclude={"kind"}) for t in ours]


def dialogue(task, index: int, turn: int) -> Collected:
    messages = []
    for k in range(4):
        messages += [Message(role="user", content=f"{task.act} request {k} é"),
                     Message(role="assistant", content=f"answer {k}")]
    messages[0] = Message(role="user", content=task.task_description)
    return Collected(task=task, index=index, messages=messages, challenging_turn=turn)


@pytest.fixture
def our_scripts():
    tasks = load_tasks()
    return extract([dialogue(tasks[0], 0, 0), dialogue(tasks[0], 1, 2),
                    dialogue(tasks[25], 2, 1), dialogue(tasks[25], 0, 0)])


def test_our_extracted_scripts_load_through_the_importer_unchanged(tmp_path, our_scripts):
    path = write_scripts(our_scripts, tmp_path / "scripts.jsonl")
    back = load_scripts(path, load_tasks())
    assert [s.public() for s in back] == [s.public() for s in our_scripts]
    assert [s.category for s in back] == [s.category for s in our_scripts]
    assert set(json.loads(path.read_text().splitlines()[0])) == {
        "id", "source_id", "act", "task_description", "type", "source_file_name", "turn_num",
        "dialogue_history"}
    assert "é" in path.read_text(encoding="utf-8")  # written as text, read back the same
    items = script_items(back, subset="hard")
    assert len(items) == 3 + 4 and all(s.hard for s in items.items)
    assert script_items(back).ids[:len(items)] == items.ids  # ids from content, not position


def write_lines(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_a_bad_script_file_names_the_line_field_and_reason(tmp_path, our_scripts):
    good = [s.public() for s in our_scripts[:3]]
    cases = {
        "truncated": (good[:2] + [json.dumps(good[2])[:-40]], "line 3", "not valid JSON"),
        "ends_on_answer": ([good[0], {**good[1], "dialogue_history":
                                      good[1]["dialogue_history"] + [
                                          {"role": "assistant", "content": "x"}]}],
                           "line 2, field dialogue_history", "ends on an assistant"),
        "unknown_type": ([good[0], {**good[1], "type": "stateish"}], "line 2, field type",
                         "unknown type 'stateish'"),
        "missing": ([{k: v for k, v in good[0].items() if k != "turn_num"}],
                    "line 1, field turn_num", "missing"),
        "length": ([{**good[0], "turn_num": 1}], "line 1, field dialogue_history", "expected 1"),
        "same_id": ([good[0], {**good[1], "id": good[0]["id"]}], "line 2, field id", "also on"),
    }
    for name, (rows, where, reason) in cases.items():
        path = write_lines(tmp_path / f"{name}.jsonl", rows)
        with pytest.raises(FileFormatError) as err:
            load_scripts(path)
        assert where in str(err.value) and reason in str(err.value), (name, str(err.value))
        assert "\n" not in str(err.value)


def test_a_source_id_outside_the_task_file_is_an_error(tmp_path, our_scripts):
    path = write_scripts(our_scripts, tmp_path / "s.jsonl")
    with pytest.raises(FileFormatError, match="source_id 'Unix_Shell' is no task"):
        load_scripts(path, load_tasks()[1:2])


def published_like(rows: list[tuple[int, str, str, int]]) -> list[dict]:
    """Minimal published-format scripts: (id, source_id, source_file_name, turn_num)."""
    out = []
    for id_, source, file, turn in rows:
        n = 7 if turn == 0 else 2 * turn - 1
        history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i} {id_}"}
                   for i in range(n)]
        out.append({"id": id_, "source_id": source, "act": source.split("#")[1],
                    "task_description": "m0", "type": "stateful", "source_file_name": file,
                    "turn_num": turn, "dialogue_history": history})
    return out


def test_categories_of_the_published_file_with_the_override(tmp_path):
    rows = published_like([
        (153, "044#Kanban", "gpt-3.5-turbo.json", 2), (155, "044#Kanban", "gpt-3.5-turbo.json", 3),
        # a lone turn-4 script whose FirstChan was filtered out of the published file
        (154, "045#JSON_Data_Store", "gpt-3.5-turbo-1.json", 4),
        (156, "046#Other", "gpt-3.5-turbo-2.json", 4),  # lone, not overridden
        (300, "044#Kanban", "gpt-3.5-turbo-1.json", 0)])
    scripts = load_scripts(write_lines(tmp_path / "all.jsonl", rows))
    assert {s.id: s.category for s in scripts} == {
        153: "firstchan", 155: "subseqchan", 154: "subseqchan", 156: "firstchan",
        300: "lastonly"}


@pytest.mark.parametrize("said, strategy", [
    ("next_step: build on the files just made", "next_step"),
    ("2. a follow-up on the last result", "next_step"),
    ("[3] something rarer", "new_request"),
    ("New requests, harder ones", "new_request"),
    ("Improvement: the board was wrong", "improvement"),
    ("other: ask for help", "other"),
    ("try another command", "unnamed"),  # "another" is not "other"
    ("", "unnamed"),
])
def test_the_user_agents_strategy_is_read_from_what_it_wrote(said, strategy):
    from tasks.simulbench.user_agent import strategy_of

    assert strategy_of(said) == strategy


PUBLISHED_LIKE = [
    (0, "044#Kanban", "gpt-3.5-turbo.json", 2), (1, "044#Kanban", "gpt-3.5-turbo.json", 3),
    (2, "044#Kanban", "gpt-3.5-turbo.json", 4),
    (3, "045#JSON_Data_Store", "gpt-3.5-turbo-1.json", 4),
    (4, "046#Other", "gpt-3.5-turbo-2.json", 1), (5, "046#Other", "gpt-3.5-turbo-2.json", 2),
    (6, "044#Kanban", "gpt-3.5-turbo-1.json", 0)]


def test_string_ids_give_the_same_categories_as_integer_ids(tmp_path):
    rows = published_like([
        (153, "044#Kanban", "gpt-3.5-turbo.json", 2), (155, "044#Kanban", "gpt-3.5-turbo.json", 3),
        (154, "045#JSON_Data_Store", "gpt-3.5-turbo-1.json", 4),
        (300, "044#Kanban", "gpt-3.5-turbo-1.json", 0)])
    as_ints = load_scripts(write_lines(tmp_path / "ints.jsonl", rows))
    as_strings = load_scripts(write_lines(tmp_path / "strings.jsonl",
                                          [{**r, "id": str(r["id"])} for r in rows]))
    assert [s.category for s in as_strings] == [s.category for s in as_ints] == [
        "firstchan", "subseqchan", "subseqchan", "lastonly"]  # 154: the published override


def test_a_file_cut_from_the_published_set_keeps_the_published_split(tmp_path, monkeypatch):
    from tasks.simulbench import categories as published
    from tasks.simulbench.categories import category_note
    from tasks.simulbench.importer import main as importer_main

    monkeypatch.setattr(published, "SPLIT_FILE", tmp_path / "split.json")
    whole = write_lines(tmp_path / "all.jsonl", published_like(PUBLISHED_LIKE))
    assert importer_main([str(whole)]) == 0
    split = json.loads((tmp_path / "split.json").read_text())
    assert {(r["source_id"], r["first_turn"]) for r in split} == {
        ("044#Kanban", 2), ("045#JSON_Data_Store", 4), ("046#Other", 1)}

    rows = published_like(PUBLISHED_LIKE)
    subseq = [rows[1], rows[2], {**rows[5], "id": "5"}]  # only SubseqChan scripts, one id a str
    scripts = load_scripts(write_lines(tmp_path / "subseq.jsonl", subseq))
    assert [s.category for s in scripts] == ["subseqchan"] * 3
    assert {s.categorized_by for s in scripts} == {"published"}
    assert category_note(scripts) is None

    monkeypatch.setattr(published, "SPLIT_FILE", tmp_path / "none.json")  # no table shipped
    scripts = load_scripts(write_lines(tmp_path / "subseq.jsonl", subseq))
    assert [s.category for s in scripts] == ["firstchan", "subseqchan", "firstchan"]
    assert category_note(scripts).startswith(
        "3 Hard scripts' FirstChan/SubseqChan worked out from this file alone, which looks cut")
    # a whole file is never said to be cut
    assert category_note(load_scripts(whole)) is None


def published_hard_scripts() -> list[tuple[int, str, str, int]]:
    """(id, source_id, source_file_name, turn_num) of the 275 published Hard scripts, rebuilt
    from the shipped split table: a dialogue's ids run in turn order up to turn 4, except
    077#Language_Detector's gpt-3.5-turbo-1 dialogue, whose turn-3 script the full-score
    filter dropped (its ids 222, 223, 224 are turns 1, 2, 4)."""
    from tasks.simulbench.categories import SPLIT_FILE

    rows = []
    for r in json.loads(SPLIT_FILE.read_text(encoding="utf-8")):
        ids = sorted(r["ids"])
        turns = list(range(5 - len(ids), 5))
        if (r["source_id"], r["source_file_name"]) == ("077#Language_Detector",
                                                       "gpt-3.5-turbo-1.json"):
            turns = [1, 2, 4]
        rows += [(i, r["source_id"], r["source_file_name"], t)
                 for i, t in zip(ids, turns, strict=True)]
    return sorted(rows)


def test_the_shipped_split_is_the_published_sets(tmp_path, monkeypatch):
    from tasks.simulbench import categories as published

    hard = published_hard_scripts()
    assert [r[0] for r in hard] == list(range(275))  # ids 0-274, each in one dialogue once
    assert Counter(r[3] for r in hard) == {1: 25, 2: 64, 3: 92, 4: 94}  # spec section 2
    assert len(published.published_split()) == 94
    assert published.published_split()[("045#JSON_Data_Store", "gpt-3.5-turbo-1.json")] == (
        3, frozenset({154}))  # its turn-3 FirstChan script was dropped: 154 is SubseqChan

    # worked out from the whole set without the table (the file's rule and OVERRIDES), the
    # split is the shipped one
    shipped = json.loads(published.SPLIT_FILE.read_text(encoding="utf-8"))
    monkeypatch.setattr(published, "SPLIT_FILE", tmp_path / "none.json")
    whole = load_scripts(write_lines(tmp_path / "all.jsonl", published_like(hard)))
    assert Counter(s.category for s in whole) == {"firstchan": 93, "subseqchan": 182}
    assert published.derive_split(whole) == shipped


def test_a_file_cut_from_the_published_set_is_categorised_by_the_shipped_split(tmp_path):
    from tasks.simulbench.categories import category_note, published_split

    hard = published_hard_scripts()
    split = published_split()
    first = [r for r in hard if split[(r[1], r[2])][0] == r[3]]
    subseq = [r for r in hard if split[(r[1], r[2])][0] != r[3]]
    assert (len(first), len(subseq)) == (93, 182)
    for part, want in ((subseq, {"subseqchan": 182}), (first, {"firstchan": 93})):
        rows = [{**row, "id": str(row["id"])} if i % 2 else row  # half the ids strings
                for i, row in enumerate(published_like(part))]
        scripts = load_scripts(write_lines(tmp_path / "cut.jsonl", rows))
        assert Counter(s.category for s in scripts) == want
        assert {s.categorized_by for s in scripts} == {"published"}
        assert category_note(scripts) is None


def test_a_dialogue_whose_firstchan_script_was_filtered_out_keeps_it_before_its_first(tmp_path):
    from tasks.simulbench.categories import derive_split

    rows = published_like([(154, "045#JSON_Data_Store", "gpt-3.5-turbo-1.json", 4)])
    split = derive_split(load_scripts(write_lines(tmp_path / "all.jsonl", rows)))
    assert split == [{"source_id": "045#JSON_Data_Store", "source_file_name":
                      "gpt-3.5-turbo-1.json", "first_turn": 3, "ids": [154]}]


def renumbered(rows: list[tuple[int, str, str, int]]) -> list[dict]:
    """Published scripts in published order, renumbered 0..n-1 (as a subset file is)."""
    return published_like([(i, *row[1:]) for i, row in enumerate(sorted(rows))])


def test_a_renumbered_published_subset_is_categorised_by_its_turns_and_says_so(tmp_path):
    from tasks.simulbench.categories import category_note, published_split

    hard = published_hard_scripts()
    split = published_split()
    subseq = [r for r in hard if split[(r[1], r[2])][0] != r[3]]
    first = [r for r in hard if split[(r[1], r[2])][0] == r[3]]
    # the 182 SubseqChan scripts numbered 0..181: each dialogue's earliest one here is not
    # its FirstChan script (it was 93 FirstChan / 89 SubseqChan, with no note)
    scripts = load_scripts(write_lines(tmp_path / "subseqchan.jsonl", renumbered(subseq)))
    assert Counter(s.category for s in scripts) == {"subseqchan": 182}
    assert {s.categorized_by for s in scripts} == {"published turn"}
    assert category_note(scripts).startswith(
        "182 Hard scripts' FirstChan/SubseqChan taken from the published split by their turn "
        "against their dialogue's first challenging turn: their ids are not the published ones")
    assert script_items(scripts, subset="subseqchan").notes == [category_note(scripts)]
    for part, want in ((first, {"firstchan": 93}), (hard, {"firstchan": 93, "subseqchan": 182})):
        scripts = load_scripts(write_lines(tmp_path / "part.jsonl", renumbered(part)))
        assert Counter(s.category for s in scripts) == want


def test_another_collection_on_the_published_tasks_is_categorised_from_its_own_file(tmp_path):
    from tasks.simulbench.categories import category_note

    # its judge found turn 1 of 000#Linux_Terminal's gpt-3.5-turbo-2 dialogue challenging
    # (the published split: turn 3), so the file is not a published subset: every dialogue's
    # earliest script here is its FirstChan one, and the note says why
    rows = published_like([(0, "000#Linux_Terminal", "gpt-3.5-turbo-2.json", t)
                           for t in (1, 2, 3, 4)])
    rows += published_like([(0, "002#Excel_Sheet", "gpt-3.5-turbo.json", t) for t in (2, 3, 4)])
    rows = [{**row, "id": i} for i, row in enumerate(rows)]
    scripts = load_scripts(write_lines(tmp_path / "ours.jsonl", rows))
    assert [s.category for s in scripts] == ["firstchan"] + ["subseqchan"] * 3 + \
        ["firstchan"] + ["subseqchan"] * 2
    assert {s.categorized_by for s in scripts} == {"file"}
    assert "7 Hard scripts' FirstChan/SubseqChan worked out from this file alone, 7 of them " \
        "of published dialogues whose ids and turns do not fit the published split" in \
        category_note(scripts)
