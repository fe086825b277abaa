"""The board's PNG: the score axis spans the score's whole scale, so one configuration at 1.00 on
a 1-5 rating is not drawn on an axis zoomed to 0.96-1.04."""

from __future__ import annotations

from evaluation.kit.board import Plot, PlotPoint, plot_png, x_range


def test_the_axis_spans_the_scale_with_a_single_point():
    lo, hi = x_range(Plot("t", "rating (1-5)", [PlotPoint("m", 1.0)], scale=(1, 5)))
    assert lo < 1.0 and hi > 5.0 and hi - lo < 4.5


def test_the_axis_widens_to_a_point_or_interval_outside_the_scale():
    lo, hi = x_range(Plot("t", "score", [PlotPoint("m", 5.4, (4.9, 5.8))], scale=(1, 5)))
    assert lo < 1.0 and hi > 5.8


def test_a_plot_with_a_scale_and_no_scored_point_is_drawn(tmp_path):
    png = plot_png(Plot("t", "rating", [PlotPoint("m", None)], scale=(1, 10)), tmp_path / "b.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_compare_plot_with_long_model_names_keeps_its_title_and_axis_inside(tmp_path,
                                                                               monkeypatch):
    """Centred over the axes, a title naming two long model ids once ran past the figure's
    edges (and the axis label past its right edge): both cut in the PNG."""
    import matplotlib.pyplot as plt

    figures = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: (figures.append(fig), close(fig)))
    a = "together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo"
    b = "openrouter/mistralai/Mixtral-8x22B-Instruct-v0.1"
    plot = Plot(title=f"pingpong: B - A, per item (A {a}; B {b})",
                axis="difference in conversation final (1-5; before the length factor, a "
                     "constant per player)",
                points=[PlotPoint("All (mean)", -0.5, (-1.1, 0.1), n=5),
                        PlotPoint("kestrel__f35fa1e6", 0.67),
                        PlotPoint("pip-quillfeather__0d4e9d5d", -0.33)],  # the axes sit right
                test_double=[a, b], reference=0.0)
    plot_png(plot, tmp_path / "diff.png")
    (fig,) = figures
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # closed: measured as it was drawn
    ax = fig.axes[0]
    for text in (ax.title, ax.xaxis.label):
        box = text.get_window_extent(renderer)
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width, (text.get_text(), box)
        assert 0 <= box.y0 and box.y1 <= fig.bbox.height, (text.get_text(), box)
    shown = ax.title.get_text().replace("\n", " ")
    assert a in shown and b in shown  # wrapped between words, names whole
