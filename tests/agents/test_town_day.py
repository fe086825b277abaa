"""A scripted day of three residents: an invitation in a conversation changes the invitee's day."""

from __future__ import annotations

from sandbox.events.agent import ActionStarted, PlanMade
from tests.agents.ga_helpers import ISABELLA, Recorder, town_day


def _hour(engine, t):
    return engine.clock.at(t).hour


def test_an_invitation_in_a_conversation_changes_the_invitees_later_plan(recorder):
    engine, society = town_day(recorder, until_hour=18.5)
    events = engine.events
    invites = [e for e in events if e.kind == "utterance" and e.agent == ISABELLA.name
               and "party" in e.text]
    assert invites, "the performer invited nobody"
    invitee = next(e for e in events if e.kind == "utterance" and e.agent != ISABELLA.name
                   and e.conversation == invites[0].conversation).agent
    said_at = invites[0].t

    # Before the conversation the invitee's day had no party at 17:00 ...
    first_schedule = next(e for e in events if isinstance(e, PlanMade)
                          and e.agent == invitee and e.level == "hourly")
    assert not any("party" in line for line in first_schedule.items)
    # ... the summary of the talk reached the invitee's revision, which added it ...
    revised = [e for e in events if isinstance(e, PlanMade) and e.agent == invitee
               and e.level == "revised" and e.t >= said_at]
    assert revised and "party" in revised[0].reason
    assert any(line.startswith("17:00") and "party" in line for line in revised[0].items)
    # ... and at 17:00 the invitee is at the cafe, doing it.
    at_party = [e for e in events if isinstance(e, ActionStarted) and e.agent == invitee
                and _hour(engine, e.t) == 17]
    assert at_party and all(e.location == "mini:Hobbs Cafe:cafe" for e in at_party)
    assert any("party" in e.description for e in at_party)


def test_a_day_logs_plans_moves_memories_and_retrievals(recorder):
    engine, society = town_day(recorder, until_hour=13)
    kinds = {e.kind for e in engine.events}
    assert {"agent_joined", "plan_made", "action_started", "move", "memory_added",
            "memory_retrieved"} <= kinds
    for name, agent in society.agents.items():
        actions = [e for e in engine.events if isinstance(e, ActionStarted) and e.agent == name]
        assert actions and all(e.location in agent.places for e in actions)


def test_the_same_seed_gives_the_same_events(recorder):
    first, _ = town_day(recorder, until_hour=13)
    second, _ = town_day(Recorder(), until_hour=13)
    dump = [e.model_dump_json() for e in first.events]
    assert dump == [e.model_dump_json() for e in second.events]


def test_a_decomposition_offers_a_short_list_of_known_places_led_by_the_relevant_ones():
    from agents.planning import shortlist

    places = [f"town:Sector {i}:room" for i in range(40)] + ["town:Copper Kettle Cafe:dining room"]
    offered = shortlist(places, "lunch at the Copper Kettle Cafe",
                        ["town:Sector 3:room", "town:Sector 7:room", ""], 5)
    assert offered[:3] == ("town:Sector 3:room", "town:Sector 7:room",
                           "town:Copper Kettle Cafe:dining room")
    assert len(offered) == 5 and set(offered) <= set(places)


def test_after_a_conversation_it_started_the_initiator_notices_who_else_is_there(recorder):
    engine, _ = town_day(recorder, until_hour=13)
    started = {e.conversation: e for e in engine.events if e.kind == "conversation_started"}
    ended = [e for e in engine.events if e.kind == "conversation_ended"]
    # At lunch Klaus talks with Isabella at the cafe, where Maria is having lunch too: when the
    # talk ends he weighs talking with her at once, not after waiting out his lunch step.
    lunch = [e for e in ended if _hour(engine, e.t) == 12]
    assert lunch, "nobody talked at lunch"
    initiator, partner = started[lunch[0].conversation].participants
    considered = [e for e in engine.events if e.kind == "reaction_decided"
                  and e.agent == initiator and lunch[0].t <= e.t < lunch[0].t + 60]
    assert considered and {e.target for e in considered} - {partner}
