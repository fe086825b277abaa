"""The public STSS task format: its datetimes, its wildcard character, and errors that name the
task (index and id), the field and, for names the world lacks, the nearest ones it has."""

from __future__ import annotations

import json

import pytest

from tasks.stss import ImportProblem, TaskType, import_public_tasks, instantiate
from tasks.stss.importer import public_time
from tests.tasks.test_stss_templates import NAMES, PUBLIC
from worlds import World, load_world, world_residents


@pytest.fixture(scope="module")
def town():
    return load_world("town")


def _write(tmp_path, tasks) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def _party(**change):
    party = json.loads(json.dumps(PUBLIC[0]))
    party.update(change)
    return party


@pytest.mark.parametrize("text, expected", [
    ("2023-02-14 19:00", ("2023-02-14", "19:00")), ("2023-02-14 19:00:00", ("2023-02-14", "19:00")),
    ("2023-02-14T07:30", ("2023-02-14", "07:30")), ("9:05", (None, "09:05")),
    ("N/A", None), ("", None)])
def test_public_times_in_every_form_the_files_use(text, expected):
    found = public_time(text)
    assert (None if found is None else (found[0] and str(found[0]), found[1])) == expected


@pytest.mark.parametrize("text", ["tomorrow", "2023-02-30 10:00", "25:00", "2023-02-14 10:00:30"])
def test_unreadable_public_times_are_refused(text):
    with pytest.raises(ValueError):
        public_time(text)


def test_time_choices_as_full_datetimes_import(tmp_path, town):
    # The public files write every choice as a full datetime, like start_time.
    party = _party(time_choices=["2023-02-14 17:00", "2023-02-14 19:00", "2023-02-14 20:30"])
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES,
                                     draw_times=True).templates
    assert template.time_choices == ["19:00", "17:00", "20:30"]  # the goal's own start first
    assert str(template.date) == "2023-02-14" and template.published_time == "19:00"
    starts = {instantiate(template, seed, town).start.isoformat() for seed in range(12)}
    assert starts == {"2023-02-14T17:00:00", "2023-02-14T19:00:00", "2023-02-14T20:30:00"}


def test_a_public_task_runs_at_its_published_time_unless_times_are_drawn(tmp_path, town):
    """The reference plans and scores only the goal's start_time: before, seed 0 ran a task
    published at 17:30 at 12:00 (its time_choices drawn per seed)."""
    party = _party(time_choices=["2023-02-14 12:00", "2023-02-14 17:30"], goal="Party at 17:30")
    party["task"]["goal"][0]["start_time"] = "2023-02-14 17:30"
    party["FPG"] = "Isabella Rodriguez wants to hold a party at Hobbs Cafe at 2023-02-14 17:30."
    path = _write(tmp_path, [party])
    [template] = import_public_tasks(path, town, NAMES).templates
    assert template.time_choices == ["17:30"] and template.published_time == "17:30"
    assert "runs at its published time 17:30" in template.import_notes[0]
    for seed in range(10):
        task = instantiate(template, seed, town)
        assert task.start.isoformat() == "2023-02-14T17:30:00" and "17:30" in task.goal
        assert task.title == "Party at 17:30" and task.published_time == "17:30"
    [drawn] = import_public_tasks(path, town, NAMES, draw_times=True).templates
    task = instantiate(drawn, 0, town)
    assert task.start.strftime("%H:%M") == "12:00" and task.published_time == "17:30"
    assert task.title == "Party at 12:00" and "2023-02-14 12:00" in task.goal


def test_a_task_without_a_time_is_scored_on_the_reference_day_its_sentence_names(tmp_path,
                                                                                  town):
    """Before, the 9 public tasks without a fixed time ran on 2024-02-13/14 (the schema's
    default) while their sentence said "on 2023-02-14"."""
    books = json.loads(json.dumps(PUBLIC[1]))
    books["FPG"] = "Wolfgang Schulz needs someone to borrow books at the library on 2023-02-14."
    plain = json.loads(json.dumps(PUBLIC[1]))
    plain["env_name"] = "plain_books"
    [told, untold] = import_public_tasks(_write(tmp_path, [books, plain]), town,
                                         NAMES).templates
    assert str(told.date) == str(untold.date) == "2023-02-14"
    assert instantiate(told, 0, town).date.isoformat() == "2023-02-14"


@pytest.mark.parametrize("field, text", [
    ("FPG", "Isabella Rodriguez wants a party at Hobbs Cafe at 2023-02-15 19:00."),
    ("Description", "Five people come on February 16th."), ("goal", "Party on 2024-02-14")])
def test_a_sentence_naming_another_day_than_the_scored_one_is_an_import_error(tmp_path, town,
                                                                               field, text):
    [failed] = import_public_tasks(_write(tmp_path, [_party(**{field: text})]), town,
                                   NAMES).failed
    assert failed.where == f"[0] (base_party).{'title' if field == 'goal' else field}"
    assert "but the task is scored on 2023-02-14 (its times)" in failed.reason
    books = json.loads(json.dumps(PUBLIC[1]))  # no time: two days named, neither wins
    books.update(FPG="Borrow books on 2023-02-15.", Description="Delivered on 2023-02-14.")
    [failed] = import_public_tasks(_write(tmp_path, [books]), town, NAMES).failed
    assert failed.where == "[0] (base_books).FPG"
    assert "scored on 2023-02-14 (the reference's event day" in failed.reason


def test_a_time_choice_on_another_day_names_the_task_and_both_days(tmp_path, town):
    party = _party(time_choices=["2023-02-14 17:00", "2023-02-15 17:00"])
    [failed] = import_public_tasks(_write(tmp_path, [PUBLIC[1], party]), town, NAMES).failed
    assert failed.where == "[1] (base_party).time_choices.1"
    assert "2023-02-15" in failed.reason and "2023-02-14" in failed.reason


def test_a_task_without_start_time_takes_its_day_from_the_choices(tmp_path, town):
    party = _party(time_choices=["2023-02-14 18:00"])
    party["task"]["goal"][0]["start_time"] = "N/A"
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.time_choices == ["18:00"] and str(template.date) == "2023-02-14"


def test_every_error_names_the_task_by_index_and_id(tmp_path, town):
    bad = _party(task_type="Picnic", env_name="spring picnic")
    [failed] = import_public_tasks(_write(tmp_path, [PUBLIC[1], bad]), town, NAMES).failed
    assert failed.where == "[1] (spring_picnic).task_type"


def test_repeated_env_names_get_distinct_ids(tmp_path, town):
    # env_name may name the simulation base every task shares; files must not overwrite.
    first, second = _party(env_name="base_the_ville"), _party(env_name="base_the_ville")
    templates = import_public_tasks(_write(tmp_path, [first, second]), town, NAMES).templates
    assert [t.id for t in templates] == ["base_the_ville_0", "base_the_ville_1"]


def test_the_wildcard_character_means_any_resident(tmp_path, town):
    party = _party(performer="#Any")
    meeting = {**_party(performer="#Any", task_type="Personal appointment",
                        env_name="meet_anyone"),
               "task": {"target": ["#Any"], "goal": [{
                   "keyword": "meet", "alter_kwd": [], "start_time": "N/A",
                   "duration_in_minutes": 0, "location": "N/A"}]}}
    public, appointment = import_public_tasks(_write(tmp_path, [party, meeting]), town,
                                              NAMES).templates
    everyone = sorted(r.name for r in world_residents(town))
    assert public.performer is None and public.performer_choices == everyone
    assert appointment.type is TaskType.appointment
    assert appointment.target_choices == everyone
    task = instantiate(appointment, 3, town)
    assert task.target in everyone and task.target != task.performer


def test_unplaceable_names_come_with_the_tasks_and_the_nearest_names(tmp_path, town):
    party = _party(performer="Maya Lindqvst")  # a typo of a resident
    party["task"]["goal"][0]["location"] = "Copper Kettle Caffe"  # a typo is not a near match
    with pytest.raises(ImportProblem) as caught:
        import_public_tasks(_write(tmp_path, [party]), town, strict_names=True)
    message = str(caught.value)
    assert caught.value.unplaced == ["'Copper Kettle Caffe' (location)",
                                     "'Maya Lindqvst' (character)"]
    assert "'Maya Lindqvst' (character; nearest: 'Maya Lindqvist') in [0] (base_party)" in message
    assert "'Copper Kettle Caffe' (location; nearest: 'town:Copper Kettle Cafe'" in message


def test_a_near_match_of_one_place_is_mapped_and_recorded(tmp_path, town):
    party = _party(FPG="Maya Lindqvist hosts a party at copper-kettle Coffee at 19:00.")
    party["task"]["goal"][0]["location"] = "the Ville:Copper Kettle coffee"
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.location_choices == ["town:Copper Kettle Cafe"]
    assert template.name_mapping == {"the Ville:Copper Kettle coffee": "town:Copper Kettle Cafe"}
    assert instantiate(template, 0, town).goal == \
        "Maya Lindqvist hosts a party at Copper Kettle Cafe at 19:00."


def test_strict_names_take_no_near_match(tmp_path, town):
    party = _party()
    party["task"]["goal"][0]["location"] = "Copper Kettle Coffee"
    with pytest.raises(ImportProblem) as caught:
        import_public_tasks(_write(tmp_path, [party]), town, NAMES, strict_names=True)
    assert "'Copper Kettle Coffee' (location; --strict-names: its near match " \
        "'town:Copper Kettle Cafe' is not taken) in [0] (base_party)" in str(caught.value)


def test_a_near_match_of_two_places_is_no_match(tmp_path):
    from tasks.stss.importer import near_places
    from tests.worlds.conftest import write_world

    world = World.load(write_world(tmp_path, """\
        name: corner
        legend:
          "a": {sector: Hobbs Cafe, arena: cafe}
          "b": {sector: Hobbs Coffee, arena: cafe}
        grid: |
          aabb
        """))
    assert [str(p) for p in near_places(world, ["Hobbs Café"])] == [
        "corner:Hobbs Cafe", "corner:Hobbs Coffee"]
    assert [str(p) for p in near_places(world, ["the Ville", "hobbs-coffee", "Cafe"])] == [
        "corner:Hobbs Cafe:cafe", "corner:Hobbs Coffee:cafe"]
    assert near_places(world, ["Hobbs Tea Room"]) == []


def test_a_performer_outside_performer_choices_is_a_warning(tmp_path, town):
    party = _party(performer_choices=["Julian Reyes", "Nora Byrne"])
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.performer == "Maya Lindqvist" and template.performer_choices == []
    assert template.import_warnings[0] == (
        "performer 'Isabella Rodriguez' is not among performer_choices (Julian Reyes, Nora "
        "Byrne); Maya Lindqvist performs and the choices are not used")
    party = _party(performer_choices=["Isabella Rodriguez", "Julian Reyes"])
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.import_warnings == [] and template.import_notes == [
        "performer_choices not used: the task names its performer, Maya Lindqvist"]
    party = _party(performer_choices=["#Any"])  # anyone: the named performer, nothing lost
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.import_warnings == template.import_notes == []


def test_a_head_count_the_score_does_not_use_is_a_warning(tmp_path, town):
    [template] = import_public_tasks(_write(tmp_path, [_party()]), town, NAMES).templates
    assert template.import_warnings == []  # 5 people, target_num 6: the performer and 5
    party = _party(Description="The target is to have 8 people at the party.")
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.import_warnings == [
        "Description states 8 people, but the score counts against 5 or 6 here (10-12 "
        "background residents)",
        "Description states 8 people, but its target_num 6 counts against 5 (the performer and "
        "5 others) in the public code"]


def test_a_goal_that_names_another_place_than_the_scored_one_is_a_warning(tmp_path, town):
    party = _party(FPG="Isabella Rodriguez holds a party at the Fox and Fiddle Pub at 19:00.")
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.import_warnings[0] == (
        "FPG names Fox and Fiddle Pub as the place, but the task is scored at town:Copper Kettle "
        "Cafe; the sentence now names the place drawn")
    assert instantiate(template, 0, town).goal == \
        "Maya Lindqvist holds a party at Copper Kettle Cafe at 19:00."


def test_target_num_and_the_place_as_written_are_kept_for_the_reference_rules(tmp_path, town):
    """The reference rule set divides by target_num - 1 and tests the place as the file wrote
    it: a near match ("Copper Kettle Coffee") is ours to make, not the reference's."""
    party = _party()
    party["task"]["target_num"] = 7
    party["task"]["goal"][0]["location"] = "Copper Kettle Coffee"
    [template] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).templates
    assert template.target_num == 7
    assert template.reference_places == {"town:Copper Kettle Cafe": "Copper Kettle Coffee"}
    task = instantiate(template, 0, town)
    assert task.target_num == 7
    assert (task.steps[0].location, task.steps[0].reference_location) == \
        ("town:Copper Kettle Cafe", "Copper Kettle Coffee")


def test_a_target_num_that_is_no_head_count_names_the_field(tmp_path, town):
    party = _party()
    party["task"]["target_num"] = "seven"
    [failed] = import_public_tasks(_write(tmp_path, [party]), town, NAMES).failed
    assert failed.where.endswith("task.target_num") and "'seven'" in failed.reason
