"""The performer is told what it is scored on: an imported public task's goal and target
sentences state the time and place each seed draws, for every field of the public format."""

from __future__ import annotations

import json
import re

import pytest

from tasks.stss import TaskType, import_public_tasks, instantiate
from tasks.stss.instantiate import place_name
from tasks.stss.statements import place_key, place_mentions, tell_drawn_values, time_mentions
from worlds import Address, load_world


@pytest.fixture(scope="module")
def town():
    return load_world("town")


# A public task as the STSS files write one, every field set; our own wording and our town.
LANTERNS = {
    "goal": "Lantern evening",
    "FPG": "Maya Lindqvist wants to host a lantern evening at Copper Kettle Cafe at "
           "2024-03-08 18:00.",
    "Description": "Success means 6 people come to the lantern evening at the Copper Kettle Cafe "
                   "from 6:00 pm to 8:00 pm.",
    "task_type": "Party",
    "performer": "Maya Lindqvist",
    "performer_choices": ["Maya Lindqvist", "Julian Reyes"],
    "role_requirement": "",
    "Note": "Lanterns go up at 5pm at the Fox and Fiddle Pub.",
    "n_characters": 12,
    "all_chars": ["#Any"],
    "env_name": "base_lanterns",
    "time_choices": ["2024-03-08 18:00", "2024-03-08 19:00", "2024-03-08 20:30"],
    "location_choices": ["the Ville:Copper Kettle Cafe", "the Ville:Fox and Fiddle Pub",
                         "the Ville:Harrow Park"],
    "task": {"target": [], "target_num": 7, "goal": [{  # the performer and 6 others
        "keyword": "lantern", "alter_kwd": ["party"], "start_time": "2024-03-08 18:00",
        "duration_in_minutes": 120, "location": "the Ville:Copper Kettle Cafe",
        "required_character": []}]},
}
ONLINE = {"task_type": "Online meeting", "location_choices": None,
          "FPG": "Maya Lindqvist wants to hold an online lantern meeting at 6pm.",
          "Description": "Success means 6 people join online between 18:00 and 20:00.",
          "task.goal.0.location": "N/A"}

# One variant per field of the public format (dotted for the fields inside `task`), each a
# value a public file could hold there; `None` removes the field.
EVERY_FIELD = {
    "goal": {"goal": "Lanterns at the Fox and Fiddle Pub at 9pm"},  # the title: not told
    "goal (when there is no FPG)": {"FPG": None,
                                    "goal": "A lantern evening at Copper Kettle Cafe at 7pm"},
    "FPG": {"FPG": "Maya Lindqvist, who runs the Copper Kettle Cafe, wants a lantern evening "
                   "at Copper Kettle coffee from 6 p.m. until 20:00."},
    "FPG (time in words)": {"FPG": "Maya Lindqvist wants lanterns lit at seven o'clock in the "
                                   "evening at Harrow Park."},
    "FPG (an arena as an address)": {
        "FPG": "Maya Lindqvist wants a lantern evening at Fox and Fiddle Pub:back room at 18:00.",
        "location_choices": ["the Ville:Fox and Fiddle Pub:back room", "the Ville:Harrow Park"]},
    "FPG and Description (the meta-task placeholders)": {
        "FPG": "#performer wants to host a lantern evening at #location_0 at #time_0",
        "Description": "The target is to have #target_num people at #location_0 at #time_0."},
    "Description": {"Description": "Success means six guests at 18:00 in Copper Kettle Cafe."},
    "task_type": {"task_type": "Public Activity"},
    "task_type (online)": ONLINE,
    "performer": {"performer": "#Any"},
    "performer_choices": {"performer_choices": ["Julian Reyes", "Nora Byrne"]},
    "role_requirement": {"performer": "", "performer_choices": None,
                         "role_requirement": "barista"},
    "role_requirement (a list)": {"performer": "", "performer_choices": None,
                                  "role_requirement": ["barista"]},
    "Note": {"Note": "Doors open at 17:15 at Harrow Park."},
    "n_characters": {"n_characters": 5},
    "all_chars": {"all_chars": ["Maya Lindqvist", "Julian Reyes", "Nora Byrne"]},
    "env_name": {"env_name": "lanterns at 6pm"},
    "time_choices": {"time_choices": ["17:00", "21:00"]},
    "location_choices": {"location_choices": ["the Ville:Copper Kettle Cafe",
                                              "the Ville:Harrow Park:lawn"]},
    "task.target": {"task.target": ["Julian Reyes"]},
    "task.target_num": {"task.target_num": 9},
    "task.goal.0.keyword": {"task.goal.0.keyword": "lanterns"},
    "task.goal.0.alter_kwd": {"task.goal.0.alter_kwd": ["light", "evening"]},
    "task.goal.0.start_time": {"task.goal.0.start_time": "N/A"},
    "task.goal.0.duration_in_minutes": {"task.goal.0.duration_in_minutes": 90},
    "task.goal.0.location": {"location_choices": None,
                             "task.goal.0.location": "the Ville:Fox and Fiddle Pub"},
    "task.goal.0.required_character": {"task.goal.0.required_character": ["Julian Reyes"]},
}


def public_task(change: dict) -> dict:
    task = json.loads(json.dumps(LANTERNS))
    for dotted, value in change.items():
        *path, last = dotted.split(".")
        holder = task
        for key in path:
            holder = holder[int(key)] if key.isdigit() else holder[key]
        if value is None:
            holder.pop(last, None)
        else:
            holder[last] = value
    return task


_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b|\b(\d{1,2})\s*([ap])\.?\s?m\b", re.IGNORECASE)


def clocks_stated(text: str) -> set[str]:
    """Every clock time in figures, read independently of the importer."""
    found = set()
    for m in _CLOCK.finditer(text):
        if m[1]:
            found.add(f"{int(m[1]):02d}:{m[2]}")
        else:
            found.add(f"{int(m[3]) % 12 + (12 if m[4].lower() == 'p' else 0):02d}:00")
    return found


def sectors_named(text: str, world) -> set[str]:
    return {s.parts[-1] for s in world.sectors() if s.parts[-1].lower() in text.lower()}


@pytest.mark.parametrize("field", list(EVERY_FIELD))
def test_every_seed_tells_the_performer_the_time_and_place_it_is_scored_on(tmp_path, town,
                                                                          field):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([public_task(EVERY_FIELD[field])]))
    imported = import_public_tasks(path, town, draw_times=True)
    assert imported.failed == []
    [template] = imported.templates
    starts, places = set(), set()
    for seed in range(10):
        task = instantiate(template, seed, town)
        told = f"{task.goal} {task.criteria}"
        start, end = task.start.strftime("%H:%M"), task.end.strftime("%H:%M")
        assert start in clocks_stated(told) and clocks_stated(told) <= {start, end}, told
        # The title too, unless the import warned that it names a time the task never has.
        assert clocks_stated(task.title) <= {start, end} or \
            any(w.startswith("title states") for w in template.import_warnings), task.title
        assert "2024-03-08" not in told or str(task.date) == "2024-03-08"
        scored = task.steps[0].location
        if scored is None:  # online: anywhere, and no place is named
            assert task.type is TaskType.online_activity and not sectors_named(told, town)
        else:
            sector = Address.parse(scored).parts[1]
            assert place_name(scored) in told and sectors_named(told, town) == {sector}, told
            assert not re.search(r"[a-z]:[a-z]", told, re.IGNORECASE), told  # no address left
        starts.add(start)
        places.add(scored)
    # The seeds drew other times and places when there was a choice (the check is not idle),
    # and a choice is only left out when the import says why.
    choices = {str(town.resolve(p)) for p in template.location_choices} or {None}
    assert starts <= set(template.time_choices) and places <= choices
    assert len(starts) > 1 or len(template.time_choices) == 1
    assert len(places) > 1 or len(choices) == 1
    narrowed = {"FPG (time in words)": ("time_choices", ["19:00"]),
                "FPG": ("location_choices", ["town:Copper Kettle Cafe"])}
    if field in narrowed:
        name, kept = narrowed[field]
        assert getattr(template, name) == kept
        assert any(f"{name} kept to" in note for note in template.import_notes)
    elif field != "time_choices":
        assert template.time_choices == ["18:00", "19:00", "20:30"]


def test_the_variants_cover_every_field_of_the_public_format():
    fields = {k for k in LANTERNS if k != "task"} | \
        {f"task.{k}" for k in LANTERNS["task"] if k != "goal"} | \
        {f"task.goal.0.{k}" for k in LANTERNS["task"]["goal"][0]}
    assert len(fields) == 21 and fields <= {name.split(" (")[0] for name in EVERY_FIELD}


def test_a_plain_task_imports_without_warnings_or_notes(tmp_path, town):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([LANTERNS]))
    [template] = import_public_tasks(path, town).templates
    assert template.import_warnings == [] and template.name_mapping == {}
    assert template.import_notes == [
        "runs at its published time 18:00 (task.goal.0.start_time), as the reference does; its "
        "other time_choices (19:00, 20:30) are drawn per seed only with --draw-times",
        "performer_choices not used: the task names its performer, Maya Lindqvist"]
    assert template.goal == "Maya Lindqvist wants to host a lantern evening at {place} at " \
        "2024-03-08 {time}."
    assert template.target == "Success means 6 people come to the lantern evening at {place} " \
        "from {time} to {end_time}."


@pytest.mark.parametrize("text, clocks", [
    ("at 2023-02-14 19:00.", ["19:00"]), ("at 2023-02-14T07:30:00", ["07:30"]),
    ("from 5pm to 7 p.m.", ["17:00", "19:00"]), ("at 7:30 PM", ["19:30"]),
    ("at 12am", ["00:00"]), ("17:00-19:00", ["17:00", "19:00"]), ("at 9:05", ["09:05"]),
    ("for 25:00 minutes or a 2-3 hour walk", []), ("in 2023", [])])
def test_times_in_the_forms_a_sentence_states_them(text, clocks):
    assert [m.clock for m in time_mentions(text)] == clocks


def _tell(sentence: str, world, **choices):
    told = tell_drawn_values({"FPG": sentence}, world=world,
                             time_choices=choices.get("times", []), duration=120,
                             location_choices=choices.get("places", []))
    return told, told.sentences["FPG"]


def test_a_window_that_is_not_the_scored_one_is_rewritten_and_warned_about(town):
    told, text = _tell("A party from 5pm to 6pm.", town, times=["17:00", "19:00"])
    assert text == "A party from {time} to {end_time}."
    assert told.warnings == ["FPG states the window 17:00-18:00, but the task is scored over "
                             "120 minutes (17:00-19:00); the sentence now states the scored window"]


def test_a_time_after_until_is_the_end_of_the_window(town):
    told, text = _tell("A party at 17:00, going on until 19:00.", town, times=["17:00", "19:00"])
    assert text == "A party at {time}, going on until {end_time}." and told.warnings == []


def test_a_time_that_is_no_start_is_left_and_warned_about(town):
    told, text = _tell("The cafe closes at 8am; the party is at 19:00.", town,
                       times=["17:00", "19:00"])
    assert text == "The cafe closes at 8am; the party is at {time}."
    assert told.time_choices == ["17:00", "19:00"]
    assert "FPG states 08:00, which is neither a time the task starts at" in told.warnings[0]


def test_a_time_in_words_narrows_the_choices_to_it(town):
    told, text = _tell("Lanterns at noon.", town, times=["12:00", "19:00"])
    assert text == "Lanterns at noon." and told.time_choices == ["12:00"]
    assert told.notes == ["FPG states the time in words ('noon'), which is not rewritten: "
                          "time_choices kept to 12:00"]


def test_a_place_named_outside_an_at_phrase_narrows_the_choices_to_it(town):
    cafe, park = "town:Copper Kettle Cafe", "town:Harrow Park"
    told, text = _tell("The Copper Kettle Cafe's owner holds a party.", town,
                       places=[cafe, park])
    assert text == "The Copper Kettle Cafe's owner holds a party."
    assert told.location_choices == [cafe] and "location_choices kept to" in told.notes[0]
    told, text = _tell("The owner of Copper Kettle Cafe holds a party at the Harrow Park.", town,
                       places=[cafe, park])
    assert text == "The owner of Copper Kettle Cafe holds a party at {place}."
    assert told.location_choices == [cafe]  # the cafe stays named: it is the only place drawn


def test_a_goal_naming_another_place_than_the_scored_one_says_the_scored_one(town):
    told, text = _tell("A party at the Fox and Fiddle Pub tonight.", town,
                       places=["town:Copper Kettle Cafe"])
    assert text == "A party at {place} tonight."
    assert told.warnings == ["FPG names Fox and Fiddle Pub as the place, but the task is scored "
                             "at town:Copper Kettle Cafe; the sentence now names the place drawn"]


def test_places_are_named_ignoring_case_punctuation_and_synonyms(town):
    assert place_key("Hobbs coffee") == place_key("Hobbs Cafe") == "hobbs cafe"
    assert place_key("Isabella Rodriguez's apartment") == "isabella rodriguez s apartment"
    found = place_mentions("Books from the Ashford College Library to copper kettle COFFEE.",
                           town)
    assert [(m.sector.parts[-1], m.locative) for m in found] == [
        ("Ashford College Library", False), ("Copper Kettle Cafe", True)]


def test_the_meta_task_placeholders_become_ours(tmp_path, town):
    meta = public_task({"FPG": "#performer hosts lanterns at #location_0 at #time_0.",
                        "Description": "Have #target_num people at #location_0, not #mystery."})
    help_task = {**public_task({"task_type": "Ask for others", "time_choices": None,
                                "location_choices": None}),
                 "FPG": "#performer needs lanterns from #location_0 brought to #location_1."}
    help_task["task"]["goal"] = [
        {"keyword": "buy", "alter_kwd": [], "start_time": "N/A", "duration_in_minutes": 0,
         "location": "Larkhaven Market", "required_character": []},
        {"keyword": "bring", "alter_kwd": [], "start_time": "N/A", "duration_in_minutes": 0,
         "location": "Copper Kettle Cafe:kitchen", "required_character": []}]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([meta, help_task]))
    party, errand = import_public_tasks(path, town).templates
    assert party.goal == "{performer} hosts lanterns at {place} at 2024-03-08 {time}."
    assert party.target == "Have {expected} people at {place}, not #mystery."
    assert party.import_warnings == ["Description holds #mystery, a public placeholder that "
                                     "nothing fills for a public_activity task; left as written"]
    assert errand.goal == "{performer} needs lanterns from Larkhaven Market brought to the " \
        "kitchen of Copper Kettle Cafe."
    task = instantiate(party, 0, town)
    assert task.criteria.startswith(f"Have {task.expected} people at ")
