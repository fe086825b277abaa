"""Reading character/situation sets: our own YAML and the public PingPong settings format."""

from __future__ import annotations

import json

import pytest

from sandbox.files import FileFormatError
from tasks.pingpong import load_settings, pair_items

PUBLIC = {
    "en": {
        "version": 2,  # keys the public files carry and we do not use
        "character_prompt_path": "prompts/character.jinja",
        "judge_user_prompt_path": "prompts/judge_user.jinja",
        "characters": [
            {"char_name": "Makise", "system_prompt": "A young scientist.", "tags": None,
             "example_prompt": None, "initial_message": "Hello.", "summary": "A scientist.",
             "nsfw": False},
            {"char_name": "Bob", "system_prompt": "A plumber.", "tags": ["work"]},
        ],
        "situations": [
            {"text": "Ask about their work.", "tags": ["casual"], "num_turns": 3,
             "source": "chai"},
            {"text": "Say hello."},
        ],
    },
    "ru": {"characters": [{"char_name": "Ivan", "system_prompt": "x"}],
           "situations": [{"text": "y"}]},
}


def write(tmp_path, data, name="settings.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_public_format_with_unknown_keys_loads_and_lists_what_it_skipped(tmp_path):
    roleplay = load_settings(write(tmp_path, PUBLIC), "en")
    assert [c.char_name for c in roleplay.characters] == ["Makise", "Bob"]
    assert roleplay.characters[0].tags == [] and roleplay.characters[0].summary == "A scientist."
    assert roleplay.characters[1].public_summary == "Bob"  # no summary: the name only
    assert [s.num_turns for s in roleplay.situations] == [3, 4]  # 4: the public default
    assert set(roleplay.ignored_keys) == {
        "en.version", "en.character_prompt_path", "en.judge_user_prompt_path",
        "en.characters.0.nsfw", "en.situations.0.source"}
    assert load_settings(write(tmp_path, PUBLIC), "ru").characters[0].char_name == "Ivan"


def test_a_file_holding_one_language_directly_loads(tmp_path):
    roleplay = load_settings(write(tmp_path, PUBLIC["en"]), "en")
    assert len(roleplay.characters) == 2 and len(roleplay.situations) == 2


def test_a_card_without_a_name_names_the_file_and_field(tmp_path):
    data = json.loads(json.dumps(PUBLIC))
    del data["en"]["characters"][1]["char_name"]
    path = write(tmp_path, data, "cards.json")
    with pytest.raises(FileFormatError) as err:
        load_settings(path, "en")
    assert err.value.path == path
    assert err.value.where == "en.characters.1.char_name"
    assert "cards.json at en.characters.1.char_name" in str(err.value)
    assert "no 'char_name'" in str(err.value)


def test_a_situation_without_text_names_the_file_and_field(tmp_path):
    data = json.loads(json.dumps(PUBLIC))
    data["en"]["situations"][0]["text"] = "  "
    with pytest.raises(FileFormatError) as err:
        load_settings(write(tmp_path, data), "en")
    assert err.value.where == "en.situations.0.text"
    assert "situation" in err.value.reason and "'text'" in err.value.reason


def test_other_problems_name_the_field_too(tmp_path):
    data = json.loads(json.dumps(PUBLIC))
    data["en"]["situations"][1]["num_turns"] = 0
    with pytest.raises(FileFormatError) as err:
        load_settings(write(tmp_path, data), "en")
    assert err.value.where == "en.situations.1.num_turns"
    with pytest.raises(FileFormatError, match="no language 'de'.*en, ru"):
        load_settings(write(tmp_path, PUBLIC), "de")


def test_our_own_set_is_eight_by_eight_with_turns_per_situation():
    roleplay = load_settings()
    assert len(roleplay.characters) == 8 and len(roleplay.situations) == 8
    assert roleplay.ignored_keys == []
    assert all(c.summary for c in roleplay.characters)  # the interrogator needs one
    assert len({s.num_turns for s in roleplay.situations}) > 1
    assert len(pair_items(roleplay)) == 64


def test_every_k_spreads_the_subsample_over_characters_and_situations():
    roleplay = load_settings()
    quick = pair_items(roleplay).select(every=8)
    assert len(quick) == 8
    assert sorted(roleplay.characters.index(c) for _, (c, _) in quick) == list(range(8))
    assert sorted(roleplay.situations.index(s) for _, (_, s) in quick) == list(range(8))
    assert len(pair_items(roleplay).select(every=4)) == 16
