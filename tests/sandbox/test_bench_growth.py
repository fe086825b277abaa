"""bench/growth.py, small: a town of 3 living two simulated days and one population size, on
the scripted model and through the loopback endpoint side by side in one run, and the PNG of
the two curves drawn from the figures it kept. The command runs in this process (its main, as
`python bench/growth.py` calls it); its legs and the endpoints are processes of their own, as
the benchmark makes them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def growth_main(monkeypatch, *argv: str) -> int:
    module = load_script("bench/growth.py")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "bench" / "growth.py"), *argv])
    return module.main()


def test_both_endpoints_run_the_same_episodes_side_by_side_and_draw_the_curves(
        tmp_path, monkeypatch, capsys):
    figures, png = tmp_path / "growth.json", tmp_path / "growth.png"
    # Three residents: calls asked together at one simulated instant, conversations, memories
    # growing day by day; five made every leg longer and compared nothing more.
    code = growth_main(monkeypatch, "all", "--days", "2", "--residents", "3", "--sizes", "3",
                       "--hours", "1", "--endpoint", "both", "--latency", "0",
                       "--json", str(figures), "--png", str(png))
    printed = capsys.readouterr()
    assert code == 0, printed.err[-2000:]
    assert "failed" not in printed.out, printed.err[-2000:]
    assert "day N / day 1, side by side" in printed.out
    assert "wall per resident-hour against the first size, side by side" in printed.out

    kept = json.loads(figures.read_text())
    scripted, loopback = (kept["days"]["legs"][n] for n in ("scripted", "loopback 0 s"))
    # the same episode with the same answers: the same calls and prompts, day by day (not the
    # same waits: residents run ahead as far as the answers' timing lets them)
    for key in ("calls", "prompt_per_call", "memories"):
        assert [d[key] for d in scripted["days"]] == [d[key] for d in loopback["days"]]
    assert loopback["endpoint"]["requests"] == loopback["calls"] == scripted["calls"] > 0
    assert "endpoint" not in scripted
    sizes = {n: [r["residents"] for r in rows] for n, rows in kept["population"]["legs"].items()}
    assert sizes == {"scripted": [3], "loopback 0 s": [3]}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
