"""Every role on its own model and endpoint: the STSS protocol's evaluated and background
models, a PingPong player and judge on two endpoints, the models file and its errors."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.llm.loopback import Loopback
from tasks.routing import PAPER_PURPOSES

PERFORMER = "Maya Lindqvist"  # public_spring_tasting's
EPISODE = ["public_spring_tasting", "--background", "2", "--same-day", "--start", "15:00",
           "--seed", "1", "--embedder", "hashing", "--quiet"]


def models_file(tmp_path: Path, **aliases: dict) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump(aliases))
    return path


def calls(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]


def test_paper_routing_sends_the_evaluated_endpoint_only_the_performers_routed_calls(
        tmp_path, capsys):
    with Loopback("town") as evaluated, Loopback("town") as background:
        models = models_file(tmp_path, under_test={"model": "openai/town",
                                                   "base_url": evaluated.url},
                             town={"model": "openai/town", "base_url": background.url})
        out = tmp_path / "run"
        argv = ["run", *EPISODE, "--models", str(models), "--model", "under_test",
                "--background-model", "town", "--out", str(out)]
        assert main(argv) == 0
        got_evaluated, got_background = evaluated.calls(), background.calls()
    # The evaluated model answered the performer's TDP, daily plan and lines, and nothing else.
    assert got_evaluated and {agent for _, agent in got_evaluated} == {PERFORMER}
    assert {tag for tag, _ in got_evaluated} <= PAPER_PURPOSES
    assert {"tdp.general_plan", "plan.daily"} <= {tag for tag, _ in got_evaluated}
    # Every background resident's call, and the performer's other calls, went to the town's.
    assert not [c for c in got_background if c[1] == PERFORMER and c[0] in PAPER_PURPOSES]
    assert {agent for _, agent in got_background} > {PERFORMER}
    assert ("plan.hourly", PERFORMER) in got_background
    # calls.jsonl says who answered each call, as each endpoint saw it.
    recorded = calls(out)
    assert sorted((c["tag"], c["agent"]) for c in recorded if c["role"] == "evaluated") == \
        sorted(got_evaluated)
    assert {c["endpoint"] for c in recorded} == {"under_test", "town"}
    header = json.loads((out / "header.json").read_text())
    assert header["models"][PERFORMER] == "openai/town"
    roles = header["config"]["roles"]
    assert roles["performer_routing"] == "paper" and roles["evaluated"]["endpoint"] == \
        "under_test" and roles["background"]["endpoint"] == "town"
    # The answers of the two endpoints are cached apart, each under its alias.
    cached = [json.loads(line) for line in (out / "llm_cache.jsonl").read_text().splitlines()]
    assert {c["model"] for c in cached} == {"openai/town@under_test", "openai/town@town"}
    log = capsys.readouterr().out  # sandbox log
    assert "evaluated: under_test (openai/town)" in log
    # The header says what each role resolved to and how the performer's purposes split, and
    # `sandbox log` reads it: the performer is not listed under the evaluated model alone.
    assert roles["evaluated"]["name"] == "under_test (openai/town)"
    assert roles["background"]["name"] == "town (openai/town)"
    assert roles["evaluated"]["base_url"] == evaluated.url
    split = roles["purposes"][PERFORMER]
    assert split == {"evaluated": sorted(PAPER_PURPOSES), "background": "every other purpose"}
    mine = [c for c in recorded if c["agent"] == PERFORMER]
    routed = sum(1 for c in mine if c["role"] == "evaluated")
    said = " ".join(log.split())  # the console wraps long lines
    assert (f"{PERFORMER}=evaluated: under_test (openai/town) for "
            f"{', '.join(sorted(PAPER_PURPOSES))} ({routed} calls) and background: town "
            f"(openai/town) for every other purpose ({len(mine) - routed} calls)") in said
    # A rerun from the cache alone (no endpoint running) makes the same log.
    events = (out / "events.jsonl").read_bytes()
    assert main([*argv, "--cache-only", "--overwrite"]) == 0
    assert (out / "events.jsonl").read_bytes() == events


def test_all_routing_sends_every_performer_call_to_the_evaluated_endpoint(tmp_path):
    with Loopback("town") as evaluated, Loopback("town") as background:
        models = models_file(tmp_path, a={"model": "openai/town", "base_url": evaluated.url},
                             b={"model": "openai/town", "base_url": background.url})
        assert main(["run", *EPISODE, "--models", str(models), "--model", "a",
                     "--background-model", "b", "--performer-routing", "all",
                     "--out", str(tmp_path / "run")]) == 0
        assert {agent for _, agent in evaluated.calls()} == {PERFORMER}
        assert PERFORMER not in {agent for _, agent in background.calls()}
        assert "plan.hourly" in {tag for tag, _ in evaluated.calls()}


def test_a_background_model_equal_to_the_model_runs_exactly_as_one_model(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    base = ["run", *EPISODE, "--model", "scripted/town"]
    assert main([*base, "--out", str(one)]) == 0
    assert main([*base, "--background-model", "scripted/town", "--out", str(two)]) == 0
    assert (one / "events.jsonl").read_bytes() == (two / "events.jsonl").read_bytes()
    cached = [sorted((run / "llm_cache.jsonl").read_text().splitlines()) for run in (one, two)]
    assert cached[0] == cached[1]  # the same answers under the same keys (written as they come)
    scores = [json.loads((run / "score.json").read_text()) for run in (one, two)]
    assert [{**s, "run": ""} for s in scores][0] == {**scores[1], "run": ""}
    header = json.loads((two / "header.json").read_text())
    assert "roles" not in header["config"]
    assert all("role" not in c for c in calls(two))


def test_the_scripted_stss_table_with_the_same_background_model_is_byte_identical(tmp_path):
    suite = ["stss", "--templates", "public_spring_tasting,help_light_bulbs", "--seeds", "0",
             "--model", "scripted/town", "--embedder", "hashing", "--background", "2",
             "--same-day", "--start", "15:00"]
    assert main([*suite, "--out", str(tmp_path / "a")]) == 0
    assert main([*suite, "--background-model", "scripted/town",
                 "--out", str(tmp_path / "b")]) == 0
    for name in ("table.json", "table.md"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_tables_and_boards_name_the_evaluated_model_and_keep_backgrounds_apart(tmp_path,
                                                                               capsys):
    suite = ["stss", "--templates", "public_spring_tasting", "--seeds", "0", "--arch", "ga",
             "--model", "scripted/town", "--embedder", "hashing", "--background", "2",
             "--same-day", "--start", "15:00"]
    assert main([*suite, "--out", str(tmp_path / "one")]) == 0
    assert main([*suite, "--background-model", "scripted/default",
                 "--out", str(tmp_path / "two")]) == 0
    table = (tmp_path / "two" / "table.md").read_text()
    assert "| scripted/town | ga |" in table
    assert "Background model (every other resident and the performer's other calls): " \
        "scripted/default." in table
    [row] = json.loads((tmp_path / "two" / "table.json").read_text())["rows"]
    assert row["model"] == "scripted/town" and row["background_model"] == "scripted/default"
    capsys.readouterr()
    assert main(["stss-board", str(tmp_path / "one"), str(tmp_path / "two"), "--json",
                 str(tmp_path / "board.json")]) == 0
    board = capsys.readouterr().out
    assert "| scripted/town (background the same) | ga |" in board
    assert "| scripted/town (background scripted/default) | ga |" in board
    rows = json.loads((tmp_path / "board.json").read_text())["rows"]
    assert [r["overall"]["n"] for r in rows] == [1, 1]  # never pooled


def test_a_pingpong_player_and_its_judge_answer_from_two_endpoints(tmp_path, capsys):
    with Loopback("pingpong") as player, Loopback("pingpong") as judge:
        models = models_file(tmp_path, local={"model": "openai/pingpong",
                                              "base_url": player.url},
                             hosted={"model": "openai/pingpong", "base_url": judge.url})
        out = tmp_path / "pp"
        argv = ["pingpong", "--models", str(models), "--player", "local", "--interrogator",
                "local", "--judge", "hosted", "--every", "32", "--out", str(out)]
        assert main(argv) == 0
        assert player.calls() and judge.calls()
        assert not [tag for tag, _ in player.calls() if "judge" in tag]
        assert all("judge" in tag for tag, _ in judge.calls())
    for run in (out / "runs").iterdir():
        by_role = {(c["role"], c["endpoint"]) for c in calls(run)}
        assert by_role == {("player", "local"), ("interrogator", "local"), ("judge", "hosted")}
        # the header says what each role resolved to, and `sandbox log` names it so
        roles = json.loads((run / "header.json").read_text())["config"]["roles"]
        assert roles["player"] == {"model": "openai/pingpong", "endpoint": "local",
                                   "name": "local (openai/pingpong)", "base_url": player.url}
        capsys.readouterr()
        assert main(["log", str(run)]) == 0
        said = " ".join(capsys.readouterr().out.split())
        assert "models: player=local (openai/pingpong); interrogator=local (openai/pingpong)" \
            in said


def test_a_judge_named_by_an_alias_is_named_so_everywhere_and_two_aliases_are_two_judges(
        tmp_path, capsys):
    with Loopback("pingpong") as player, Loopback("pingpong") as judges:
        # One model id behind two aliases: two judges, each with its own judgments.
        models = models_file(tmp_path, a={"model": "openai/smol", "base_url": player.url},
                             b={"model": "openai/smolB", "base_url": judges.url},
                             c={"model": "openai/smolB", "base_url": judges.url})
        out = tmp_path / "pp"
        assert main(["pingpong", "--models", str(models), "--player", "a", "--interrogator",
                     "b", "--judge", "b", "--judge", "c", "--every", "32",
                     "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["pingpong-board", str(out)]) == 0
    board = capsys.readouterr().out
    runs = list((out / "runs").iterdir())
    assert "unjudged judgment" not in board and f"judgments: {2 * len(runs)} usable" in board
    assert "| a (openai/smol) |" in board
    assert "by b (openai/smolB), c (openai/smolB)" in board
    for run in runs:
        assert {p.name for p in (run / "judgments").iterdir()} == {
            "pingpong__b_openai_smolB.json", "pingpong__c_openai_smolB.json"}


def test_a_judge_typed_as_its_alias_then_as_its_model_id_is_one_judge(tmp_path, capsys):
    with Loopback("pingpong") as player, Loopback("pingpong") as judge:
        models = models_file(tmp_path, a={"model": "openai/smol", "base_url": player.url},
                             grader={"model": "openai/smolB", "base_url": judge.url})
        out = tmp_path / "pp"
        common = ["pingpong", "--models", str(models), "--player", "a", "--interrogator", "a",
                  "--every", "32", "--out", str(out)]
        assert main([*common, "--judge", "grader"]) == 0
        asked = len(judge.calls())
        capsys.readouterr()
        # The same model on the same endpoint, typed as its model id: its judgments are found.
        assert main([*common, "--judge", "openai/smolB", "--base-url", judge.url]) == 0
        said = capsys.readouterr()
        assert len(judge.calls()) == asked  # nothing asked again
    assert "judgments made 0 (0 fell back), skipped 3" in said.out
    assert "judge openai/smolB: the same model at the same endpoint as grader " \
        "(grader (openai/smolB))" in said.err
    assert json.loads((out / "pingpong.json").read_text())["judges"] == ["grader"]
    assert main(["pingpong-board", str(out)]) == 0
    board = capsys.readouterr().out
    assert "by grader (openai/smolB)." in board and "unjudged judgment" not in board
    for run in (out / "runs").iterdir():
        assert {p.name for p in (run / "judgments").iterdir()} == {
            "pingpong__grader_openai_smolB.json"}


@pytest.mark.parametrize(("entry", "said"), [
    ({"model": "openai/x", "api_key": "sk-secret-value-1234"}, "keys come from the environment"),
    ({"model": "openai/x", "key_env": "sk-secret-value-1234"}, "not a key"),
    ({"model": "openai/x", "base_url": "http://u:sk-secret-value-1234@h/v1"}, "credential"),
    ({"model": "gpt-4o"}, "backend/model"),
    ({"model": "openai/x", "max_concurrency": 0}, "max_concurrency"),
])
def test_a_bad_models_file_is_one_line_naming_the_alias_and_never_echoes_a_key(
        tmp_path, capsys, entry, said):
    models = models_file(tmp_path, gpt=entry)
    assert main(["run", *EPISODE, "--models", str(models), "--model", "gpt",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert str(models) in err and "gpt" in err and said in err
    assert "sk-secret-value-1234" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()  # nothing ran


def test_an_unknown_alias_names_the_nearest(tmp_path, capsys):
    models = models_file(tmp_path, gpt={"model": "openai/gpt-4o-mini"})
    assert main(["run", *EPISODE, "--models", str(models), "--model", "scripted/town",
                 "--background-model", "gtp", "--out", str(tmp_path / "run")]) == 2
    assert "unknown model 'gtp': did you mean gpt?" in capsys.readouterr().err


def test_a_key_variable_named_and_unset_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MY_HOSTED_KEY", raising=False)
    models = models_file(tmp_path, hosted={"model": "openai/gpt-4o-mini",
                                           "key_env": "MY_HOSTED_KEY"})
    assert main(["run", *EPISODE, "--models", str(models), "--model", "scripted/town",
                 "--background-model", "hosted", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "background model (hosted)" in err and "$MY_HOSTED_KEY is not set" in err


def test_a_models_file_error_gives_the_line_of_the_field(tmp_path, capsys):
    models = tmp_path / "models.yaml"
    models.write_text("ok:\n  model: openai/x\nbad:\n  model: openai/y\n"
                      "  base_url: http://h/v1\n  max_concurrency: 0\n")
    assert main(["list", "models", "--models", str(models)]) == 2
    assert "bad.max_concurrency (line 6)" in capsys.readouterr().err


def test_a_judges_key_variable_unset_names_the_role_and_the_alias(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.delenv("MY_JUDGE_KEY", raising=False)
    models = models_file(tmp_path, grader={"model": "openai/gpt-4o-mini",
                                           "key_env": "MY_JUDGE_KEY"})
    assert main(["pingpong", "--models", str(models), "--player", "scripted/pingpong",
                 "--interrogator", "scripted/pingpong", "--judge", "grader", "--every", "64",
                 "--out", str(tmp_path / "pp")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the judge model (grader)" in err[0]
    assert "grader (openai/gpt-4o-mini)" in err[0] and "$MY_JUDGE_KEY is not set" in err[0]


def test_the_key_comes_from_the_named_variable_and_is_written_nowhere(tmp_path, monkeypatch):
    key = "sk-sentinel-roles-0123456789"
    monkeypatch.setenv("SANDBOX_TEST_KEY", key)
    with Loopback("town", echo_auth=True) as server:
        models = models_file(tmp_path, hosted={"model": "openai/town", "base_url": server.url,
                                               "key_env": "SANDBOX_TEST_KEY"})
        out = tmp_path / "run"
        assert main(["run", *EPISODE, "--models", str(models), "--model", "hosted",
                     "--background-model", "scripted/town", "--out", str(out)]) == 0
    for path in out.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


def test_list_models_shows_the_aliases_and_no_key(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SANDBOX_MODELS", str(models_file(
        tmp_path, gpt={"model": "openai/gpt-4o-mini", "key_env": "OPENAI_API_KEY",
                       "price_in": 0.15, "price_out": 0.6})))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-printed-0123456789")
    assert main(["list", "models"]) == 0
    out = capsys.readouterr().out
    assert "| gpt | alias" in out and "key from $OPENAI_API_KEY" in out
    assert "$0.15 / $0.6 per M tokens" in out and "sk-never" not in out


def test_the_default_models_file_is_read_from_the_config_directory(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.delenv("SANDBOX_MODELS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "social-sandbox").mkdir()
    models_file(tmp_path / "social-sandbox", town={"model": "scripted/town"})
    assert main(["run", *EPISODE, "--model", "town", "--out", str(tmp_path / "run")]) == 0
    assert os.path.exists(tmp_path / "run" / "score.json")


def test_a_429_holds_back_its_own_endpoint_and_no_other():
    import time

    from sandbox.llm import LLMRequest, Message, TransientLLMError
    from sandbox.llm.openai_compat import OpenAIBackend

    request = LLMRequest(messages=[Message(role="user", content="hi")], tag="chat.turn")
    with Loopback("default", fault_rate=1.0, faults=("429_retry_after",),
                  retry_after_s=5) as limited, Loopback("default") as free:
        busy = OpenAIBackend("default", base_url=limited.url)
        other = OpenAIBackend("default", base_url=free.url)
        with pytest.raises(TransientLLMError) as raised:
            busy.complete(request)
        assert raised.value.kind == "rate_limit" and raised.value.retry_after_s == 5
        # every later call to that endpoint waits out the Retry-After; the other's do not
        assert busy._cool_until > time.monotonic() + 4
        assert other._cool_until == 0.0
        assert other.complete(request).text


def test_a_dead_endpoint_of_one_role_makes_the_run_unavailable_naming_the_role(tmp_path,
                                                                               capsys):
    with Loopback("town") as evaluated, Loopback("town", refuse_chat=401) as dead:
        models = models_file(tmp_path, a={"model": "openai/town", "base_url": evaluated.url},
                             b={"model": "openai/town", "base_url": dead.url})
        out = tmp_path / "run"
        argv = ["run", *EPISODE, "--models", str(models), "--model", "a",
                "--background-model", "b", "--out", str(out)]
        assert main(argv) == 1
        result = json.loads((out / "result.json").read_text())
        assert result["status"] == "unavailable"
        # Who failed: the role, the alias and model, the endpoint, the first call lost, and
        # what to do; on stderr too.
        error = result["error"]
        assert f"the background role: b (openai/town) at {dead.url}" in error
        assert re.search(r"(\d+) of \1 calls \(rejected_401 \d+\), from call \d+ \(", error)
        assert "the evaluated role" not in error and "check or restart that endpoint" in error
        said = capsys.readouterr().err
        assert "unavailable: " in said and "then run the same command with --overwrite" in said
        assert not (out / "score.json").exists()  # canned answers are not scored
        dead.refuse_chat = None  # the endpoint is back: the same command goes on
        assert main([*argv, "--overwrite"]) == 0
    assert json.loads((out / "result.json").read_text())["status"] == "completed"


def test_a_sweeps_models_axis_is_the_evaluated_model_over_a_fixed_background(tmp_path,
                                                                            capsys):
    sweep = tmp_path / "experiment.yaml"
    sweep.write_text(yaml.safe_dump({
        "out": str(tmp_path / "exp"),
        "models": {"town": "scripted/town", "plain": "scripted/default"},
        "architectures": ["ga"], "seeds": [0],
        "benchmarks": {"stss": {"flags": {
            "templates": "public_spring_tasting", "embedder": "hashing", "background": 2,
            "same-day": True, "start": "15:00", "background-model": "scripted/town"}}}}))
    assert main(["sweep", str(sweep)]) == 0
    for cell, model in (("town-ga", "scripted/town"), ("plain-ga", "scripted/default")):
        [run] = (tmp_path / "exp" / "stss" / cell).glob("*/*/s0")
        header = json.loads((run / "header.json").read_text())
        assert header["models"][PERFORMER] == model
        assert {m for a, m in header["models"].items() if a != PERFORMER} == {"scripted/town"}


def test_an_endpoint_dying_mid_run_leaves_it_unfinished_and_the_same_command_goes_on(
        tmp_path, capsys):
    out = tmp_path / "run"
    with Loopback("town") as server:
        argv = ["run", *EPISODE, "--model", "openai/town", "--base-url", server.url,
                "--out", str(out)]
        assert main(argv) == 0  # a whole run, every answer in its cache
        # the same run again, the endpoint refusing from the 10th call it gets on
        server.refuse_chat = 401
        lines = (out / "llm_cache.jsonl").read_text().splitlines()
        (out / "llm_cache.jsonl").write_text("\n".join(lines[:10]) + "\n")
        assert main([*argv, "--overwrite"]) == 1
        result = json.loads((out / "result.json").read_text())
        assert result["status"] == "unavailable" and result["unavailable_calls"] > 0
        assert "LLM calls never reached a model" in result["error"]
        assert 10 < result["llm_calls"] and result["sim_time_s"] > 0  # ran on, canned
        assert "unavailable:" in capsys.readouterr().err
        server.refuse_chat = None
        assert main([*argv, "--overwrite"]) == 0  # goes on: the cached ten are not asked again
    assert json.loads((out / "result.json").read_text())["status"] == "completed"


def test_boards_and_compare_pool_by_the_model_and_endpoint_resolved_never_the_name_typed(
        tmp_path, capsys):
    """Alias A and A's model id typed on A's endpoint are one configuration (one row, one
    directory's later run); the same model id on another endpoint is another (its own row, a
    refused merge); an alias that now names another endpoint is refused in its old directory."""
    S = "scripted/pingpong"
    with Loopback("pingpong") as here, Loopback("pingpong") as there:
        models = models_file(tmp_path, A={"model": "openai/pingpong", "base_url": here.url},
                             A2={"model": "openai/pingpong", "base_url": there.url})
        common = ["pingpong", "--interrogator", S, "--judge", S, "--every", "32",
                  "--label", "L", "--models", str(models)]
        by_alias, typed, elsewhere = (tmp_path / d for d in ("alias", "typed", "elsewhere"))
        assert main([*common, "--player", "A", "--out", str(by_alias)]) == 0
        assert main([*common, "--player", "openai/pingpong", "--base-url", here.url,
                     "--seed", "1", "--out", str(typed)]) == 0
        assert main([*common, "--player", "A2", "--seed", "2", "--out", str(elsewhere)]) == 0
        # The alias's own directory takes its model id typed on its endpoint...
        assert main([*common, "--player", "openai/pingpong", "--base-url", here.url,
                     "--out", str(by_alias)]) == 0
        # ...and refuses the alias once it names another endpoint.
        (tmp_path / "moved").mkdir()
        moved = models_file(tmp_path / "moved", A={"model": "openai/pingpong",
                                                   "base_url": there.url})
        capsys.readouterr()
        assert main(["pingpong", "--interrogator", S, "--judge", S, "--every", "32",
                     "--label", "L", "--models", str(moved), "--player", "A",
                     "--out", str(by_alias)]) == 2
        assert f"openai/pingpong at {there.url}" in capsys.readouterr().err
    manifest = json.loads((by_alias / "pingpong.json").read_text())
    assert manifest["resolved"]["player"] == {"model": "openai/pingpong", "alias": "A",
                                              "base_url": here.url}
    assert "resolved" not in manifest["resolved"]  # the scripted roles are themselves
    capsys.readouterr()
    assert main(["pingpong-board", str(by_alias), str(typed), str(elsewhere)]) == 0
    board = capsys.readouterr().out
    # alias and typed pooled (3 + 3 pairs), the other endpoint apart, named by it
    assert f"| L (player openai/pingpong at {here.url}) |" in board
    assert f"| L (player openai/pingpong at {there.url}) |" in board
    assert "L: 2 configurations under one label (they differ in player)" in board
    assert f"L (player openai/pingpong at {here.url}): 6 selected: 6 finished" in board
    # compare (a sweep's seeds): one configuration's seeds merge; another endpoint's do not.
    from evaluation.compare import compare_sets
    from evaluation.kit import BoardError

    assert compare_sets([str(by_alias), str(typed)], [str(elsewhere)]).data
    with pytest.raises(BoardError, match="played or judged by other models") as refused:
        compare_sets([str(by_alias), str(elsewhere)], [str(typed)])
    assert there.url in str(refused.value)


def test_compare_takes_a_judge_as_its_run_typed_it(tmp_path, capsys):
    with Loopback("pingpong") as judge:
        models = models_file(tmp_path, B={"model": "openai/pingpong", "base_url": judge.url})
        argv = ["pingpong", "--player", "scripted/pingpong", "--interrogator",
                "scripted/pingpong", "--judge", "B", "--every", "32", "--models", str(models)]
        assert main([*argv, "--out", str(tmp_path / "a")]) == 0
        assert main([*argv, "--player-temperature", "0.1", "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--judge", "B"]) == 0
    assert "matched: " in capsys.readouterr().out


def test_export_names_each_role_as_the_boards_do(tmp_path, capsys):
    import csv

    with Loopback("pingpong") as player, Loopback("pingpong") as judge:
        models = models_file(tmp_path, a={"model": "openai/smol", "base_url": player.url},
                             grader={"model": "openai/smolB", "base_url": judge.url})
        out = tmp_path / "pp"
        assert main(["pingpong", "--models", str(models), "--player", "a", "--interrogator",
                     "grader", "--judge", "grader", "--every", "32", "--out", str(out)]) == 0
    assert main(["export", str(out), "--out", str(tmp_path / "units.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "units.csv").open()))
    assert rows and {row["model"] for row in rows} == {"a (openai/smol)"}
    assert all(json.loads(row["roles"]) == {"player": "a (openai/smol)",
                                            "interrogator": "grader (openai/smolB)"}
               for row in rows)
    assert all(json.loads(row["judges"]).keys() == {"grader (openai/smolB)"} for row in rows)
