"""`sandbox NAME --dry-run` of a single-room benchmark: the items the run would make (finished
ones skipped), their calls and tokens per role at the rate of the directory's finished items;
nothing written. Checked against the run it foretells."""

from __future__ import annotations

import json
import re

import pytest

from sandbox.app.cli import main

ROLES = ["--model", "scripted/refutebench", "--refuter", "scripted/refutebench", "--judge",
         "scripted/refutebench"]


def test_a_dry_run_foretells_the_calls_of_each_role(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["refutebench", *ROLES, "--every", "9", "--out", str(out)]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in (out / "runs").iterdir())
    assert main(["refutebench", *ROLES, "--every", "3", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "Dry run: 18 dialogue(s) to run, 9 finished and skipped; nothing was written." \
        in printed
    estimated = {m.group(1): int(m.group(2)) for m in
                 re.finditer(r"\| (model|refuter|judge) \| scripted/refutebench \| (\d+) \|",
                             printed)}
    assert sorted(p.name for p in (out / "runs").iterdir()) == before  # nothing run
    board = tmp_path / "b.json"
    assert main(["refutebench", *ROLES, "--every", "3", "--out", str(out)]) == 0
    assert main(["refutebench-board", str(out), "--json", str(board)]) == 0
    usage = next(iter(json.loads(board.read_text())["usage"].values()))
    # the scripted double makes the same calls for every dialogue: the estimate is exact
    for role, calls in estimated.items():
        assert calls == usage[role]["calls"] * 2 // 3, role


def rows(printed: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r"\| (\w+) \| scripted/\w+ \| (\d+) \|[^\n]*rates\.json", printed)}


@pytest.mark.parametrize("name, argv, noun", [
    ("refutebench", ROLES, "dialogues"),
    ("refutebench", [*ROLES, "--setting", "persistent"], "dialogues"),
    ("pingpong", ["--player", "scripted/pingpong", "--interrogator", "scripted/pingpong",
                  "--judge", "scripted/pingpong"], "conversations"),
])
def test_a_fresh_directory_is_estimated_from_the_kept_rates(name, argv, noun, tmp_path,
                                                            capsys):
    """Before its first item is finished, a directory's dry run has the rates kept with the
    benchmark for its options (bench/kit_rates.py, on the scripted models), said as such, and
    they foretell the run's calls per role; before, every role was 0 calls, 'no rate'."""
    out = tmp_path / "new"
    assert main([name, *argv, "--every", "4", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not out.exists() and "The kept rates were measured on scripted/" in printed
    estimated = rows(printed)
    assert estimated and all(calls > 0 for calls in estimated.values())
    board = tmp_path / "b.json"
    assert main([name, *argv, "--every", "4", "--out", str(out)]) == 0
    assert main([f"{name}-board", str(out), "--json", str(board)]) == 0
    usage = next(iter(json.loads(board.read_text())["usage"].values()))
    for role, calls in estimated.items():
        assert 0.75 <= calls / usage[role]["calls"] <= 1.33, (role, calls, usage[role])


def test_options_no_rate_was_kept_for_are_said(tmp_path, capsys):
    assert main(["refutebench", *ROLES, "--tasks", "mt", "--every", "9", "--out",
                 str(tmp_path / "new"), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "0 finished" in printed and "no rate kept for these options" in printed
    assert "| model |" not in printed and not (tmp_path / "new").exists()


def test_the_language_level_estimates_each_architecture_before_it_runs(tmp_path, capsys):
    """`sandbox stss-lang --dry-run`: per --arch, the conversations it would run and their
    calls per role (performer, partner, judge) from the rates kept with the benchmark, which
    the run then makes; before, stss-lang had no dry run at all."""
    argv = ["stss-lang", "--model", "scripted/stss-lang", "--judge", "scripted/stss-lang",
            "--every", "8", "--out", str(tmp_path / "lang")]
    assert main([*argv, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not (tmp_path / "lang").exists()
    sections = dict(zip(["ga", "ga_tdp"], printed.split("ga_tdp\n"), strict=True))
    estimated = {arch: {m.group(1): int(m.group(2)) for m in re.finditer(
        r"\| (performer|partner|judge) \| scripted/stss-lang \| (\d+) \|", text)}
        for arch, text in sections.items()}
    assert all(set(e) == {"performer", "partner", "judge"} for e in estimated.values())
    assert estimated["ga_tdp"]["performer"] > estimated["ga"]["performer"]  # TDP's plans
    board = tmp_path / "t3.json"
    assert main([*argv, "--json", str(board)]) == 0
    ran = capsys.readouterr().out  # each architecture's run closes with its estimate
    assert ran.count("Estimate vs actual for the 17 scenario(s) this run ran") == 2, ran
    usage = json.loads(board.read_text())["usage"]
    for arch, roles in estimated.items():
        for role, calls in roles.items():
            made = usage[f"scripted/stss-lang {arch}"][role]["calls"]
            assert 0.75 <= calls / made <= 1.33, (arch, role, calls, made)


def test_each_judge_is_a_row_of_its_own_named_priced_and_timed_by_its_alias(tmp_path,
                                                                           capsys):
    """Two judges are two rows (never "A, B" on one row at one judge's calls), each model named
    "alias (model id)", priced from its models-file entry and timed at its latency_s; a model
    with no latency_s leaves the wall time unknown, said, never "0 s"."""
    models = tmp_path / "models.yaml"
    models.write_text("A: {model: openai/a, base_url: 'http://127.0.0.1:9/v1', price_in: 2.0, "
                      "price_out: 4.0, latency_s: 0.5}\n"
                      "B: {model: openai/b, base_url: 'http://127.0.0.1:9/v1', price_in: 1.0, "
                      "price_out: 1.0}\n")
    argv = ["pingpong", "--models", str(models), "--player", "A", "--interrogator", "A",
            "--judge", "A", "--judge", "B", "--every", "8", "--out", str(tmp_path / "pp"),
            "--dry-run"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    found = {(m["role"], m["model"]): m for m in re.finditer(
        r"\| (?P<role>\w+) \| (?P<model>[^|]+) \| (?P<calls>\d+) \| (?P<tin>\d+) \| "
        r"(?P<tout>\d+) \| (?P<money>[^|]+) \|", printed)}
    assert set(found) == {("player", "A (openai/a)"), ("interrogator", "A (openai/a)"),
                          ("judge", "A (openai/a)"), ("judge", "B (openai/b)")}
    a, b = found["judge", "A (openai/a)"], found["judge", "B (openai/b)"]
    assert a["calls"] == b["calls"] and int(a["calls"]) > 0  # each judge judges every pair
    for row, (p_in, p_out) in ((a, (2.0, 4.0)), (b, (1.0, 1.0))):
        dollars = (int(row["tin"]) * p_in + int(row["tout"]) * p_out) / 1e6
        assert row["money"].strip() == f"${dollars:.4f}" if dollars < 0.01 else f"${dollars:.2f}"
    assert "Wall time: not known for B (openai/b)" in printed and "0 s" not in printed
    # With B timed too, the wall time is each model's calls at its latency.
    models.write_text(models.read_text().replace("price_out: 1.0}", "price_out: 1.0, "
                                                 "latency_s: 2.0}"))
    assert main(argv) == 0
    printed = capsys.readouterr().out
    calls_a = sum(int(m["calls"]) for k, m in found.items() if k[1] == "A (openai/a)")
    seconds = calls_a * 0.5 + int(b["calls"]) * 2.0
    assert re.search(rf"Wall time: about {seconds:.0f} s|Wall time: about "
                     rf"{round(seconds / 60)} min", printed), printed


def test_a_kit_run_closes_with_the_estimate_beside_what_its_items_spent(tmp_path, capsys):
    S = "scripted/pingpong"
    argv = ["pingpong", "--player", S, "--interrogator", S, "--judge", S, "--judge",
            "scripted/pingpong-strict", "--out", str(tmp_path / "pp")]
    assert main([*argv, "--every", "16"]) == 0
    printed = capsys.readouterr().out
    assert "Estimate vs actual for the 5 pair(s) this run ran" in printed
    assert "| judge | scripted/pingpong-strict |" in printed  # a row per judge
    assert main([*argv, "--every", "8"]) == 0  # 3 more, at the rate of the 5 finished
    printed = capsys.readouterr().out
    assert "Estimate vs actual for the 3 pair(s) this run ran" in printed
    rows = re.findall(r"\| (\w+) \| (scripted/[\w-]+) \| (\d+) \| (\d+) \| ([\d.]+) \|[^\n]*"
                      r"5 finished conversations here", printed)
    assert {(r[0], r[1]) for r in rows} == {("player", S), ("interrogator", S), ("judge", S),
                                            ("judge", "scripted/pingpong-strict")}
    # a judge asks once a pair: its calls are foretold exactly; the dialogues' within a quarter
    assert all(r[2] == r[3] for r in rows if r[0] == "judge"), rows
    assert all(0.75 <= float(r[4]) <= 1.33 for r in rows), rows


@pytest.mark.parametrize("damage", ["{not json", '["a list"]', '{"rates": {"x": {"r": 1}}}',
                                    '{"rates": {"x": {"r": {"hours": -1}}}}'])
def test_a_damaged_kept_rates_file_is_one_line_not_a_traceback(damage, tmp_path):
    """The rates kept with a benchmark (its rates.json) damaged: the dry run's estimate says
    which file and how to mend it, in one line (a UserError: exit 2), never a traceback."""
    from dataclasses import replace

    from sandbox.app.suites.estimate import kept_rates
    from sandbox.errors import UserError
    from tasks.pingpong.plugin import PINGPONG

    kept = tmp_path / "rates.json"
    kept.write_text(damage)
    with pytest.raises(UserError) as said:
        kept_rates(replace(PINGPONG, rates=kept), {"language": "en"})
    assert str(kept) in str(said.value) and "\n" not in str(said.value)
    assert "bench script" in str(said.value)
