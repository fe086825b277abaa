"""Residents run ahead of each other (`--schedule ahead`) where nothing can meet them, and a run
is the same run, file for file, under `ahead` and `lockstep`, whatever order the answers come
back in (sandbox/README.md, "Running ahead")."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.engine import Engine
from sandbox.llm import LLMRequest, LLMSettings, Message, ScriptedBackend, make_llm
from sandbox.llm.accounting import TIMING
from sandbox.llm.loopback import Loopback
from worlds import World, WorldState

MINI_TOWN = Path(__file__).parents[1] / "agents" / "data" / "mini_town.yaml"
FILES = ("events.jsonl", "prompts.jsonl")


def assert_same_run(a: Path, b: Path) -> None:
    """Two run directories hold the same run: events, prompts, calls (timing aside), score
    (its own directory aside) and every checkpoint, byte for byte."""
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

    def calls(run):
        lines = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
        return [{k: v for k, v in line.items() if k not in TIMING} for line in lines]

    assert calls(a) == calls(b)
    if (a / "score.json").exists():
        def score(run):
            return {k: v for k, v in json.loads((run / "score.json").read_text()).items()
                    if k != "run"}
        assert score(a) == score(b)
    # and neither says running ahead broke its rule (lockstep never can)
    assert json.loads((a / "result.json").read_text())["warnings"] == \
        json.loads((b / "result.json").read_text())["warnings"]
    kept = sorted(p.name for p in (a / "checkpoints").glob("*.json.gz"))
    assert kept == sorted(p.name for p in (b / "checkpoints").glob("*.json.gz"))
    for name in kept:
        assert (a / "checkpoints" / name).read_bytes() == \
            (b / "checkpoints" / name).read_bytes(), name


def run_both(tmp_path: Path, argv: list[str]) -> tuple[Path, Path]:
    runs = []
    for schedule in ("lockstep", "ahead"):
        out = tmp_path / schedule
        assert main([*argv, "--out", str(out), "--quiet", "--schedule", schedule]) == 0
        runs.append(out)
    return runs[0], runs[1]


@pytest.mark.parametrize("template", ["public_spring_tasting", "appointment_portrait"])
def test_a_full_window_episode_is_the_same_under_both_schedules(tmp_path, template):
    lockstep, ahead = run_both(tmp_path, ["run", template, "--arch", "ga_tdp", "--model",
                                          "scripted/town", "--embedder", "hashing"])
    assert_same_run(lockstep, ahead)


def test_answers_in_every_order_give_the_same_run(tmp_path):
    """Against an endpoint whose every answer takes a random time, the answers come back in
    another order each run; the files do not change."""
    with Loopback("town", latency_s=0.0, latency_max_s=0.02, seed=5) as server:
        argv = ["run", "inviting_jogging", "--arch", "ga", "--model", "openai/town",
                "--base-url", server.url, "--max-concurrency", "32", "--embedder", "hashing",
                "--background", "5", "--same-day", "--start", "06:00", "--no-cache"]
        lockstep, ahead = run_both(tmp_path, argv)
        again = tmp_path / "again"
        assert main([*argv, "--out", str(again), "--quiet", "--schedule", "ahead"]) == 0
    assert_same_run(lockstep, ahead)
    assert_same_run(lockstep, again)


# -- the rule ----------------------------------------------------------------------------------
class Slow(ScriptedBackend):
    """Answers after `latency_s`; says when the first answer is back."""

    def __init__(self):
        super().__init__(latency_s=0.4)
        self.answered = threading.Event()

    def complete(self, request):
        try:
            return super().complete(request)
        finally:
            self.answered.set()


def engine_on(backend=None, schedule: str | None = None) -> Engine:
    """An engine on `backend` (None: the scripted one; `schedule` None: the default)."""
    return Engine(llm=make_llm(LLMSettings(), backend=backend or ScriptedBackend()), seed=0,
                  start_time=datetime(2024, 2, 14, 9, 0), schedule=schedule)


def a_town(world: Path, places: dict, backend=None, schedule: str | None = None
           ) -> tuple[Engine, WorldState]:
    """An engine (`engine_on`) and the world in `world` with these residents placed (at a
    place or on a tile), in this order."""
    engine = engine_on(backend, schedule)
    town = WorldState(engine, World.load(world))
    engine.register(list(places))
    for name, place in places.items():
        town.place(name, place)
    return engine, town


def mini_town(backend, schedule: str | None, places: dict[str, str]
              ) -> tuple[Engine, WorldState]:
    """The mini town with these residents placed (`a_town`)."""
    return a_town(MINI_TOWN, places, backend, schedule)


def yvonne_comes_to_the_cafe(schedule: str, xavier) -> float:
    """Yvonne, at home, thinks (a slow call) and then walks to the cafe, where Xavier runs
    `xavier(engine, town, answered)` (`answered`: set once her answer is back). Where she
    could first be in the cafe."""
    backend = Slow()
    engine, town = mini_town(backend, schedule, {"Yvonne": "mini:Rose Cottage:bedroom",
                                                 "Xavier": "mini:Hobbs Cafe:cafe"})
    reach = town.earliest("Yvonne", 0.0, town.world.resolve("mini:Hobbs Cafe:cafe"))

    def yvonne():
        yield engine.ask(LLMRequest(messages=[Message(role="user", content="where to?")]))
        yield from town.walk("Yvonne", "mini:Hobbs Cafe:cafe")

    with engine.resident("Yvonne"):
        engine.process(yvonne())
    with engine.resident("Xavier"):
        engine.process(xavier(engine, town, backend.answered))
    engine.run()
    return reach


def walk_towards(schedule: str) -> tuple[list[tuple[float, list[str]]], int]:
    """Xavier looks around every 2 simulated seconds while Yvonne comes: what he saw when,
    and how many of his looks were taken before her answer was back."""
    seen, early = [], [0]

    def xavier(engine, town, answered):
        while engine.now < 60:
            yield engine.timeout(2)
            seen.append((engine.now, town.sharing_arena("Xavier")))
            early[0] += not answered.is_set()

    yvonne_comes_to_the_cafe(schedule, xavier)
    return seen, early[0]


def test_a_resident_walking_over_is_seen_as_in_lockstep_and_the_other_went_ahead_meanwhile():
    lockstep, waited = walk_towards("lockstep")
    ahead, went_on = walk_towards("ahead")
    assert ahead == lockstep  # not one look taken before Yvonne could be there
    arrived = next(t for t, who in lockstep if who == ["Yvonne"])
    assert 0 < arrived < 60 and all(who == [] for t, who in lockstep if t < arrived)
    assert waited == 0  # lockstep: nobody passes the instant of a call in flight
    # ahead: Xavier took the looks before Yvonne could reach the cafe while she thought
    assert went_on >= 1 and went_on * 2 < arrived


def keeping_to_himself(schedule: str, aside: bool) -> tuple[list, int, float]:
    """While Yvonne comes (about 45 s), Xavier takes a step every 2 s to 100 s, aside when
    `aside`, then looks around at 102 s. What he saw, how many of his steps were taken before
    her answer was back, and where she could first be."""
    seen, early = [], [0]

    def xavier(engine, town, answered):
        engine.aside(aside)
        while engine.now < 100:
            yield engine.timeout(2)
            early[0] += not answered.is_set()
        engine.aside(False)
        yield engine.timeout(2)
        seen.append((engine.now, town.sharing_arena("Xavier")))

    reach = yvonne_comes_to_the_cafe(schedule, xavier)
    return seen, early[0], reach


def test_steps_aside_go_on_past_whoever_could_come_and_the_step_after_them_does_not():
    lockstep, waited, reach = keeping_to_himself("lockstep", aside=True)
    ahead, went_on, _ = keeping_to_himself("ahead", aside=True)
    assert ahead == lockstep == [(102, ["Yvonne"])]  # his look after them saw her, as ever
    assert waited == 0
    assert went_on == 50 and reach < 60  # all of them, far past where she could be there
    # not aside: his steps wait once she could be in the cafe
    _, held, _ = keeping_to_himself("ahead", aside=False)
    assert held * 2 <= reach


def test_what_a_resident_aside_shows_is_what_it_showed_when_it_went_aside_also_restored():
    """Ann goes aside (a conversation) at depth 3 and says more lines (depth 7): Bo, looking
    at her meanwhile, waits on what she showed (3), and so does Bo in a run restored from a
    checkpoint taken then; once she shows again (its end), on what she is."""
    def engine():
        found = engine_on()
        found.register(["Ann", "Bo"])
        return found

    def bo_after_looking(at: Engine) -> int:
        with at.resident("Bo"):
            at.saw(["Ann"])
        return at.depths()["Bo"]

    first = engine()
    first.set_depths({"Ann": 3})
    with first.resident("Ann"):
        first.aside(True, quiet_for=15)
    first.set_depths({"Ann": 7})
    restored = engine()
    restored.set_depths(first.depths())
    restored.set_shown(first.shown())
    assert bo_after_looking(first) == bo_after_looking(restored) == 3
    with restored.resident("Ann"):
        restored.aside(False)
        restored.shows()
    assert bo_after_looking(restored) == 7


def test_a_rule_that_let_residents_run_as_they_like_would_be_caught(monkeypatch):
    """The test above fails when the rule is left out: Xavier runs to the end while Yvonne
    thinks, and never sees her arrive."""
    monkeypatch.setattr(WorldState, "meets", lambda self, resident, t, others: None)
    ahead, _ = walk_towards("ahead")
    lockstep, _ = walk_towards("lockstep")
    assert ahead != lockstep


# A corridor: a side room, a long hall, a short passage, one tile of study at the end.
CORRIDOR = """\
name: corridor
title: A corridor (tests)
tile_meters: 4.0
legend:
  "#": {blocked: wall}
  "s": {sector: House, arena: side room}
  "a": {sector: House, arena: hall}
  "b": {sector: House, arena: passage}
  "c": {sector: House, arena: study}
grid: |
  ##############
  #saaaaaaaabbc#
  ##############
"""


def wanda_in_the_passage(tmp_path: Path) -> tuple[Engine, WorldState, float]:
    """The corridor, Wanda at the hall's end and Rita in the side room: Wanda walks to the
    study (10 tiles) and the run stops when she is in the passage, a tile and a half from her
    arrival. The engine, the town and the seconds a tile takes."""
    (tmp_path / "corridor.yaml").write_text(CORRIDOR)
    engine, town = a_town(tmp_path / "corridor.yaml", {"Wanda": (2, 1), "Rita": (1, 1)})
    with engine.resident("Wanda"):
        engine.process(town.walk("Wanda", "corridor:House:study"))
    spt = town.world.seconds_per_tile(1.4)
    engine.run(until=9.5 * spt)
    return engine, town, spt


class Behind:
    """Those behind a step, as the engine hands them to `meets`: (name, time) in time order,
    and whom each holds."""

    def __init__(self, *entries: tuple[str, float], holds: dict | None = None):
        self.order = list(entries)
        self.holds = holds or {}

    def __len__(self) -> int:
        return len(self.order)

    def until(self, t: float) -> int:
        return sum(1 for _name, c in self.order if c <= t)

    def entries(self, start: int, stop: int):
        return iter(self.order[start:stop])

    def time_of(self, name: str) -> float | None:
        return dict(self.order).get(name)

    def earliest(self) -> float:
        return self.order[0][1]


@pytest.mark.parametrize("margin, meets", [(0.5, "Rita"), (-0.5, None)])
def test_a_walkers_arrival_waits_only_for_who_could_see_it_on_its_way(tmp_path, margin, meets):
    """Wanda walks the hall, the passage and into the study (10 tiles); Rita, in the side
    room a tile from the hall, is behind. Wanda's arrival ends her walk: from then on she
    stands in the study, also to anyone looking at an earlier moment. So it waits for Rita
    when Rita could step into the hall before Wanda left it (she would have seen her there),
    and not when she could only reach the hall after (she could not see her anywhere)."""
    engine, town, spt = wanda_in_the_passage(tmp_path)
    arrival, left_hall = 10 * spt, 8 * spt
    assert town.tile_at("Wanda", arrival) == (12, 1)
    # Rita, a tile from the hall, could be there `margin` tiles' walk before Wanda leaves it
    rita = left_hall - spt - margin * spt
    assert town.meets("Wanda", arrival, Behind(("Rita", rita))) == meets
    # Rita in the hall itself until it is left: seen, however far behind
    assert town.meets("Wanda", arrival, Behind(("Rita", 0.0))) == "Rita"


LAWN = """\
name: lawn
title: A long lawn and a kiosk at its end (tests)
tile_meters: 4.0
legend:
  "#": {blocked: wall}
  "l": {sector: Park, arena: lawn}
  "k": {sector: Park, arena: kiosk}
grid: |
  ##############
  #lllllllllllk#
  ##############
"""


def test_a_conversations_partner_is_read_where_it_stands_at_its_initiators_time(tmp_path):
    """Yara, at the lawn's west end, talks with Zed at its east end, by the kiosk: Zed waits
    on her (his queue is empty: behind nobody) and is free when she ends it, from where he
    stands. So a step in the kiosk waits on Yara as soon as Zed could be there, though she
    could not; and the engine keeps who holds whom from the event the partner waits on."""
    (tmp_path / "lawn.yaml").write_text(LAWN)
    engine, town = a_town(tmp_path / "lawn.yaml",
                          {"Xena": (12, 1), "Yara": (1, 1), "Zed": (11, 1)})
    spt = town.world.seconds_per_tile(1.4)
    t = 3 * spt  # Zed is a tile from the kiosk, Yara eleven
    assert town.meets("Xena", t, Behind(("Yara", 0.0))) is None
    assert town.meets("Xena", t, Behind(("Yara", 0.0), holds={"Yara": ["Zed"]})) == "Yara"
    with engine.resident("Yara"):
        done = engine.event_for("Zed", by="Yara")
    assert engine._holds == {"Yara": ["Zed"]}
    with engine.resident("Yara"):
        done.succeed()  # she ends it: he is let go
    assert engine._holds == {} and engine._held == {}


def test_a_move_the_rule_said_could_not_happen_is_told_not_passed_over(tmp_path):
    """The net under the rule: Wanda's arrival went on with nobody behind; were Rita, whom the
    rule did not count (one waiting out an action is behind nobody until someone starts a
    conversation with her), then to walk into the hall before Wanda left it, the engine is
    told, and the run's result says it may differ from lockstep."""
    engine, town, spt = wanda_in_the_passage(tmp_path)
    town.goes("Wanda", 10 * spt)
    assert engine.overtaken == []
    with engine.resident("Rita"):  # her clock still at 0
        engine.process(town.walk("Rita", "corridor:House:hall"))
    engine.run()
    assert len(engine.overtaken) == 1 and "Rita into corridor:House:hall" in engine.overtaken[0]
    from sandbox.runner import overtaken
    assert "--schedule lockstep" in overtaken(engine)[0]


class Uneven(ScriptedBackend):
    """Answers "slow" after 0.5 s and everything else at once."""

    def complete(self, request):
        if request.messages[0].content == "slow":
            time.sleep(0.5)
        return super().complete(request)


@pytest.mark.parametrize("schedule", ["ahead", "lockstep"])
def test_the_run_loop_sleeps_until_an_answer_it_can_use_is_back(monkeypatch, schedule):
    """Ann waits on two calls, one back at once and one after 0.5 s, and Bo on one slow call:
    the run loop sleeps until an answer comes instead of turning round and round (it once
    returned from its wait at once while one answer of two was in: a core spent spinning
    in a large town)."""
    engine, _town = mini_town(Uneven(), schedule, {"Ann": "mini:Rose Cottage:bedroom",
                                                   "Bo": "mini:Johnson Park:lawn"})
    got = {}

    def asker(name, contents):
        calls = [engine.ask(LLMRequest(messages=[Message(role="user", content=c)]))
                 for c in contents]
        yield engine.env.all_of(calls)
        got[name] = engine.now

    for name, contents in (("Ann", ["slow", "fast"]), ("Bo", ["slow"])):
        with engine.resident(name):
            engine.process(asker(name, contents))
    turns, advance = [0], Engine._advance

    def counted(self, *args):
        turns[0] += 1
        return advance(self, *args)

    monkeypatch.setattr(Engine, "_advance", counted)
    engine.run()
    assert got == {"Ann": 0.0, "Bo": 0.0}
    assert turns[0] <= 4  # send, (wake for each answer back), done


def test_ahead_keeps_more_calls_in_flight_than_lockstep_where_residents_cannot_meet():
    """Two residents far apart, each asking one call after another at its own moments: ahead
    sends both residents' calls together, lockstep one instant at a time."""
    def run(schedule):
        backend = ScriptedBackend(latency_s=0.05)
        engine, town = mini_town(backend, schedule, {"Ann": "mini:Rose Cottage:bedroom",
                                                     "Bo": "mini:Johnson Park:lawn"})

        def asker(offset):
            yield engine.timeout(offset)
            for _ in range(6):
                yield engine.ask(LLMRequest(messages=[Message(role="user", content="hm")]))
                yield engine.timeout(1)

        for name, offset in (("Ann", 0), ("Bo", 0.5)):
            with engine.resident(name):
                engine.process(asker(offset))
        engine.run()
        return engine.peak_in_flight

    assert run("lockstep") == 1 and run("ahead") == 2


# -- how close it came ---------------------------------------------------------------------------
def test_the_critical_path_counts_the_longest_chain_of_calls_waiting_on_each_other():
    """Ann asks three calls one after another; Bo, far off, asks two; then Ann walks over to
    Bo's lawn and looks around (she perceives him: what she asks next waits on his calls too)
    and asks once more: the longest chain is Ann's 3 + 1, not the 6 calls made."""
    engine, town = mini_town(ScriptedBackend(), None, {"Ann": "mini:Rose Cottage:bedroom",
                                                       "Bo": "mini:Johnson Park:lawn"})

    def ask():
        return engine.ask(LLMRequest(messages=[Message(role="user", content="hm")]))

    def ann():
        for _ in range(3):
            yield ask()
        yield from town.walk("Ann", "mini:Johnson Park:lawn")
        assert town.sharing_arena("Ann") == ["Bo"]
        yield ask()

    def bo():
        for _ in range(2):
            yield ask()
        yield engine.timeout(3600)

    for name, process in (("Ann", ann), ("Bo", bo)):
        with engine.resident(name):
            engine.process(process())
    engine.run()
    depths = [c.depth for c in engine.calls.records]
    assert len(depths) == 6 and max(depths) == 4


def test_sandbox_log_prints_the_critical_path_the_same_under_both_schedules(tmp_path, capsys):
    argv = ["run", "public_spring_tasting", "--arch", "ga_tdp", "--model", "scripted/town",
            "--embedder", "hashing", "--background", "3", "--same-day", "--start", "15:00"]
    lockstep, ahead = run_both(tmp_path, argv)
    lines = []
    for run in (lockstep, ahead):
        capsys.readouterr()
        assert main(["log", str(run)]) == 0
        lines.append(next(line for line in capsys.readouterr().out.splitlines()
                          if line.startswith("critical path:")))
    calls = len((ahead / "calls.jsonl").read_text().splitlines())
    bound = [line.split(";")[0] for line in lines]
    assert bound[0] == bound[1] and bound[0].endswith(f" of {calls} calls")
    assert "ran lockstep" in lines[0] and "ran ahead" in lines[1]
    assert int(bound[0].split()[2]) < calls


def generated_town_run(out: Path, schedule: str, url: str, residents: int, hours: float,
                       seed: int) -> Path:
    """A generated town (`sandbox world generate`'s) living `hours` through the endpoint."""
    from sandbox.runner import run_episode
    from tasks.scenarios import SCENARIOS
    from tasks.scenarios.town_day import TownChanges
    from worlds.generate import generate_town

    world = generate_town(residents).write(out.parent / f"town{residents}")
    scenario = SCENARIOS["town_day"](None, changes=TownChanges(
        world=str(world), first=residents, hours=hours, embedder="hashing"))
    settings = LLMSettings(model="openai/town", base_url=url, cache_mode="off",
                           max_concurrency=64)
    engine_schedule = os.environ.get("SANDBOX_SCHEDULE")
    os.environ["SANDBOX_SCHEDULE"] = schedule
    try:
        result = run_episode(scenario, make_llm(settings), seed=seed, out_dir=out)
    finally:
        if engine_schedule is None:
            os.environ.pop("SANDBOX_SCHEDULE")
        else:
            os.environ["SANDBOX_SCHEDULE"] = engine_schedule
    assert result.status == "completed"
    return out


@pytest.mark.parametrize("residents,seed", [(25, 0), (40, 3)])
def test_a_generated_town_is_the_same_under_both_schedules(tmp_path, residents, seed):
    """Homes along one road that every walk crosses: a walker seen on its way by a resident
    behind it (its arrival waits for them), answers in random order."""
    with Loopback("town", latency_s=0.0, latency_max_s=0.01, seed=seed) as server:
        runs = [generated_town_run(tmp_path / s, s, server.url, residents, 3, seed)
                for s in ("lockstep", "ahead")]
    assert_same_run(*runs)


def test_killed_ahead_and_rerun_from_its_checkpoint_is_the_uninterrupted_lockstep_run(tmp_path):
    """`kill -9` part way through a run that runs ahead, then `sandbox rerun RUN` (it goes on
    from the run's last checkpoint): the same run as one in lockstep that was never stopped,
    the calls answered from the cache aside."""
    import signal
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    with Loopback("town", latency_s=0.01, latency_max_s=0.03, seed=2) as server:
        argv = ["run", "public_spring_tasting", "--arch", "ga_tdp", "--model", "openai/town",
                "--base-url", server.url, "--embedder", "hashing", "--background", "5",
                "--same-day", "--start", "13:00", "--checkpoint-every", "20m", "--quiet"]
        whole = tmp_path / "whole"
        assert main([*argv, "--out", str(whole), "--schedule", "lockstep"]) == 0
        killed = tmp_path / "killed"
        child = subprocess.Popen([sys.executable, "-m", "sandbox.app.cli", *argv, "--out",
                                  str(killed), "--schedule", "ahead"], cwd=root,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while len(list((killed / "checkpoints").glob("*.json.gz"))) < 3:
            assert child.poll() is None and time.monotonic() < deadline, "no checkpoints"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert not (killed / "result.json").exists() or \
            json.loads((killed / "result.json").read_text())["status"] != "completed"
        assert main(["rerun", str(killed), "--schedule", "ahead"]) == 0
    for name in FILES:
        assert (whole / name).read_bytes() == (killed / name).read_bytes(), name

    def calls(run):
        lines = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
        return [{k: v for k, v in line.items() if k not in (*TIMING, "cached")}
                for line in lines]
    assert calls(whole) == calls(killed)
