"""Budget caps (--max-calls, --max-tokens): a run that reaches one stops cleanly with status
"budget", keeps what it wrote, and the same command with a higher cap finishes it exactly as an
uncapped run would have."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.budget import Budget, BudgetExhausted
from tasks.stss import TEMPLATES_DIR

EPISODE = ["public_spring_tasting", "--seed", "1", "--quiet", "--model", "scripted/town",
           "--embedder", "hashing", "--background", "2", "--same-day", "--start", "15:00"]


def result(run_dir):
    return json.loads((run_dir / "result.json").read_text(encoding="utf-8"))


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uncapped episode, run once for the module (the tests only read it)."""
    where = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(where)
        assert main(["run", *EPISODE, "--out", str(where / "reference")]) == 0
    return where / "reference"


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_max_calls_stops_an_episode_cleanly_and_a_higher_cap_finishes_it(tmp_path, reference,
                                                                         capsys):
    out = tmp_path / "capped"
    assert main(["run", *EPISODE, "--out", str(out), "--max-calls", "20"]) == 1
    assert "stopped: the episode's budget of 20 calls is spent" in capsys.readouterr().err
    stopped = result(out)
    assert stopped["status"] == "budget" and stopped["llm_calls"] == 20
    assert len(lines(out / "calls.jsonl")) == 20 and len(lines(out / "llm_cache.jsonl")) == 20
    kept = lines(out / "events.jsonl")
    assert kept == lines(reference / "events.jsonl")[:len(kept)]  # what ran is what would have
    assert not (out / "score.json").exists()  # a stopped episode is not scored

    assert main(["run", *EPISODE, "--out", str(out), "--overwrite", "--max-calls", "1000"]) == 0
    assert result(out)["status"] == "completed"
    assert (out / "events.jsonl").read_bytes() == (reference / "events.jsonl").read_bytes()
    calls = [json.loads(line) for line in lines(out / "calls.jsonl")]
    assert sum(c["cached"] for c in calls) == 20  # the answers given before came from the cache


def test_max_tokens_stops_at_the_same_point_every_time(tmp_path, reference):
    ends = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["run", *EPISODE, "--out", str(out), "--max-tokens", "5000"]) == 1
        stopped = result(out)
        assert stopped["status"] == "budget" and "5000 tokens" in stopped["error"]
        calls = [json.loads(line) for line in lines(out / "calls.jsonl")]
        spent = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
        last = calls[-1]["prompt_tokens"] + calls[-1]["completion_tokens"]
        assert spent - last < 5000  # the cap was not reached before the last batch
        ends.append((out / "events.jsonl").read_bytes())
    assert ends[0] == ends[1]


SUITE = ["stss", "--templates", str(TEMPLATES_DIR / "public_spring_tasting.yaml"), "--arch",
         "ga", "--seeds", "0..2", "--model", "scripted/town", "--embedder", "hashing",
         "--background", "2", "--same-day",
         "--start", "15:00"]


def suite_outputs(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.name in ("events.jsonl", "score.json", "table.json")}


@pytest.fixture(scope="module")
def suite_uncapped(tmp_path_factory):
    """The uncapped suite, run once for the module: its --out and what it wrote."""
    where = tmp_path_factory.mktemp("suite")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(where)
        assert main([*SUITE, "--out", str(where / "suite")]) == 0
    return where / "suite", suite_outputs(where / "suite")


@pytest.fixture
def suite_reference(tmp_path, suite_uncapped):
    """An empty --out for the suite, and what the uncapped suite would write there: the
    module's run's files, its directory's name in them (score.json names its run) made this
    one's."""
    ran, written = suite_uncapped
    out = tmp_path / "suite"
    out.mkdir()
    return out, {name: data.replace(str(ran).encode(), str(out).encode())
                 for name, data in written.items()}


def test_a_suite_budget_stops_the_suite_and_a_rerun_completes_it(suite_reference, capsys):
    out, reference = suite_reference
    assert main([*SUITE, "--out", str(out), "--max-calls", "70"]) == 1
    printed = capsys.readouterr().out
    assert "the suite's budget is spent" in printed
    runs = out / "public_spring_tasting" / "ga"
    assert result(runs / "s0")["status"] == "completed"
    assert result(runs / "s1")["status"] == "budget"
    assert not (runs / "s2").exists()  # never started
    md = (out / "table.md").read_text()  # every planned episode accounted for
    assert "Scored 1 of 3 planned episode(s); 2 without a score" in md
    assert "s1: stopped by a budget: " in md and "s2: not run: the suite's budget" in md
    assert main([*SUITE, "--out", str(out)]) == 0
    assert suite_outputs(out) == reference


def test_the_reference_rules_score_a_stopped_episode_with_a_warning(suite_reference, capsys):
    out, _ = suite_reference
    assert main([*SUITE, "--out", str(out), "--max-calls", "70", "--rules", "both"]) == 1
    md = (out / "table.md").read_text()
    ours, reference = md.split("Rules: the STSS authors' public scorer")
    assert "Scored 1 of 3 planned episode(s); 2 without a score" in ours
    # The reference scores incomplete runs: the stopped one is in its table, with a warning.
    assert "Scored 2 of 3 planned episode(s); 1 without a score" in reference
    assert "**Incomplete**" in reference and "**Incomplete**" not in ours
    run = out / "public_spring_tasting" / "ga" / "s1"
    assert not (run / "score.json").exists()
    assert "incomplete run (budget): scored anyway, as the reference scores it" in \
        json.loads((run / "score.reference.json").read_text())["warnings"]


def test_an_episode_budget_stops_each_episode_and_the_suite_goes_on(suite_reference, capsys):
    out, _ = suite_reference
    assert main([*SUITE, "--out", str(out), "--episode-max-calls", "10"]) == 1
    printed = capsys.readouterr().err  # why each episode stopped: where scripts look
    assert printed.count("stopped:") == 3 and "budget of 10 calls" in printed
    for seed in (0, 1, 2):
        assert result(out / "public_spring_tasting" / "ga" / f"s{seed}")["status"] == "budget"


@pytest.mark.parametrize("option", ["--max-calls", "--max-tokens"])
def test_a_cap_of_zero_is_refused_before_anything_runs(tmp_path, option, capsys):
    assert main(["run", *EPISODE, "--out", str(tmp_path / "run"), option, "0"]) == 2
    err = capsys.readouterr().err
    assert "out of range; give a whole number from 1" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_batch_that_would_pass_the_cap_is_not_sent():
    budget = Budget(max_calls=5)
    budget.reserve(3)
    with pytest.raises(BudgetExhausted, match="3 made, 3 more asked"):
        budget.reserve(3)
    assert budget.calls == 3 and budget.stopped
