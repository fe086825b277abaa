"""Script extraction on hand-built dialogues and challenge verdicts."""

from __future__ import annotations

import pytest

from tasks.simulbench import Collected, Message, cut, extract, load_tasks


def dialogue(turn: int, index: int = 0) -> Collected:
    messages = [Message(role="user" if i % 2 == 0 else "assistant", content=f"m{i}")
                for i in range(8)]
    return Collected(task=load_tasks()[0], index=index, messages=messages,
                     challenging_turn=turn)


def contents(script) -> list[str]:
    return [m.content for m in script.dialogue_history]


def test_no_challenging_turn_gives_one_last_only_script():
    [script] = cut(dialogue(0))
    assert (script.turn_num, script.category) == (0, "lastonly")
    assert contents(script) == [f"m{i}" for i in range(7)]


def test_a_challenging_turn_gives_first_chan_and_each_later_turn():
    scripts = cut(dialogue(2))
    assert [(s.turn_num, s.category) for s in scripts] == [
        (2, "firstchan"), (3, "subseqchan"), (4, "subseqchan")]
    assert [contents(s) for s in scripts] == [
        ["m0", "m1", "m2"], [f"m{i}" for i in range(5)], [f"m{i}" for i in range(7)]]
    assert len(cut(dialogue(1))) == 4 and len(cut(dialogue(4))) == 1
    assert contents(cut(dialogue(1))[0]) == ["m0"]


def test_extract_puts_hard_scripts_first_numbered_in_order():
    scripts = extract([dialogue(0, 0), dialogue(3, 1), dialogue(0, 2)])
    assert [(s.id, s.turn_num, s.source_file_name) for s in scripts] == [
        (0, 3, "gpt-3.5-turbo-1.json"), (1, 4, "gpt-3.5-turbo-1.json"),
        (2, 0, "gpt-3.5-turbo.json"), (3, 0, "gpt-3.5-turbo-2.json")]


def test_a_turn_out_of_range_or_a_short_dialogue_is_refused():
    with pytest.raises(ValueError, match="not in 0..4"):
        cut(dialogue(5))
    short = dialogue(0)
    short.messages = short.messages[:6]
    with pytest.raises(ValueError, match="expected 8"):
        cut(short)
