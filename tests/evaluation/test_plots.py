"""A board's plot says how many items each score is over and how its intervals were made."""

from __future__ import annotations

from evaluation.kit import Plot, PlotPoint, plot_png
from evaluation.pingpong import board_plot, build_board
from sandbox.app.cli import main


def test_the_pingpong_plot_gives_n_and_the_interval_method(tmp_path, capsys):
    out = tmp_path / "pp"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "16",
                 "--out", str(out)]) == 0
    board = build_board([out], seed=3, resamples=200)
    plot = board_plot(board)
    assert [p.n for p in plot.points] == [board.rows[0].scored] and plot.points[0].n > 0
    assert plot.interval == ("bars: 95% bootstrap interval over conversations (seed 3, 200 "
                             "resamples)")


def test_a_plot_draws_with_n_and_without_any_interval(tmp_path):
    plot = Plot("t", "x", [PlotPoint("a", 1.0, (0.5, 1.5), n=4), PlotPoint("b", None)])
    assert plot_png(plot, tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    bare = Plot("t", "x", [PlotPoint("a", 1.0)])
    assert plot_png(bare, tmp_path / "b.png").is_file()


def test_the_simulbench_plot_shows_every_subset_the_readme_names_with_its_n():
    from evaluation.simulbench import board_plot as simulbench_plot

    row = {"label": "m", "subsets": {
        "all": {"mean": 5.0, "n": 4, "ci": [4.0, 6.0]}, "hard": {"mean": 4.0, "n": 2, "ci": None},
        "lastonly": {"mean": 6.0, "n": 2, "ci": [5.0, 7.0]},
        "firstchan": {"mean": None, "n": 0, "ci": None}}}
    plot = simulbench_plot({"rows": [row], "seed": 2})
    assert [(p.label, p.n) for p in plot.points] == [("m: All", 4), ("m: Hard", 2),
                                                      ("m: LastOnly", 2)]
    assert "seed 2" in plot.interval
