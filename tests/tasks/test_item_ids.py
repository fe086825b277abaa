"""Item ids never collide, whatever the script, and a collision that is left is an error.

Tried as a user would: a public settings file whose characters have Cyrillic names once made
every name the same slug, so 48 of 64 pairs were "skipped" with another character's
conversation and scored. Each case below is one way names can look alike."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.app.suites.benchmark import Configuration, ModelPool, run_benchmark
from sandbox.llm import LLMSettings
from tasks.kit import IdCollision, ItemSet, name_id
from tasks.pingpong import (
    INTERROGATOR_SAMPLING,
    PLAYER_SAMPLING,
    Character,
    RoleplaySet,
    Situation,
    load_settings,
    pair_items,
)
from tasks.pingpong.plugin import PINGPONG

CYRILLIC = ["Анна Каренина", "Родион Раскольников", "Евгений Онегин", "Наташа Ростова",
            "Иван Карамазов", "Алёша Карамазов", "Татьяна Ларина", "Мастер"]
SITUATIONS = [{"text": f"Ситуация номер {i}: поговори со мной.", "num_turns": 1}
              for i in range(8)]


def settings(names, situations=SITUATIONS, cards=None):
    cards = cards or [f"Ты {name}, персонаж романа." for name in names]
    return {"ru": {"characters": [{"char_name": n, "system_prompt": c, "summary": n}
                                  for n, c in zip(names, cards, strict=True)],
                   "situations": situations}}


def roleplay(names, cards=None):
    cards = cards or [f"card of {n}" for n in names]
    return RoleplaySet(characters=[Character(char_name=n, system_prompt=c)
                                   for n, c in zip(names, cards, strict=True)],
                       situations=[Situation(text="Say hello.", num_turns=1)])


def ids(names, cards=None):
    return pair_items(roleplay(names, cards)).ids


def test_cyrillic_names_are_readable_and_distinct():
    got = ids(CYRILLIC)
    assert len(set(got)) == 8
    assert got[0].startswith("анна-каренина__")
    assert got[5].startswith("алёша-карамазов__")


def test_cjk_and_emoji_names_get_distinct_ids():
    got = ids(["孫悟空", "豬八戒", "🤖", "🤖🤖", "🐉 Dragon", "Dragon"])
    assert len(set(got)) == 6
    assert got[0].startswith("孫悟空__")  # no case in the script: readable as it is
    assert got[2].startswith("item_") and got[3].startswith("item_")  # nothing readable left
    assert got[4].startswith("dragon_") and got[5].startswith("dragon__")


def test_names_that_differ_only_in_case_or_punctuation_get_distinct_ids():
    got = ids(["Anna Lee", "anna lee", "ANNA LEE", "Anna-Lee", "Anna Lee!", "Anna  Lee"])
    assert len(set(got)) == 6
    assert got[0] == "anna-lee__" + got[0].split("__")[1]  # the plain name stays plain


def test_two_characters_with_the_same_name_are_two_items():
    got = ids(["Anna", "Anna"], cards=["A pianist.", "A pilot."])
    assert len(set(got)) == 2 and all(i.startswith("anna_") for i in got)


def test_ids_are_stable_across_runs_and_orders():
    names = ["Анна Каренина", "Sev", "孫悟空", "anna"]
    first = dict(zip(names, ids(names), strict=True))
    again = dict(zip(reversed(names), ids(list(reversed(names))), strict=True))
    assert first == again
    assert name_id("Pip Quillfeather") == "pip-quillfeather"  # ids from before the kit hold


def test_the_same_card_twice_is_a_collision_naming_both_items():
    with pytest.raises(IdCollision) as err:
        ids(["Anna", "Anna"], cards=["A pianist.", "A pianist."])
    message = str(err.value)
    assert "characters.0 ('Anna')" in message and "characters.1 ('Anna')" in message
    with pytest.raises(IdCollision, match="items a and b get the same id 'x'"):
        ItemSet(items=[1, 2], ids=["x", "x"], origins=["a", "b"])


def test_a_public_file_with_cyrillic_names_runs_every_pair(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings(CYRILLIC), ensure_ascii=False), encoding="utf-8")
    items = pair_items(load_settings(path, "ru"))
    assert len(set(items.ids)) == 64
    report = run_benchmark(
        PINGPONG, tmp_path / "out", items, ModelPool(LLMSettings()), Configuration(
            models={"player": "scripted/default", "interrogator": "scripted/default"},
            sampling={"player": PLAYER_SAMPLING, "interrogator": INTERROGATOR_SAMPLING},
            judges=[], options={"language": "ru"}))
    assert (report.runs_made, report.runs_skipped) == (64, 0)
    assert len(list((tmp_path / "out" / "runs").iterdir())) == 64


def test_a_collision_is_exit_2_naming_both_items(tmp_path, capsys):
    path = tmp_path / "settings.json"
    twice = settings(["Анна", "Анна"], cards=["Пианистка.", "Пианистка."])
    path.write_text(json.dumps(twice, ensure_ascii=False), encoding="utf-8")
    code = main(["pingpong", "--settings", str(path), "--language", "ru", "--player",
                 "scripted/default", "--interrogator", "scripted/default", "--judge",
                 "scripted/default", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "characters.0 ('Анна')" in err and "characters.1 ('Анна')" in err
    assert not (tmp_path / "out").exists()  # refused before anything is written
