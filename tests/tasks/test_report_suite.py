"""`sandbox report SUITE`: an STSS suite as a site, its board as `sandbox stss-board` prints
it, each episode with its score's rule and evidence and its map replay (scripted model)."""

from __future__ import annotations

import json
import re

from sandbox.app.cli import main


def test_a_suites_board_episodes_and_evidence(tmp_path, capsys):
    suite = tmp_path / "suite"
    assert main(["stss", "--model", "scripted/town", "--embedder", "hashing", "--templates",
                 "public_spring_tasting", "--arch", "ga", "--arch", "ga_tdp", "--background",
                 "2", "--same-day", "--start", "15:00", "--out", str(suite)]) == 0
    (suite / "public_spring_tasting" / "ga" / "s0" / "header.json").unlink()  # damaged
    capsys.readouterr()
    assert main(["stss-board", str(suite)]) == 0
    terminal = capsys.readouterr().out
    site = tmp_path / "site"
    assert main(["report", str(suite), "--out", str(site)]) == 0
    text = (site / "data" / "site.js").read_text(encoding="utf-8")
    (section,) = json.loads(text[len("REPORT.site("):-3])["sections"]
    assert section["title"].startswith("STSS action level")
    first = next(line for line in terminal.splitlines() if line.startswith("| scripted/town"))
    cells = [c.strip() for c in first.strip("|").split("|")]
    assert re.findall(r"<td[^>]*>(.*?)</td>", section["board"])[:len(cells)] == cells
    rows = {r["id"]: r for r in section["items"]}
    assert set(rows) == {"public_spring_tasting/ga/s0", "public_spring_tasting/ga_tdp/s0"}
    assert rows["public_spring_tasting/ga/s0"]["state"] == "missing"
    assert rows["public_spring_tasting/ga/s0"]["damaged"]
    n = rows["public_spring_tasting/ga_tdp/s0"]["n"]
    item = (site / "data" / "items" / f"{n}.js").read_text(encoding="utf-8")
    data = json.loads(item[item.index(",") + 1:-3])
    (score,) = data["scores"]
    assert score["rule"].startswith("min(") and score["evidence"]
    assert {e["verdict"] for e in score["evidence"]} >= {"counted"}
    assert data["replay"]["map"]["name"] == "town" and len(data["replay"]["agents"]) == 3
    assert data["command"] is None or "sandbox" in data["command"]
