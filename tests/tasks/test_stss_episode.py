"""A scripted STSS episode per task type, end to end: template -> instantiation -> town episode
-> log -> score, with the score predicted from the scripted town model's rules.

The model is `scripted/town` (agents/scripted.py): everyone has lunch at the cafe at 12:00, where
the performer meets the others; an agent whose goal names an event "<what> at <Place> at HH:MM"
invites each person it talks with, and whoever is invited (the performer too, from its own
summary) adds "attending the <what> at <Place>" to the schedule at that hour and goes to the
place whose name shares the most words. It knows nothing of negotiation or of several steps, so
the test templates state one event with a time; the scorers do not know that.
"""

from __future__ import annotations

import pytest
import yaml

from evaluation.stss import score_run
from sandbox.llm import LLMSettings, make_llm
from sandbox.log import load_run
from tasks.stss import EpisodeWindow, instantiate, load_template, template_path
from tasks.stss.plugin.suite import run_task
from worlds import load_world


@pytest.fixture(scope="module")
def town():
    return load_world("town")


def episode(tmp_path, town, template: dict, *, arch="ga_tdp", until=None):
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({"title": "test", "target": "{expected} come.", **template}))
    return run_task(path, town, lambda _run_dir, _performer: make_llm(
                        LLMSettings(model="scripted/town", cache_mode="off")),
                    architecture=arch, seed=0, out=tmp_path / "run", background=2,
                    embedder="hashing",
                    window=EpisodeWindow(same_day=True, start="11:00", until=until))


@pytest.mark.parametrize("arch", ["ga", "ga_tdp"])
def test_public_activity_both_lunch_guests_come_to_the_party(tmp_path, town, arch):
    result, score = episode(tmp_path, town, {
        "type": "public_activity", "performer": "Maya Lindqvist", "keyword": "party",
        "goal": "{performer} is holding a party at {place} at {time} today.",
        "location_choices": ["town:Copper Kettle Cafe"], "time_choices": ["17:00"],
        "duration_minutes": 120}, arch=arch)
    run = load_run(tmp_path / "run")
    assert result.status == "completed"
    assert run.header.config["stss_task"]["performer"] == "Maya Lindqvist"
    assert run.of_kind("task_assigned")[0].agent == "Maya Lindqvist"
    background = run.header.config["stss_task"]["background"]
    # Invited at lunch, both go: 2 participants, 1 expected (ceil(2 / 2)).
    assert score.participants == background and score.expected == 1 and score.score == 1.0
    assert score.talked_with == background and score.conversation_ratio == 2.0
    assert score_run(run).model_dump() == score.model_dump()  # offline re-scoring agrees


def test_online_activity_counts_guests_at_their_own_homes(tmp_path, town):
    _, score = episode(tmp_path, town, {
        "type": "online_activity", "performer": "Leo Fischer", "keyword": "concert",
        "goal": "{performer} is hosting an online concert at Home at {time} today.",
        "time_choices": ["19:00"], "duration_minutes": 60})
    counted = [e for e in score.evidence if e.verdict == "counted"]
    assert score.score == 1.0 and len(score.participants) == 2
    assert len({e.location for e in counted}) == 2  # each at home: no place is required


def test_inviting_companions_the_performer_and_both_friends_meet_at_the_park(tmp_path, town):
    _, score = episode(tmp_path, town, {
        "type": "inviting_companions", "performer": "Daniel Kowalski", "keyword": "picnic",
        "goal": "{performer} wants friends for a picnic at Harrow Park at 17:00 today.",
        "location_choices": ["town:Harrow Park"]}, until="19:00")
    performer = [e for e in score.evidence if e.rule == "performer"]
    assert performer and performer[0].verdict == "counted"
    # Two companions there with him, expected ceil(2 / 3) = 1.
    assert len(score.participants) == 2 and score.expected == 1 and score.score == 1.0


def test_appointment_performer_and_target_meet_in_the_same_arena(tmp_path, town):
    _, score = episode(tmp_path, town, {
        "type": "appointment", "performer": "Kenji Mori", "target_choices": ["Arthur Okonkwo"],
        "keyword": "meeting",
        "goal": "{performer} wants a meeting with {target} at Town Hall at 15:00 today."},
        until="17:00")
    counted = [e for e in score.evidence if e.verdict == "counted"]
    assert score.score == 1.0 and score.participants == ["Arthur Okonkwo"]
    assert {e.agent for e in counted} == {"Kenji Mori", "Arthur Okonkwo"}
    assert {e.location for e in counted} == {"town:Town Hall:meeting hall"}
    assert score.conversation_ratio == 1.0  # he talked with the target first


def test_asking_for_help_one_step_of_two_is_half(tmp_path, town):
    _, score = episode(tmp_path, town, {
        "type": "asking_for_help", "performer": "Maya Lindqvist",
        "goal": "{performer} needs someone to fetch a parcel at the dinner at Fox and Fiddle "
                "Pub at 18:00 today and then deliver it to Town Square.",
        "steps": [{"keyword": "dinner", "location": "town:Fox and Fiddle Pub"},
                  {"keyword": "deliver", "location": "town:Town Square"}]}, until="20:00")
    # The scripted helpers go to the dinner (step 1) but know nothing of a second step.
    assert score.score == 0.5 and score.conversation_ratio is None
    assert any("step(s) 2 'deliver' never done" in e.reason for e in score.evidence)


def test_an_episode_that_ends_before_the_activity_window_opens_is_refused(town):
    task = instantiate(load_template(template_path("public_spring_tasting"), town), 0, town)
    assert (task.start.hour, task.end.hour) == (18, 20)  # seed 0
    for until in ("10:00", "18:00"):  # before, or exactly when it opens: nothing could count
        with pytest.raises(ValueError, match="before the activity's time window opens"):
            EpisodeWindow(same_day=True, until=until).times(task)


def test_an_episode_that_ends_inside_the_activity_window_is_warned_about(town):
    task = instantiate(load_template(template_path("public_spring_tasting"), town), 0, town)
    warning = EpisodeWindow(until="19:00").cut_short(task)
    assert warning and "ends at 19:00" in warning and "18:00-20:00" in warning
    assert EpisodeWindow().cut_short(task) is None
    assert EpisodeWindow(until="20:30").cut_short(task) is None
