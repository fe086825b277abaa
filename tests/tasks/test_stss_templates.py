"""STSS templates: all 30 load and instantiate; bad files say file, field and reason."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from sandbox.files import FileFormatError
from tasks.stss import (
    EpisodeWindow,
    ImportProblem,
    TaskType,
    builtin_templates,
    import_public_tasks,
    instantiate,
    load_template,
)
from tasks.stss.importer import write_templates
from worlds import load_world, world_residents


@pytest.fixture(scope="module")
def town():
    return load_world("town")


def test_thirty_templates_in_the_papers_proportions(town):
    kinds = Counter(load_template(p, town).type for p in builtin_templates())
    assert kinds == {TaskType.public_activity: 10, TaskType.appointment: 5,
                     TaskType.inviting_companions: 5, TaskType.online_activity: 5,
                     TaskType.asking_for_help: 5}


@pytest.mark.parametrize("path", builtin_templates(), ids=lambda p: p.stem)
def test_every_template_instantiates_for_seeds_0_to_4(path, town):
    template = load_template(path, town)
    residents = {r.name for r in world_residents(town)}
    for seed in range(5):
        task = instantiate(template, seed, town)
        assert task.performer in residents and task.performer not in task.background
        assert 10 <= len(task.background) <= 12 and set(task.background) <= residents
        if task.type is TaskType.appointment:
            assert task.target in task.background
        assert "{" not in task.goal + task.criteria
        assert str(task.expected) in task.criteria or task.type in (
            TaskType.appointment, TaskType.asking_for_help)
        for step in task.steps:
            assert step.location is None or town.has(step.location)
        assert task == instantiate(template, seed, town)  # a seed is a seed
        EpisodeWindow().times(task)  # the default window fits every task


def test_seeds_draw_different_performers_times_and_background(town):
    template = load_template(builtin_templates()[0].parent / "public_open_mic.yaml", town)
    tasks = [instantiate(template, s, town) for s in range(5)]
    assert len({t.performer for t in tasks}) > 1
    assert len({t.start for t in tasks}) > 1
    assert len({tuple(t.background) for t in tasks}) == 5


def test_a_role_picks_a_performer_whose_occupation_has_it(town):
    template = load_template(builtin_templates()[0].parent / "public_open_mic.yaml", town)
    jobs = {r.name: r.occupation for r in world_residents(town)}
    assert all("student" in jobs[instantiate(template, s, town).performer] for s in range(5))


GOOD = {"type": "public_activity", "title": "t", "performer": "Maya Lindqvist",
        "goal": "{performer} holds a party at {place} at {time}.", "target": "{expected} come.",
        "keyword": "party", "location_choices": ["town:Copper Kettle Cafe"],
        "time_choices": ["17:00"], "duration_minutes": 60}


@pytest.mark.parametrize("change, field, reason", [
    ({"location_choices": ["town:Moon Base"]}, "location_choices.0", "no place 'town:Moon Base'"),
    ({"performer": "Isabella Rodriguez"}, "performer", "no resident 'Isabella Rodriguez'"),
    ({"duration_minutes": -30}, "duration_minutes", "the window ends before it starts"),
    ({"keyword": None}, "keyword", "missing keyword"),
    ({"time_choices": ["25:00"]}, "time_choices", "not a time of day"),
    ({"goal": "{performer} meets {friend}."}, "goal", "unknown placeholder {friend}"),
    ({"location_choices": []}, "location_choices", "fixed place"),
    ({"type": "appointment"}, "location_choices", "no fixed place"),
    ({"colour": "red"}, "colour", "Extra inputs are not permitted"),
])
def test_a_bad_template_names_file_field_and_reason(tmp_path, town, change, field, reason):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**GOOD, **change}))
    with pytest.raises(FileFormatError) as caught:
        load_template(path, town)
    message = str(caught.value)
    assert str(path) in message and field in caught.value.where and reason in message


INVITING = {"type": "inviting_companions", "title": "t", "performer": "Daniel Kowalski",
            "goal": "{performer} jogs at {place} on {date}.", "target": "{expected} jog.",
            "keyword": "jog", "location_choices": ["town:Harrow Park"]}
APPOINTMENT = {"type": "appointment", "title": "t", "performer": "Kenji Mori",
               "target_choices": ["Arthur Okonkwo"], "goal": "{performer} meets {target}.",
               "target": "They meet.", "keyword": "meeting"}
HELP = {"type": "asking_for_help", "title": "t", "performer": "Maya Lindqvist",
        "goal": "{performer} needs help.", "target": "Someone helps.",
        "steps": [{"keyword": "borrow", "location": "town:Ashford College Library"}]}


@pytest.mark.parametrize("base, change, field, reason", [
    (INVITING, {"duration_minutes": 45}, "duration_minutes", "has no time window"),
    (APPOINTMENT, {"duration_minutes": 30}, "duration_minutes", "has no time window"),
    (HELP, {"duration_minutes": 30}, "duration_minutes", "has no time window"),
    (HELP, {"keyword": "borrow"}, "keyword", "put each keyword in a step"),
    (HELP, {"alternatives": ["fetch"]}, "alternatives", "in the step they belong to"),
    (INVITING, {"steps": HELP["steps"]}, "steps", "only asking_for_help has steps"),
    (INVITING, {"target_choices": ["Arthur Okonkwo"]}, "target_choices", "only an appointment"),
], ids=["inviting-duration", "appointment-duration", "help-duration", "help-keyword",
        "help-alternatives", "inviting-steps", "inviting-target"])
def test_a_field_the_type_does_not_take_is_an_error(tmp_path, town, base, change, field,
                                                     reason):
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump(base))
    load_template(path, town)  # sound without the extra field
    path.write_text(yaml.safe_dump({**base, **change}))
    with pytest.raises(FileFormatError) as caught:
        load_template(path, town)
    assert str(path) in str(caught.value) and caught.value.where == field
    assert reason in str(caught.value)


def test_a_help_step_with_an_unknown_place_is_named(tmp_path, town):
    data = {**GOOD, "type": "asking_for_help", "keyword": None, "location_choices": [],
            "time_choices": [], "duration_minutes": None,
            "steps": [{"keyword": "borrow", "location": "town:Library of Alexandria"}]}
    path = tmp_path / "help.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(FileFormatError, match="steps.0.location"):
        load_template(path, town)


PUBLIC = [{
    "goal": "Valentine party", "FPG": "Isabella Rodriguez wants to hold a Valentine's Day party "
    "at Hobbs Cafe at 2023-02-14 19:00.", "Description": "The target is to have 5 people "
    "attend the party at Hobbs Cafe.", "task_type": "Party", "performer": "Isabella Rodriguez",
    "role_requirement": "", "Note": "", "n_characters": 12, "all_chars": [],
    "env_name": "base_party",
    "task": {"target": [], "target_num": 6, "goal": [{
        "keyword": "party", "alter_kwd": ["valentine"], "start_time": "2023-02-14 19:00",
        "duration_in_minutes": 120, "location": "the Ville:Hobbs Cafe",
        "required_character": []}]},
}, {
    "goal": "Borrow books", "FPG": "Wolfgang Schulz needs someone to borrow books at the "
    "library and bring them to his dorm.", "Description": "Someone borrows and delivers.",
    "task_type": "Ask for others", "performer": "Wolfgang Schulz", "env_name": "base_books",
    "task": {"target": [], "target_num": 1, "goal": [
        {"keyword": "borrow", "alter_kwd": [], "start_time": "N/A", "duration_in_minutes": 0,
         "location": "Oak Hill College Library", "required_character": []},
        {"keyword": "deliver", "alter_kwd": ["bring"], "start_time": "N/A",
         "duration_in_minutes": 0, "location": "Dorm for Oak Hill College",
         "required_character": []}]},
}]
NAMES = {"Isabella Rodriguez": "Maya Lindqvist", "Hobbs Cafe": "Copper Kettle Cafe",
         "Wolfgang Schulz": "Priya Raman", "Oak Hill College Library": "Ashford College Library",
         "Dorm for Oak Hill College": "Birchwood Dormitory"}


def test_strict_names_refuse_the_file_listing_every_name_it_cannot_place(tmp_path, town):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(PUBLIC))
    with pytest.raises(ImportProblem) as caught:
        import_public_tasks(path, town, strict_names=True)
    assert caught.value.unplaced == sorted([
        "'Dorm for Oak Hill College' (location)",
        "'Isabella Rodriguez' (character)", "'Oak Hill College Library' (location)",
        "'Wolfgang Schulz' (character)", "'the Ville:Hobbs Cafe' (location)"])


def test_a_task_that_cannot_be_placed_fails_alone_with_its_names(tmp_path, town):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(PUBLIC))
    imported = import_public_tasks(path, town)
    assert imported.templates == [] and imported.total == 2
    party, books = imported.failed
    assert (party.index, party.id, books.index, books.id) == (0, "base_party", 1, "base_books")
    assert "'Isabella Rodriguez' (character" in party.reason
    assert "'Oak Hill College Library' (location" in books.reason


def test_importing_with_a_name_map_gives_templates_of_our_town(tmp_path, town):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(PUBLIC))
    party, books = import_public_tasks(path, town, NAMES).templates
    assert party.type is TaskType.public_activity and party.performer == "Maya Lindqvist"
    assert party.location_choices == ["town:Copper Kettle Cafe"]
    assert party.time_choices == ["19:00"] and str(party.date) == "2023-02-14"
    told = instantiate(party, 0, town)
    assert "Maya Lindqvist" in told.goal and "Copper Kettle Cafe at 2023-02-14 19:00" in told.goal
    assert books.type is TaskType.asking_for_help
    assert [s.location for s in books.steps] == ["town:Ashford College Library",
                                                "town:Birchwood Dormitory"]
    saved = write_templates([party, books], tmp_path / "ours")
    again = [load_template(p, town) for p in saved]
    assert again == [party, books]
    task = instantiate(again[0], 0, town)
    assert task.start.isoformat() == "2023-02-14T19:00:00"


def test_importing_a_fixed_time_task_of_zero_minutes_is_an_error(tmp_path, town):
    # No guessed default: the duration is the scoring window.
    party = json.loads(json.dumps(PUBLIC[0]))
    party["task"]["goal"][0]["duration_in_minutes"] = 0
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([party]))
    [failed] = import_public_tasks(path, town, NAMES).failed
    assert failed.where == "[0] (base_party).task.goal.0.duration_in_minutes"
    assert "needs how long it lasts" in failed.reason


def test_importing_a_task_without_a_keyword_names_the_task(tmp_path, town):
    books = json.loads(json.dumps(PUBLIC[1]))
    del books["task"]["goal"][0]["keyword"]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([PUBLIC[0], books]))
    imported = import_public_tasks(path, town, NAMES)
    assert [t.id for t in imported.templates] == ["base_party"]
    [failed] = imported.failed
    assert failed.where == "[1] (base_books)" and "missing field 'keyword'" in failed.reason


def test_a_public_file_without_tasks_is_an_error(tmp_path, town):
    path = tmp_path / "tasks.json"
    path.write_text("[]")
    with pytest.raises(FileFormatError, match="no tasks in the file"):
        import_public_tasks(path, town)
