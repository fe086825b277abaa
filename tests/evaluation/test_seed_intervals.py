"""A board row pooling a sweep's cells of one configuration (a cell per seed) draws each item
with all its seeds in its interval: 2 seeds of the same 5 items are 5 items' worth of evidence,
not 10 (evaluation/README.md, "Intervals"). Each kit board's interval is held against the
clustered one (`kit.cluster_interval`), and shown wider than the bootstrap that took each
seed's run as an independent unit (what the boards drew before)."""

from __future__ import annotations

import json

import pytest

from evaluation.kit import by_item, cluster_interval, interval, item_interval
from sandbox.app.cli import main
from tests.evaluation.test_simulbench_board_accounting import TASKS, script


def width(ci) -> float:
    return ci[1] - ci[0]


def test_a_script_run_under_two_seeds_is_one_unit_of_the_boards_interval(tmp_path, capsys):
    tasks = tmp_path / "simulbench_tasks.jsonl"
    tasks.write_text("\n".join(json.dumps(t) for t in TASKS) + "\n")
    scripts = tmp_path / "simulbench_all.jsonl"
    scripts.write_text("\n".join(json.dumps(r) for r in [
        script(0, TASKS[0], "gpt-3.5-turbo.json", 2), script(1, TASKS[0], "gpt-3.5-turbo.json", 3),
        script(2, TASKS[1], "gpt-3.5-turbo-1.json", 1),
        script(3, TASKS[0], "gpt-3.5-turbo-1.json", 0),
        script(4, TASKS[1], "gpt-3.5-turbo.json", 0)]) + "\n")
    cells = [tmp_path / f"sb-s{seed}" for seed in (0, 1)]  # a sweep's two cells of one config
    for seed, out in enumerate(cells):
        assert main(["simulbench", "--scripts", str(scripts), "--tasks", str(tasks),
                     "--simulator", "scripted/simulbench", "--judge", "scripted/simulbench",
                     "--seed", str(seed), "--out", str(out)]) == 0
    board = tmp_path / "board.json"
    assert main(["simulbench-board", *map(str, cells), "--json", str(board)]) == 0
    export = tmp_path / "units.jsonl"
    assert main(["export", *map(str, cells), "--out", str(export)]) == 0
    capsys.readouterr()
    rows = json.loads(board.read_text())["rows"]
    assert len(rows) == 1  # one configuration, its seeds pooled
    shown = rows[0]["subsets"]["all"]
    units = [json.loads(line) for line in export.read_text().splitlines()]
    assert shown["n"] == len(units) == 10
    per_script = by_item((u["item"], u["value"]) for u in units)
    assert len(per_script) == 5 and all(len(values) == 2 for values in per_script)
    clustered = cluster_interval(per_script)
    assert shown["ci"] == pytest.approx(list(clustered))
    assert width(shown["ci"]) >= width(clustered)
    # The seeds of a script agree here, and the scripts differ: ten "independent" values
    # would have drawn a bracket narrower than the five scripts allow.
    assert width(interval([u["value"] for u in units])) < width(clustered)


def test_a_pair_under_two_seeds_is_one_unit_of_the_pingpong_interval():
    from evaluation.pingpong.aggregate import ConversationScore, PlayerData, player_score

    finals = [1.0, 2.0, 3.0, 4.0, 5.0]
    conversations = [ConversationScore(pair=f"pair{i}", judges_used=1, final=final,
                                       criteria={"in_character": final, "entertaining": final,
                                                 "fluency": final})
                     for _ in range(2) for i, final in enumerate(finals)]
    row = player_score(PlayerData("p", conversations, [10]), factor=1.0)
    clustered = cluster_interval([[f, f] for f in finals])
    assert row.ci == pytest.approx(clustered)
    assert width(interval(finals * 2)) < width(row.ci)


def test_a_scenario_under_two_seeds_is_one_unit_of_the_language_levels_micro_interval():
    from evaluation.stss_lang.aggregate import Judged, by_scenario, cell, groups

    judged = [Judged(item=f"sc{i}", task=f"task{i % 2}", task_type="public",
                     scores={"conversation": {"sr": float(i % 2), "gcsr": i / 4}})
              for _ in range(2) for i in range(5)]
    got = cell(groups(judged, "conversation", "gcsr"),
               scenarios=by_scenario(judged, "conversation", "gcsr"))
    assert got.conversations == 10
    clustered = cluster_interval([[i / 4] * 2 for i in range(5)])
    assert got.micro_ci == pytest.approx(clustered)
    assert width(interval([i / 4 for i in range(5)] * 2)) < width(got.micro_ci)


def test_a_refutebench_item_under_two_seeds_is_one_unit_and_its_deltas_pair_each_seed():
    from evaluation.refutebench.metrics import Scored, tables

    rows = [Scored(seed=f"seed{i}", family="mt", setting="transient", c=0, item=f"item{i}",
                   run_seed=run, ratings={"revision_1": 1.0 + i, "revision_2": 1.0 + i,
                                          "revision_3": 1.0 + i, "kept_3": 1.0 + run})
            for run in (0, 1) for i in range(5)]
    cells = tables(rows, ["mt"]).cells["mt"]
    overall = cells["overall"]
    clustered = cluster_interval([[1.0 + i] * 2 for i in range(5)])
    assert (overall.lo, overall.hi) == pytest.approx(clustered) and overall.n == 10
    assert width(interval([1.0 + i for i in range(5)] * 2)) < overall.hi - overall.lo
    # Turn1 - Turn3 over both run seeds: 3.0 - 1.5, not one run seed's pair in place of the
    # other's (3.0 - 2.0 when the second overwrote the first)
    turn = cells["turn_delta"]
    assert turn.mean == pytest.approx(1.5) and turn.n == 10
    assert turn.lo <= 1.5 <= turn.hi


def test_with_one_seed_the_interval_is_the_plain_bootstrap_draw_for_draw():
    values = [0.2, 0.9, 0.4, 0.4, 0.7, 0.1]
    assert item_interval([[v] for v in values], seed=3) == interval(values, seed=3)
    assert item_interval([[v] for v in values[:4]]) is None  # 4 items: no interval
    assert item_interval([[v, v] for v in values[:4]]) is None  # nor 4 items' 8 runs
