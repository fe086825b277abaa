"""Three residents of the built-in town, run as an episode; the log tells the whole story."""

from __future__ import annotations

import pytest

from agents.scripted import town_backend
from sandbox.llm import LLMSettings, make_llm
from sandbox.log import load_run
from sandbox.runner import run_episode
from sandbox.summary import summarize
from tasks.town import TownConfig, TownScenario

PERFORMER = "Agnes Whitfield"
TASK = "Agnes wants to hold a party at Copper Kettle Cafe at 17:00 today and invite people."


def run_day(tmp_path, performer_arch="ga_tdp"):
    cfg = TownConfig(world="town", residents=[PERFORMER, "Amara Mensah", "Arthur Okonkwo"],
                     architectures={PERFORMER: performer_arch}, tasks={PERFORMER: TASK},
                     hours=12, embedder="hashing")
    llm = make_llm(LLMSettings(model="scripted/town", cache_mode="off"), backend=town_backend())
    result = run_episode(TownScenario(cfg), llm, seed=3, out_dir=tmp_path / "run")
    assert result.status == "completed"
    return load_run(tmp_path / "run")


def test_an_invitation_in_the_town_changes_the_invitees_afternoon(tmp_path):
    run = run_day(tmp_path)
    utterances = run.of_kind("utterance")
    invite = next(u for u in utterances if u.agent == PERFORMER and "party" in u.text)
    invitee = invite.to[0]
    assert invitee != PERFORMER
    hourly = next(e for e in run.of_kind("plan_made")
                  if e.agent == invitee and e.level == "hourly")
    assert not any("party" in line for line in hourly.items)
    five_pm = 11 * 3600  # the episode starts at 06:00
    later = [e for e in run.of_kind("action_started")
             if e.agent == invitee and five_pm <= e.t < five_pm + 3600]
    assert later and all(e.location.startswith("town:Copper Kettle Cafe") for e in later)
    assert any("party" in e.description for e in later)
    moves = [e for e in run.of_kind("move") if e.agent == invitee]
    assert any(m.destination.startswith("town:Copper Kettle Cafe") for m in moves)


def test_the_log_counts_calls_per_agent_per_day_by_module(tmp_path):
    run = run_day(tmp_path)
    table = summarize(run)["llm_calls_by_agent_day_module"]
    assert set(table) == {PERFORMER, "Amara Mensah", "Arthur Okonkwo"}
    day = table[PERFORMER]["2024-02-13"]
    assert {"plan", "converse", "react", "tdp"} <= set(day)
    assert "tdp" not in table["Amara Mensah"]["2024-02-13"]
    header = run.header
    assert header.config["architectures"] == {PERFORMER: "ga_tdp"}
    # the header records every architecture in full: each slot's module and parameters
    modules = header.config["architecture_modules"]
    assert set(modules) == {"ga", "ga_tdp"}
    from agents.architecture import SLOTS, load_architecture

    assert set(modules["ga_tdp"]["modules"]) == set(SLOTS)
    built_in = load_architecture("ga_tdp").describe()["modules"]
    assert {slot: m["module"] for slot, m in modules["ga_tdp"]["modules"].items()} == \
        {slot: m["module"] for slot, m in built_in.items()}
    assert all(m["params"] for m in modules["ga_tdp"]["modules"].values())
    joined = {e.agent: e.architecture for e in run.of_kind("agent_joined")}
    assert joined == {PERFORMER: "ga_tdp", "Amara Mensah": "ga", "Arthur Okonkwo": "ga"}


def test_an_interrupted_day_continues_from_its_cache_to_the_same_log(tmp_path):
    """What the README promises: run the same command again with --overwrite and the episode
    fast-forwards through the answers already given, then goes on, to the log it would have had."""
    cfg = TownConfig(world="town", residents=[PERFORMER, "Amara Mensah", "Arthur Okonkwo"],
                     architectures={PERFORMER: "ga_tdp"}, tasks={PERFORMER: TASK}, hours=12,
                     embedder="hashing")

    def llm(run_dir):
        return make_llm(LLMSettings(model="scripted/town", cache_path=run_dir / "llm_cache.jsonl",
                                    cache_mode="record"), backend=town_backend())

    whole = tmp_path / "whole"
    run_episode(TownScenario(cfg), llm(whole), seed=3, out_dir=whole)

    cut = tmp_path / "cut"
    seen = []

    def ctrl_c_at_noon(event):
        seen.append(event)
        if event.t > 6 * 3600:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_episode(TownScenario(cfg), llm(cut), seed=3, out_dir=cut, on_event=ctrl_c_at_noon)
    assert load_run(cut).result.status == "interrupted"
    answered = sum(1 for _ in (cut / "llm_cache.jsonl").open())
    assert answered > 10

    run_episode(TownScenario(cfg), llm(cut), seed=3, out_dir=cut, overwrite=True)
    calls = load_run(cut).calls
    assert sum(c.cached for c in calls) >= answered - 1  # the call in flight at the cut may rerun
    assert (cut / "events.jsonl").read_bytes() == (whole / "events.jsonl").read_bytes()
