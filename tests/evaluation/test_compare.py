"""`sandbox compare A B`: paired differences of two run sets of one benchmark. Run sets of a
known difference (scripted doubles of two strengths; hand-built STSS suites) must give its
sign and an interval covering it; a set against itself reshuffled gives p 1 and an interval
at 0; items one side lacks are named; the items-needed figure checks out by simulation."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from evaluation.compare import (
    Pair,
    compare_dirs,
    difference_interval,
    items_needed,
    paired_summary,
    seeds_needed,
    sign_flip_p,
    t_test_power,
)
from evaluation.kit import bootstrap_ci
from sandbox.app.cli import main
from tasks.stss.schema import TaskType
from tests.tasks.test_stss_board import fake_suite

PNG = b"\x89PNG\r\n\x1a\n"


# -- the statistics ---------------------------------------------------------------------------

def test_a_set_against_itself_gives_p_1_and_an_interval_at_0():
    pairs = [Pair(str(i), v, v) for i, v in enumerate([0.1, 0.5, 0.9, 0.3, 0.7, 0.2])]
    s = paired_summary(pairs, seed=3)
    assert s["difference"] == 0 and s["ci"] == [0.0, 0.0] and s["p"] == 1.0
    assert (s["wins"], s["ties"], s["losses"]) == (0, 6, 0)


def test_a_known_difference_is_found_with_its_sign_and_covered():
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, 30)
    noise = rng.normal(0, 0.1, 15)
    b = a - 0.2 + np.concatenate([noise, -noise])  # true difference -0.2 exactly
    pairs = [Pair(str(i), x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))]
    s = paired_summary(pairs, seed=0)
    assert s["difference"] == pytest.approx(-0.2)
    lo, hi = s["ci"]
    assert lo < -0.2 < hi < 0 and s["p"] < 0.001 and s["losses"] > s["wins"]
    assert paired_summary(pairs, seed=0) == s  # seeded: the same numbers every time


def test_the_sign_flip_p_is_exact_for_few_items():
    # 3 items all positive: of the 8 sign patterns, 2 (all +, all -) are as extreme
    assert sign_flip_p([1.0, 2.0, 3.0]) == pytest.approx(2 / 8)
    assert sign_flip_p([]) is None


def test_clusters_widen_and_types_hold_the_interval():
    # Six templates, three seeds each; seeds of a template agree: 6 units, not 18.
    pairs = [Pair(f"t{t}/s{s}", 0.0, t / 5, cluster=f"t{t}") for t in range(6) for s in range(3)]
    lo, hi = difference_interval(pairs, seed=2, resamples=500)
    naive = bootstrap_ci([p.diff for p in pairs], 2, 500)
    assert hi - lo > 1.4 * (naive[1] - naive[0])
    assert difference_interval(pairs[:12], seed=2) is None  # 4 templates: too few
    # Two types, each constant: kept per type, every resample has the table's mean.
    typed = [Pair(f"x{i}", 0.0, 1.0, "X") for i in range(5)] + \
        [Pair(f"y{i}", 0.0, 0.0, "Y") for i in range(5)]
    assert difference_interval(typed, stratified=True, seed=0) == (0.5, 0.5)
    lo, hi = difference_interval(typed, stratified=False, seed=0)
    assert lo < 0.4 and hi > 0.6


def test_items_needed_checks_out_by_simulation():
    """Draw experiments of the figure's size from the fitted distribution (normal, the
    observed mean and sd): the paired t-test detects the difference in 80% of them, within 3
    points (4000 experiments: a binomial sd of 0.6 points)."""
    # Here, not at the top: scipy.stats takes about a second to import, which every pytest
    # worker would pay collecting this file though only one runs this test.
    from scipy import stats

    rng = np.random.default_rng(7)
    spread = rng.normal(0, 1, 25)
    # an observed set of differences: mean 0.15, sd 0.4 exactly
    observed = 0.15 + 0.4 * (spread - spread.mean()) / spread.std(ddof=1)
    needed = seeds_needed([Pair(str(i), 0.0, d) for i, d in enumerate(observed)], effect=0.3)
    sd = 0.4
    assert needed["sd"] == pytest.approx(sd)
    for entry in (needed["observed"], needed["effect"]):
        n, effect = entry["items"], entry["difference"]
        assert 2 < n < 100  # (2.8 x 0.4 / 0.15)^2 = 56; (2.8 x 0.4 / 0.3)^2 = 14
        draws = rng.normal(effect, sd, size=(4000, n))
        detected = np.mean(stats.ttest_1samp(draws, 0.0, axis=1).pvalue < 0.05)
        assert 0.77 <= detected <= 0.86, (n, detected)
        assert t_test_power(n - 1, effect, sd) < 0.8 <= t_test_power(n, effect, sd)
    assert needed["effect"]["items"] < needed["observed"]["items"]  # a bigger effect: fewer
    assert items_needed(0.0, 1.0) is None and items_needed(0.5, 0.0) is None


def test_items_needed_is_the_exact_minimum_above_a_thousand():
    # 3,390 came out for a minimum of 3,362: above 1,000 it walked up in steps of n/100
    for effect, sd in ((0.1, 2.06), (0.05, 1.3), (0.02, 0.9)):
        n = items_needed(effect, sd)
        assert n > 1000
        assert t_test_power(n - 1, effect, sd) < 0.8 <= t_test_power(n, effect, sd)


def test_differences_without_spread_give_no_items_needed_and_say_why():
    needed = seeds_needed([Pair(str(i), 0.5, 0.6) for i in range(6)], effect=0.3)
    assert needed["observed"] is None and needed["effect"] is None
    assert "no spread" in needed["why"] and "cannot be estimated" in needed["why"]
    from evaluation.compare.report import _needed_lines

    lines = _needed_lines(needed, "item")
    assert len(lines) == 1 and "cannot be estimated" in lines[0] and ": 2" not in lines[0]


# -- hand-built STSS suites -------------------------------------------------------------------

PUB, APPO = TaskType.public_activity, TaskType.appointment


def _suites(tmp_path):
    """One suite, two architectures; tdp scores 0.2 more on every public activity episode
    and the same on appointments (true difference: 0.2 x 15/20 = 0.15)."""
    scores = {}
    for t in range(5):
        for s in range(3):
            base = (t + s) / 10
            scores[f"pub{t}/ga/s{s}"] = (PUB, base)
            scores[f"pub{t}/tdp/s{s}"] = (PUB, base + 0.2)
    for t in range(5):
        scores[f"appo{t}/ga/s0"] = (APPO, t / 5)
        scores[f"appo{t}/tdp/s0"] = (APPO, t / 5)
    del scores["appo4/tdp/s0"]
    return fake_suite(tmp_path / "suite", scores, model="scripted/town",
                      archs={"ga": "ga", "tdp": "ga_tdp"}, planned=["appo4/tdp/s0"])


def test_two_architectures_of_a_suite_by_template_and_seed(tmp_path):
    suite = _suites(tmp_path)
    report = compare_dirs(f"{suite}:ga", f"{suite}:ga_tdp", seed=0, resamples=400,
                          effect=0.1)
    data = report.data
    assert data["overall"]["n"] == 19 and data["unit"] == "template"
    assert data["overall"]["difference"] == pytest.approx(0.2 * 15 / 19)
    lo, hi = data["overall"]["ci"]
    assert lo <= 0.2 * 15 / 19 <= hi and lo > 0
    pub = data["by_type"][PUB.label]
    assert pub["difference"] == pytest.approx(0.2) and pub["wins"] == 15
    assert data["by_type"][APPO.label]["ties"] == 4
    # planned on B, never run: named, not dropped
    assert [f["item"] for f in data["a_only"]] == ["appo4/s0"]
    assert "appo4/s0" in report.markdown and "Items with a value on A only (1" in report.markdown
    assert data["seeds_needed"]["effect"]["per_cluster"] >= 1
    assert data["test_double"] == ["scripted/town"]
    assert "Test double" in report.markdown
    with pytest.raises(Exception, match="holds 2 archs"):
        compare_dirs(str(suite), f"{suite}:ga")


def test_stss_sets_run_under_other_conditions_are_refused_naming_each_field(tmp_path, capsys):
    # a full-window 12-resident suite against a sweep cell's 2-resident afternoon: once
    # "matched: 2 item(s)" and B - A, nothing said of the window or the town
    from sandbox.app.cli import main

    scores = {f"party{t}/ga/s{s}": (PUB, (t + s) / 10) for t in range(3) for s in range(2)}
    full = fake_suite(tmp_path / "suite", scores, model="scripted/town", background=12)
    cell = fake_suite(tmp_path / "exp" / "stss" / "town-ga", scores, model="scripted/town",
                      background=2, world="ville",
                      window={"same_day": True, "start": "15:00", "until": None})
    assert main(["compare", f"{full}:ga", str(cell)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ran their episodes under other conditions (" in err
    assert "town town (A) vs ville (B); residents (--background) 12 (A) vs 2 (B); same day " \
        "the default (A) vs on (B); window start the default (A) vs 15:00 (B))" in err
    assert "matched" not in err
    # run alike (another suite, one more episode): compared
    other = fake_suite(tmp_path / "other", {**scores, "extra/ga/s0": (PUB, 0.5)},
                       model="scripted/town", background=12)
    report = compare_dirs(str(full), str(other), seed=0, resamples=100)
    assert report.data["overall"]["n"] == 6


def test_the_one_sided_list_names_the_side_by_its_letter(tmp_path):
    # both sides called "scripted/town ga": "not in scripted/town ga's set" named neither
    scores = {f"party{t}/ga/s0": (PUB, t / 10) for t in range(3)}
    a = fake_suite(tmp_path / "a", scores, model="scripted/town")
    b = fake_suite(tmp_path / "b", {**scores, "extra/ga/s0": (PUB, 0.5)}, model="scripted/town")
    report = compare_dirs(str(a), str(b), seed=0, resamples=100)
    assert report.data["b_only"] == [{"item": "extra/s0",
                                      "why": f"not in A's set (scripted/town ga, {a})"}]


# -- scripted doubles of two strengths, through the command -----------------------------------

S = "scripted/simulbench"


@pytest.fixture
def simulbench_pair(tmp_path):
    from tests.evaluation.test_simulbench_board_accounting import TASKS, script

    rows = [script(i, TASKS[i % 2], "gpt-3.5-turbo.json", i % 4) for i in range(8)]
    for i, row in enumerate(rows):  # eight distinct scripts
        row["dialogue_history"][-1]["content"] += f" (variant {i})"
    scripts = tmp_path / "scripts.jsonl"
    scripts.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    for model in ("simulbench", "simulbench-weak"):
        assert main(["simulbench", "--scripts", str(scripts), "--simulator",
                     f"scripted/{model}", "--judge", S, "--out", str(tmp_path / model)]) == 0
    return tmp_path / "simulbench", tmp_path / "simulbench-weak"


def test_the_weak_double_loses_on_every_script(simulbench_pair, tmp_path, capsys):
    strong, weak = simulbench_pair
    capsys.readouterr()
    out = tmp_path / "c.json"
    assert main(["compare", str(strong), str(weak), "--json", str(out), "--plot",
                 str(tmp_path / "c.png"), "--effect", "0.5"]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    overall = data["overall"]
    truth = np.mean([i["difference"] for i in data["items"]])
    assert overall["n"] == 8 and overall["difference"] == pytest.approx(truth) and truth < 0
    assert overall["ci"][0] <= truth <= overall["ci"][1] < 0
    assert overall["losses"] == 8 and overall["p"] == pytest.approx(2 / 2 ** 8)
    assert "| All | 8 |" in printed and "the given --effect difference +0.500" in printed
    assert (tmp_path / "c.png").read_bytes()[:8] == PNG
    # again: the same JSON (seeded)
    assert main(["compare", str(strong), str(weak), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["overall"] == overall


def test_a_set_against_its_reshuffled_copy_and_a_missing_run(simulbench_pair, tmp_path,
                                                              capsys):
    strong, _ = simulbench_pair
    copy = tmp_path / "copy"
    shutil.copytree(strong, copy)
    manifest = json.loads((copy / "simulbench.json").read_text())
    manifest["selected"] = list(reversed(manifest["selected"]))  # another order, same items
    (copy / "simulbench.json").write_text(json.dumps(manifest))
    gone = sorted((copy / "runs").iterdir())[0]
    shutil.rmtree(gone)
    capsys.readouterr()
    out = tmp_path / "null.json"
    assert main(["compare", str(strong), str(copy), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["overall"]["p"] == 1.0 and data["overall"]["ci"] == [0.0, 0.0]
    assert data["overall"]["n"] == 7
    assert [f["item"] for f in data["a_only"]] == [gone.name]
    assert "missing" in data["a_only"][0]["why"]
    assert gone.name in capsys.readouterr().out


def test_run_sets_of_two_benchmarks_are_refused_in_one_line(simulbench_pair, tmp_path,
                                                            capsys):
    suite = _suites(tmp_path)
    assert main(["compare", f"{suite}:ga", str(simulbench_pair[0])]) == 2
    err = capsys.readouterr().err
    assert "compare two run sets of one benchmark" in err and len(err.splitlines()) == 1


def test_a_judge_neither_set_heard_is_refused_naming_those_present(simulbench_pair, capsys):
    """`--judge scripted/nope` once compared 0 items with exit 0, the judge never named."""
    strong, weak = simulbench_pair
    capsys.readouterr()
    assert main(["compare", str(strong), str(weak), "--judge", "scripted/nope"]) == 2
    [err] = capsys.readouterr().err.strip().splitlines()
    assert "--judge scripted/nope: no such judge" in err and S in err
    assert main(["compare", str(strong), str(weak), "--judge", S]) == 0
