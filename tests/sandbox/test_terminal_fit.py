"""A board fits the terminal it is printed on; into a file or a pipe it stays whole."""

from __future__ import annotations

import io

from rich.console import Console

from sandbox.terminal import print_markdown

ROW = ("| scripted/pingpong-verbose-with-a-long-name | 2.00 [1.50, 2.50] n=3 | "
       "3.00 [2.00, 4.00] n=3 | 1.00 [1.00, 1.00] n=3 | 2.00 [1.00, 3.00] n=9 | kept |")
BOARD = ("Table 4: something measured\n\n"
         "| Model | MT | Summ | Writing | Overall with a long header | Notes |\n"
         "|---|--:|--:|--:|--:|---|\n" + ROW + "\n\n- a note under the table\n")


def test_a_wide_table_on_a_narrow_terminal_is_laid_out_to_fit_with_every_cell():
    out = io.StringIO()
    print_markdown(BOARD, Console(file=out, width=60, force_terminal=True, color_system=None))
    shown = out.getvalue()
    assert max(len(line) for line in shown.splitlines()) <= 60
    rows = [line.split("│")[1:-1] for line in shown.splitlines() if line.startswith("│")]
    columns = ["".join(row[i].strip() for row in rows) for i in range(6)]
    assert columns == ["scripted/pingpong-verbose-with-a-long-name", "2.00[1.50,2.50]n=3",
                       "3.00[2.00,4.00]n=3", "1.00[1.00,1.00]n=3", "2.00[1.00,3.00]n=9", "kept"]
    assert "Table 4: something measured" in shown and "- a note under the table" in shown


def test_into_a_file_the_markdown_is_printed_as_it_is():
    out = io.StringIO()
    print_markdown(BOARD, Console(file=out, width=60))
    assert out.getvalue() == BOARD


def test_a_run_summary_on_a_narrow_terminal_wraps_names_instead_of_cutting_them(tmp_path):
    from sandbox.app.cli import main
    from sandbox.log import load_run
    from sandbox.summary import print_summary, summarize

    out = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--out",
                 str(out)]) == 0
    shown = io.StringIO()
    print_summary(summarize(load_run(out)), Console(file=shown, width=50, color_system=None))
    text = shown.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 50
