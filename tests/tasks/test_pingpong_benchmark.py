"""The PingPong benchmark end to end on scripted models: 2 characters x 2 situations, two
judges, resuming, re-judging, and the numbers on the board."""

from __future__ import annotations

import json
import re
import shutil
from statistics import mean

import pytest

from agents.roleplay import INTERROGATOR_TAG, PLAYER_TAG, parse_user_line
from evaluation.pingpong import JUDGE_TAG, build_board, read_conversation
from evaluation.pingpong.scripted import judge as scripted_judge
from sandbox.app.cli import main as cli
from sandbox.app.suites.benchmark import (
    BenchmarkMismatch,
    Configuration,
    ModelPool,
    run_benchmark,
)
from sandbox.events import Utterance
from sandbox.judgments import load_judgments
from sandbox.llm import SCRIPTS, LLMSettings, ScriptedBackend
from sandbox.log import load_run
from tasks.pingpong import (
    INTERROGATOR_SAMPLING,
    PLAYER_SAMPLING,
    Character,
    RoleplaySet,
    Situation,
    pair_items,
)
from tasks.pingpong.plugin import PINGPONG

CODE_SITUATION = "Ask them to write some code for you."
ROLEPLAY = RoleplaySet(
    characters=[
        Character(char_name="Makise", system_prompt="A sharp young neuroscientist, sarcastic.",
                  summary="A young scientist."),
        Character(char_name="Bob", system_prompt="A calm plumber who loves jazz.",
                  summary="A plumber."),
    ],
    situations=[Situation(text="Chat about the weather.", num_turns=2),
                Situation(text=CODE_SITUATION, num_turns=3)])


def interrogator(request):
    goal = re.search(r"goal for the whole chat: (.*)", request.messages[0].content).group(1)
    asked = sum(m.role == "assistant" for m in request.messages)
    topic = "code" if "code" in goal else "weather"
    return f"User: About {topic}, question {asked + 1}?"  # the label is dropped by the parser


def player(request):
    if "code" in request.messages[-1].content:
        return "I cannot continue this role-play."
    return "*smiles* " + request.messages[-1].content.replace("?", ", well, I think so.")


@pytest.fixture
def models(monkeypatch):
    """Registers recording scripted models; returns the requests each one received."""
    calls: dict[str, list] = {}

    def register(name, responders):
        calls[name] = []

        def wrap(fn):
            def answer(request):
                calls[name].append(request)
                return fn(request)
            return answer
        backend = ScriptedBackend({tag: wrap(fn) for tag, fn in responders.items()},
                                  model_id=f"scripted/{name}")
        monkeypatch.setitem(SCRIPTS, name, lambda: backend)

    register("pp-player", {PLAYER_TAG: player})
    register("pp-interrogator", {INTERROGATOR_TAG: interrogator})
    register("pp-judge-a", {JUDGE_TAG: scripted_judge()})
    register("pp-judge-b", {JUDGE_TAG: scripted_judge(strict=True)})
    register("pp-judge-c", {JUDGE_TAG: scripted_judge()})
    register("pp-judge-bad", {JUDGE_TAG: lambda request: "Sure! scores: great {"})
    return calls


def bench(out, judges, roleplay=ROLEPLAY, player_sampling=PLAYER_SAMPLING, rejudge=False,
          on_progress=None, **kw):
    config = Configuration(models={"player": "scripted/pp-player",
                                   "interrogator": "scripted/pp-interrogator"},
                           sampling={"player": player_sampling,
                                     "interrogator": INTERROGATOR_SAMPLING},
                           judges=[f"scripted/{j}" for j in judges], **kw)
    return run_benchmark(PINGPONG, out, pair_items(roleplay), ModelPool(LLMSettings()), config,
                         rejudge=rejudge, on_progress=on_progress)


def test_every_pair_is_a_standard_run_with_the_interrogator_first(tmp_path, models):
    report = bench(tmp_path, ["pp-judge-a", "pp-judge-b"])
    assert (report.items, report.runs_made, report.judged.made) == (4, 4, 8)
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 4
    for run_dir in runs:
        run = load_run(run_dir)
        assert run.result.status == "completed" and not run.problems
        said = [e for e in run.events if isinstance(e, Utterance)]
        turns = run.header.config["situation"]["num_turns"]
        assert len(said) == 2 * turns
        assert [e.agent for e in said] == ["Interrogator", run.header.config["player_agent"]] \
            * turns
        assert said[0].text.startswith("About ")  # the "User:" label the model wrote is gone
        assert run.header.models == {"player": "scripted/pp-player",
                                     "interrogator": "scripted/pp-interrogator"}
        assert {j.model for j in load_judgments(run_dir)} == {"scripted/pp-judge-a",
                                                              "scripted/pp-judge-b"}
        assert all(len(j.turns) == turns for j in load_judgments(run_dir))
        # each verdict is keyed by the player utterance it is about
        player_turns = [e.turn for e in said if e.agent == run.header.config["player_agent"]]
        assert all([t.turn for t in j.turns] == player_turns for j in load_judgments(run_dir))
        assert cli(["log", str(run_dir)]) == 0


def test_each_role_sees_only_what_it_should_with_its_own_sampling(tmp_path, models):
    bench(tmp_path, ["pp-judge-a"])
    for request in models["pp-player"]:
        prompt = " ".join(m.content for m in request.messages)
        assert "weather." not in prompt and CODE_SITUATION not in prompt  # no situation
        assert (request.temperature, request.top_p) == (0.6, 0.9)
    for request in models["pp-interrogator"]:
        prompt = " ".join(m.content for m in request.messages)
        assert "neuroscientist" not in prompt and "plumber who loves jazz" not in prompt
        assert "A young scientist." in prompt or "A plumber." in prompt  # the summary only
        assert (request.temperature, request.top_p) == (0.8, 0.95)
    for request in models["pp-judge-a"]:
        assert (request.temperature, request.top_p) == (0.1, 0.95)
        assert request.json_schema()["properties"]["turns"]["minItems"] in (2, 3)


def test_sampling_is_overridable_per_role(tmp_path, models):
    from tasks.kit import Sampling

    bench(tmp_path, ["pp-judge-a"], every=4,
          player_sampling=Sampling(temperature=1.1, top_p=0.5, max_tokens=99))
    assert {(r.temperature, r.top_p, r.max_tokens) for r in models["pp-player"]} == \
        {(1.1, 0.5, 99)}


def test_the_board_matches_the_saved_judgments_by_hand(tmp_path, models):
    bench(tmp_path, ["pp-judge-a", "pp-judge-b"])
    per_conversation, refused, lengths = [], 0, []
    for run_dir in sorted((tmp_path / "runs").iterdir()):
        lengths += [len(r) for r in read_conversation(run_dir).replies]
        judged = load_judgments(run_dir)
        if any(t.flags["is_refusal"] for j in judged for t in j.turns):
            refused += 1
        kept = [j for j in judged if not any(t.flags["is_refusal"] for t in j.turns)]
        if kept:
            per_conversation.append(mean(
                mean(mean(t.scores[c] for t in j.turns)
                     for c in ("in_character", "entertaining", "fluency")) for j in kept))
    assert refused == 2  # both players refuse when asked for code
    [row] = build_board([tmp_path]).rows
    assert row.refusal_ratio == pytest.approx(0.5)
    assert row.scored == 2 and row.conversations == 4
    assert row.aggregate == pytest.approx(mean(per_conversation))
    assert row.score == pytest.approx(row.aggregate)  # one player: no length penalty
    assert row.mean_length == pytest.approx(mean(lengths))
    assert row.ci is None  # 2 conversations scored: too few for an interval


def test_resuming_skips_finished_pairs_and_a_new_judge_calls_no_player(tmp_path, models):
    bench(tmp_path, ["pp-judge-a", "pp-judge-b"])
    before = {name: len(requests) for name, requests in models.items()}
    again = bench(tmp_path, ["pp-judge-a", "pp-judge-b"])
    assert (again.runs_made, again.runs_skipped) == (0, 4)
    assert (again.judged.made, again.judged.skipped) == (0, 8)
    assert {name: len(r) for name, r in models.items()} == before

    more = bench(tmp_path, ["pp-judge-a", "pp-judge-c"])
    assert more.judged.made == 4 and more.runs_made == 0
    assert len(models["pp-player"]) == before["pp-player"]
    assert len(models["pp-interrogator"]) == before["pp-interrogator"]
    assert len(models["pp-judge-c"]) == 4
    manifest = json.loads((tmp_path / "pingpong.json").read_text())
    assert manifest["judges"] == ["scripted/pp-judge-a", "scripted/pp-judge-b",
                                  "scripted/pp-judge-c"]

    redo = bench(tmp_path, ["pp-judge-a"], rejudge=True)
    assert redo.judged.made == 4 and len(models["pp-player"]) == before["pp-player"]


def test_other_characters_in_the_same_directory_are_refused(tmp_path, models):
    bench(tmp_path, ["pp-judge-a"], every=2)
    recast = ROLEPLAY.model_copy(update={"characters": [
        ROLEPLAY.characters[0].model_copy(update={"system_prompt": "A gruff old sailor."}),
        ROLEPLAY.characters[1]]})
    with pytest.raises(BenchmarkMismatch, match="settings"):
        bench(tmp_path, ["pp-judge-a"], roleplay=recast, every=2)
    grown = bench(tmp_path, ["pp-judge-a"])  # another --every is the same configuration, grown
    assert grown.runs_made == 2 and grown.runs_skipped == 2


def test_the_board_counts_only_the_pairs_its_manifest_selects(tmp_path, models):
    bench(tmp_path / "all", ["pp-judge-a"])
    bench(tmp_path / "half", ["pp-judge-a"], every=2)
    manifest = json.loads((tmp_path / "half" / "pingpong.json").read_text())
    assert len(manifest["selected"]) == 2
    for run_dir in (tmp_path / "all" / "runs").iterdir():  # left by an earlier configuration
        if run_dir.name not in manifest["selected"]:
            shutil.copytree(run_dir, tmp_path / "half" / "runs" / run_dir.name)
    board = build_board([tmp_path / "half"])
    assert board.rows[0].conversations == 2
    assert any("2 run directories not selected by its pingpong.json left out" in w
               for w in board.warnings)


def test_a_conversation_cut_off_is_run_again_and_its_old_judgments_go(tmp_path, models):
    bench(tmp_path, ["pp-judge-a"])
    cut = sorted((tmp_path / "runs").iterdir())[0]
    (cut / "result.json").unlink()  # as if killed before the end
    report = bench(tmp_path, ["pp-judge-a"])
    assert (report.runs_made, report.judged.made) == (1, 1)
    assert load_run(cut).result.status == "completed"


def test_a_judge_with_no_usable_answer_is_counted_not_fatal(tmp_path, models):
    report = bench(tmp_path, ["pp-judge-a", "pp-judge-bad"])
    assert report.judged.fallbacks == 4
    statuses = {j.model: j.status for j in load_judgments(sorted((tmp_path / "runs").iterdir())[0])}
    assert statuses == {"scripted/pp-judge-a": "ok", "scripted/pp-judge-bad": "fallback"}
    [row] = build_board([tmp_path]).rows
    alone = build_board([tmp_path], judges=["scripted/pp-judge-a"]).rows[0]
    assert row.judge_fallbacks == 4 and alone.judge_fallbacks == 0
    assert row.aggregate == pytest.approx(alone.aggregate)  # the fallback never enters a mean


@pytest.mark.parametrize("answer, line", [
    ("User: Hi there! How are you?", "Hi there! How are you?"),
    ('"*waves* Hello."\n\nCharacter: Hello back.', "*waves* Hello."),
    ("x" * 600, "x" * 500),
    ("Short one. " + "y" * 600, "Short one."),
])
def test_the_interrogator_line_is_cleaned(answer, line):
    assert parse_user_line(answer).utterance == line


@pytest.mark.parametrize("answer", ["", "   \n\n ", "<what the user says next>", "You:"])
def test_an_unusable_interrogator_line_is_refused_so_it_is_asked_again(answer):
    with pytest.raises(ValueError):
        parse_user_line(answer)
