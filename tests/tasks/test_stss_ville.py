"""The public STSS tasks on the reference town imported from a checkout: every character and
place is placed without a name map, and a suite runs on that world (scripted model)."""

from __future__ import annotations

import json

import pytest
import yaml

from sandbox.app.cli import main
from tasks.stss import TaskType, import_public_tasks, instantiate
from tests.worlds.ville_fixture import walled_town, write_checkout
from worlds import World
from worlds.ville import import_ville

# Public tasks as the STSS files write them: Smallville's names, full datetimes everywhere.
TASKS = [{
    "goal": "A pastry tasting", "FPG": "Isabella Rodriguez wants to hold a pastry tasting "
    "party at Hobbs Cafe on 2023-02-14 at 12:00.", "Description": "Success means people come to "
    "the tasting party at Hobbs Cafe.", "task_type": "Party", "performer": "Isabella Rodriguez",
    "role_requirement": "", "Note": "", "n_characters": 2, "all_chars": ["#Any"],
    "env_name": "base_the_ville_n25", "time_choices": ["2023-02-14 12:00", "2023-02-14 13:00"],
    "task": {"target": [], "target_num": 1, "goal": [{
        "keyword": "party", "alter_kwd": ["tasting"], "start_time": "2023-02-14 12:00",
        "duration_in_minutes": 60, "location": "the Ville:Hobbs Cafe",
        "required_character": []}]},
}, {
    "goal": "Meet someone", "FPG": "Klaus Mueller wants to talk with Isabella Rodriguez about "
    "his essay.", "Description": "Success means they meet.", "task_type": "Personal appointment",
    "performer": "Klaus Mueller", "env_name": "base_the_ville_n25",
    "task": {"target": ["Isabella Rodriguez"], "target_num": 1, "goal": [{
        "keyword": "meet", "alter_kwd": ["talk"], "start_time": "N/A", "duration_in_minutes": 0,
        "location": "N/A", "required_character": ["Isabella Rodriguez"]}]},
}, {
    "goal": "A borrowed book", "FPG": "Klaus Mueller needs someone to pick up a book at Hobbs "
    "Cafe and bring it to his room.", "Description": "Someone brings it.",
    "task_type": "Ask for others", "performer": "#Any", "env_name": "base_the_ville_n25",
    "task": {"target": [], "target_num": 1, "goal": [
        {"keyword": "pick up", "alter_kwd": [], "start_time": "N/A", "duration_in_minutes": 0,
         "location": "the Ville:Hobbs Cafe:cafe", "required_character": []},
        {"keyword": "bring", "alter_kwd": ["deliver"], "start_time": "N/A",
         "duration_in_minutes": 0,
         "location": "the Ville:Dorm for Oak Hill College:Klaus Mueller's room",
         "required_character": []}]},
}]


@pytest.fixture(scope="module")
def ville(tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("ville")
    # Walled, as the real map is: the bare ground outside the town's wall is larger than the
    # town and no walk reaches it.
    return import_ville(write_checkout(root / "generative_agents", art=walled_town()),
                        root / "out").world


def test_public_tasks_place_every_name_on_the_reference_town(tmp_path, ville):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS))
    party, meeting, book = import_public_tasks(path, ville).templates  # no name map
    assert party.performer == "Isabella Rodriguez"
    assert party.location_choices == ["ville:Hobbs Cafe"]
    assert party.time_choices == ["12:00"] and str(party.date) == "2023-02-14"  # published
    assert str(meeting.date) == str(book.date) == "2023-02-14"  # no time: the reference's day
    assert meeting.type is TaskType.appointment and meeting.target_choices == [
        "Isabella Rodriguez"]
    assert book.performer_choices == ["Isabella Rodriguez", "Klaus Mueller"]  # '#Any'
    assert [s.location for s in book.steps] == [
        "ville:Hobbs Cafe:cafe", "ville:Dorm for Oak Hill College:Klaus Mueller's room"]
    assert [t.id for t in (party, meeting, book)] == [
        "base_the_ville_n25_0", "base_the_ville_n25_1", "base_the_ville_n25_2"]
    task = instantiate(party, 0, ville, background=1)
    assert task.world == str(ville.source.resolve()) and task.background == ["Klaus Mueller"]


def test_the_suite_runs_the_public_file_on_the_imported_town(tmp_path, ville, capsys):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS[:1]))
    out = tmp_path / "suite"
    assert main(["stss", "--templates", str(path), "--world", str(ville.source), "--arch", "ga",
                 "--out", str(out), "--model", "scripted/town", "--embedder", "hashing",
                 "--background", "1", "--same-day", "--start", "11:00"]) == 0
    assert "imported 1 of 1 public task(s)" in capsys.readouterr().out
    header = json.loads((out / "base_the_ville_n25" / "ga" / "s0" / "header.json").read_text())
    assert header["world"] == str(ville.source.resolve())
    assert header["config"]["stss_task"]["performer"] == "Isabella Rodriguez"
    assert header["config"]["stss_task"]["published_time"] == "12:00"
    assert header["start_time"] == "2023-02-14T11:00:00"
    assert json.loads((out / "suite.json").read_text())["world"] == str(ville.source.resolve())
    assert (out / "table.md").is_file()


def test_a_name_the_reference_town_lacks_is_listed_with_the_nearest(tmp_path, ville, capsys):
    wrong = json.loads(json.dumps(TASKS[:1]))
    wrong[0]["task"]["goal"][0]["location"] = "the Ville:Hobbs Caffe"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(wrong))
    assert main(["stss", "--templates", str(path), "--world", str(ville.source), "--out",
                 str(tmp_path / "suite"), "--model", "scripted/town"]) == 2
    err = capsys.readouterr().err
    assert "none of its 1 task(s) could be imported: [0] (base_the_ville_n25): cannot place" in err
    assert "'the Ville:Hobbs Caffe' (location; nearest: 'ville:Hobbs Cafe'" in err
    assert len(err.strip().splitlines()) == 1


def test_a_model_that_cannot_be_reached_leaves_no_output_directory(tmp_path, ville, capsys):
    """The imported tasks are written to OUT/templates before the model is built; a suite that
    stops there must not leave that half-made directory behind (a directory that was there
    before is kept)."""
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS[:1]))
    unreachable = ["--model", "openai/x", "--base-url", "http://127.0.0.1:9"]
    out = tmp_path / "suite"
    assert main(["stss", "--templates", str(path), "--world", str(ville.source), "--out",
                 str(out), *unreachable]) == 2
    assert "cannot reach" in capsys.readouterr().err and not out.exists()
    out.mkdir()
    assert main(["stss", "--templates", str(path), "--world", str(ville.source), "--out",
                 str(out), *unreachable]) == 2
    assert out.is_dir()


def test_a_suite_refuses_to_resume_in_another_world(tmp_path):
    from tasks.stss.plugin.suite import SuiteError, SuiteOptions, check_options, record_options

    record_options(tmp_path, SuiteOptions(model="scripted/town", world="town"))
    with pytest.raises(SuiteError, match="--world: asked for /x/ville.yaml, but the suite"):
        check_options(tmp_path, SuiteOptions(model="scripted/town", world="/x/ville.yaml"))
    assert check_options(tmp_path, SuiteOptions(model="scripted/town")).world == "town"


def _coffee_and_moon_base() -> list[dict]:
    """A party at 'Hobbs Coffee' (the town's Hobbs Cafe, by another word) and a task at a
    place the town has nothing like."""
    party = json.loads(json.dumps(TASKS[0]))
    party["task"]["goal"][0]["location"] = "the Ville:Hobbs Coffee"
    party["FPG"] = "Isabella Rodriguez wants to hold a pastry tasting at Hobbs coffee at 12:00."
    party["Description"] = "Success means 9 people come to the tasting."
    moon = json.loads(json.dumps(TASKS[0]))
    moon["task"]["goal"][0]["location"] = "the Ville:Moon Base"
    return [party, moon]


def test_a_near_match_is_mapped_and_a_task_that_cannot_be_placed_fails_alone(tmp_path, ville,
                                                                            capsys):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(_coffee_and_moon_base()))
    out = tmp_path / "suite"
    assert main(["stss", "--templates", str(path), "--world", str(ville.source), "--arch", "ga",
                 "--out", str(out), "--model", "scripted/town", "--embedder", "hashing",
                 "--background", "1", "--same-day", "--start", "11:00"]) == 1  # after the rest ran
    printed = " ".join(capsys.readouterr().out.split())
    assert "imported 1 of 2 public task(s)" in printed
    assert "not imported: [1] (base_the_ville_n25_1): cannot place these names in world " \
        "'ville': 'the Ville:Moon Base' (location" in printed
    assert "name mapped: base_the_ville_n25_0: 'the Ville:Hobbs Coffee' -> ville:Hobbs Cafe" \
        in printed
    assert "warning: base_the_ville_n25_0: Description states 9 people" in printed
    assert "1 of 2 public task(s) were not imported and did not run: [1] (base_the_ville_n25_1)" \
        in printed
    assert (out / "base_the_ville_n25_0" / "ga" / "s0" / "score.json").is_file()
    saved = yaml.safe_load((out / "templates" / "base_the_ville_n25_0.yaml").read_text())
    assert saved["name_mapping"] == {"the Ville:Hobbs Coffee": "ville:Hobbs Cafe"}
    header = json.loads((out / "base_the_ville_n25_0" / "ga" / "s0" / "header.json").read_text())
    told = header["config"]["stss_task"]
    assert f"at Hobbs Cafe at {told['start'][11:16]}." in told["goal"]  # the time it drew

    table = json.loads((out / "table.json").read_text())
    imports = table["imports"]
    assert (imports["tasks"], [f["index"] for f in imports["failed"]]) == (2, [1])
    assert imports["templates"]["base_the_ville_n25_0"]["name_mapping"] == {
        "the Ville:Hobbs Coffee": "ville:Hobbs Cafe"}
    markdown = (out / "table.md").read_text()
    assert f"Imported 1 of 2 public task(s) from {path}." in markdown
    assert "- not imported: [1] (base_the_ville_n25_1): cannot place" in markdown
    assert "- base_the_ville_n25_0: name mapped: 'the Ville:Hobbs Coffee' -> ville:Hobbs Cafe" \
        in markdown
    assert "- base_the_ville_n25_0: warning: Description states 9 people" in markdown


def test_strict_names_refuse_the_near_match_and_the_whole_file(tmp_path, ville, capsys):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(_coffee_and_moon_base()[:1]))
    out = tmp_path / "suite"
    assert main(["stss", "--templates", str(path), "--world", str(ville.source), "--out",
                 str(out), "--model", "scripted/town", "--strict-names"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'the Ville:Hobbs Coffee' (location; --strict-names: its near match " \
        "'ville:Hobbs Cafe' is not taken) in [0] (base_the_ville_n25)" in err
    assert not out.exists()
