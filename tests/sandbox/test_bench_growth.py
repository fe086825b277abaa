"""bench/growth.py, small: a town of 5 living two simulated days and one population size, on
the scripted model and through the loopback endpoint side by side in one run, and the PNG of
the two curves drawn from the figures it kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_both_endpoints_run_the_same_episodes_side_by_side_and_draw_the_curves(tmp_path):
    figures, png = tmp_path / "growth.json", tmp_path / "growth.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "growth.py"), "all", "--days", "2",
         "--residents", "5", "--sizes", "5", "--hours", "1", "--endpoint", "both",
         "--latency", "0", "--json", str(figures), "--png", str(png)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "day N / day 1, side by side" in done.stdout
    assert "wall per resident-hour against the first size, side by side" in done.stdout

    kept = json.loads(figures.read_text())
    scripted, loopback = (kept["days"]["legs"][n] for n in ("scripted", "loopback 0 s"))
    # the same episode with the same answers: the same calls, rounds and prompts, day by day
    for key in ("calls", "rounds", "prompt_per_call", "memories"):
        assert [d[key] for d in scripted["days"]] == [d[key] for d in loopback["days"]]
    assert loopback["endpoint"]["requests"] == loopback["calls"] == scripted["calls"] > 0
    assert "endpoint" not in scripted
    sizes = {n: [r["residents"] for r in rows] for n, rows in kept["population"]["legs"].items()}
    assert sizes == {"scripted": [5], "loopback 0 s": [5]}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
