"""`sandbox stss --dry-run`: what a suite would run and spend, before it runs, writing nothing;
from the rates kept with the package, or the suite's own finished episodes."""

from __future__ import annotations

import re

from sandbox.app.cli import main

SMALL = ["--model", "scripted/town", "--embedder", "hashing", "--templates",
         "public_spring_tasting", "--background", "2", "--same-day", "--start", "15:00",
         "--arch", "ga"]


def calls(printed: str) -> int:
    return int(re.search(r"\| town \| [^|]+ \| (\d+) \|", printed).group(1))


def test_a_dry_run_writes_nothing_and_prices_what_the_models_file_prices(tmp_path, capsys):
    models = tmp_path / "models.yaml"
    models.write_text("priced:\n  model: scripted/town\n  price_in: 0.15\n  price_out: 0.60\n")
    out = tmp_path / "suite"
    args = ["stss", *SMALL, "--models", str(models), "--seeds", "0..1", "--out", str(out)]
    assert main([*args[:2], "priced", *args[3:], "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "Dry run: 2 episode(s) to run, 0 finished and skipped; nothing was written." in printed
    assert "| town | priced (scripted/town) |" in printed and "rates.json" in printed
    assert re.search(r"\| \$\d+\.\d\d+ \|", printed)  # the alias's prices
    assert calls(printed) > 0 and not out.exists()


def test_a_resumed_suite_is_estimated_from_its_own_history_within_a_quarter(tmp_path, capsys):
    """Four seeds run; four more estimated from them, then run: the calls within 25% (the
    issue's target; one short episode alone varies more from seed to seed)."""
    out = tmp_path / "suite"
    assert main(["stss", *SMALL, "--seeds", "0..3", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["stss", *SMALL, "--seeds", "0..7", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "4 episode(s) to run, 4 finished and skipped" in printed
    assert "this suite's finished episodes" in printed
    estimated = calls(printed)
    assert not (out / "public_spring_tasting" / "ga" / "s4").exists()
    assert main(["stss", *SMALL, "--seeds", "0..7", "--out", str(out)]) == 0
    actual = sum(len((out / "public_spring_tasting" / "ga" / f"s{seed}" / "calls.jsonl")
                     .read_text().splitlines()) for seed in range(4, 8))
    assert 0.75 <= estimated / actual <= 1.25, (estimated, actual)
    # the run's closing summary: the dry run's own estimate, beside these episodes' calls
    row = re.search(r"\| town \| [^|]+ \| (\d+) \| (\d+) \| [\d.]+ \|[^\n]*this suite's",
                    capsys.readouterr().out)
    assert (int(row.group(1)), int(row.group(2))) == (estimated, actual)


def lines(run_dir) -> int:
    return len((run_dir / "calls.jsonl").read_text().splitlines())


def test_a_run_closes_with_the_estimate_beside_what_its_episodes_spent(tmp_path, capsys):
    """ga has a kept rate, ga_recency none: ga's estimate is printed beside its calls.jsonl's
    count; ga_recency is said to have no estimate, with what it spent. Run again, everything
    is finished: nothing ran."""
    out = tmp_path / "suite"
    args = ["stss", *SMALL, "--arch", "ga_recency", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "Estimate vs actual for the 2 episode(s) this run ran" in printed
    row = re.search(r"\| town \| scripted/town \| (\d+) \| (\d+) \| ([\d.]+) \|[^\n]*"
                    r"rates\.json", printed)
    estimated, actual = int(row.group(1)), int(row.group(2))
    assert actual == lines(out / "public_spring_tasting" / "ga" / "s0")
    assert estimated > 0 and row.group(3) == f"{estimated / actual:.2f}"
    recency = lines(out / "public_spring_tasting" / "ga_recency" / "s0")
    assert (f"No estimate for ga_recency (no rate for it before the run): it spent {recency} "
            "call(s)") in printed
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "Estimate vs actual: nothing ran (2 episode(s) were finished before)" in printed
    assert "| town |" not in printed


def test_an_episode_its_budget_stopped_counts_with_what_it_spent_and_is_said(tmp_path, capsys):
    out = tmp_path / "suite"
    assert main(["stss", *SMALL, "--episode-max-calls", "10", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    row = re.search(r"\| town \| scripted/town \| (\d+) \| (\d+) \|", printed)
    assert int(row.group(2)) == lines(out / "public_spring_tasting" / "ga" / "s0") <= 10
    assert "1 of them failed or stopped early: they count with what they spent before" in printed


def test_a_dry_run_refuses_what_the_run_refuses(tmp_path, capsys):
    """An unknown background model and an --out holding another benchmark once got an
    estimate from the dry run, then a refusal from the run."""
    import json

    other = tmp_path / "pp"
    other.mkdir()
    (other / "pingpong.json").write_text(json.dumps({"benchmark": "pingpong"}))
    for extra, said in ((["--background-model", "nosuch", "--out", str(tmp_path / "s")],
                         "unknown model 'nosuch'"),
                        (["--out", str(other)], "holds a pingpong benchmark")):
        for dry in ([], ["--dry-run"]):
            assert main(["stss", *SMALL, *extra, *dry]) == 2
            [err] = capsys.readouterr().err.strip().splitlines()
            assert said in err, dry
    assert not (tmp_path / "s").exists() and sorted(p.name for p in other.iterdir()) == [
        "pingpong.json"]


def test_a_kit_dry_run_refuses_another_configuration_in_its_out(tmp_path, capsys):
    """A benchmark directory of another configuration: the run refuses, and so does its dry
    run (it once estimated '0 to run, all finished')."""
    roles = ["--player", "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "32"]
    out = tmp_path / "pp"
    assert main(["pingpong", *roles, "--interrogator", "scripted/pingpong", "--out",
                 str(out)]) == 0
    capsys.readouterr()
    for dry in ([], ["--dry-run"]):
        assert main(["pingpong", *roles, "--interrogator", "scripted/pingpong-verbose",
                     "--out", str(out), *dry]) == 2
        [err] = capsys.readouterr().err.strip().splitlines()
        assert "holds a benchmark with interrogator 'scripted/pingpong'" in err, dry


def test_a_routed_dry_run_has_a_row_per_role_and_model_priced_and_timed(tmp_path, capsys):
    """With a background model: the evaluated model's row holds the performer's routed
    purposes, the background's the rest, each priced from its alias; the wall time comes from
    each endpoint's given latency, and is said unknown where none is."""
    models = tmp_path / "models.yaml"
    models.write_text("A:\n  model: openai/smolA\n  base_url: http://127.0.0.1:9/v1\n"
                      "  price_in: 0.5\n  price_out: 1.0\n  latency_s: 2\n"
                      "B:\n  model: openai/smolB\n  base_url: http://127.0.0.1:9/v1\n"
                      "  price_in: 0.1\n  price_out: 0.2\n")
    base = ["stss", *SMALL[2:], "--models", str(models), "--model", "A", "--background-model",
            "B", "--out", str(tmp_path / "suite"), "--dry-run"]
    assert main(base) == 0
    printed = capsys.readouterr().out
    rows = {m.group(1): (int(m.group(2)), m.group(3)) for m in re.finditer(
        r"\| (evaluated|background) \| [AB] \(openai/smol[AB]\) \| (\d+) \| \d+ \| \d+ \| "
        r"(\$[\d.]+) \|", printed)}
    assert set(rows) == {"evaluated", "background"} and "| town |" not in printed
    evaluated, background = rows["evaluated"][0], rows["background"][0]
    assert 0 < evaluated < background  # the performer's routed purposes only
    assert "Wall time: not known for B (openai/smolB)" in printed
    # `all` routing gives the evaluated model every call of the performer: more of them.
    assert main([*base, "--performer-routing", "all"]) == 0
    more = re.search(r"\| evaluated \| A \(openai/smolA\) \| (\d+) \|", capsys.readouterr().out)
    assert int(more.group(1)) > evaluated


def test_a_short_window_with_few_residents_is_estimated_per_role_within_a_quarter(tmp_path,
                                                                                  capsys):
    """The kept rates (full windows of 12 residents) estimate a 6-hour window of 3 residents
    per role: the calls of everyone's first hour (the day planned at the start) per resident,
    the performer's per episode, not all per resident-hour. Before, the evaluated role was
    estimated at a fifth of its calls (issue 58: "2 calls estimated, 12 made"). The closing
    table says the wall time estimated beside the time the run took (the scripted alias's once
    went unestimated: "not known for bg (scripted/town)")."""
    models = tmp_path / "models.yaml"
    models.write_text("bg:\n  model: scripted/town\n")
    out = tmp_path / "suite"
    assert main(["stss", *SMALL[:4], "--templates", "public_spring_tasting,appointment_portrait,"
                 "inviting_pool_game,online_book_club,help_library_books", *SMALL[6:],
                 "--models", str(models), "--background-model", "bg", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"\| (evaluated|background) \| [^|]+ \| (\d+) \| (\d+) \| [\d.]+ \|[^\n]*rates\.json",
        printed)}
    assert set(rows) == {"evaluated", "background"}
    for role, (estimated, actual) in rows.items():
        assert 0.75 <= estimated / actual <= 1.34, (role, estimated, actual)
    # an alias of a scripted model is timed at its calls' latency, as the model is
    wall = re.search(r"Wall time: estimated about [^\n]* took ([\d.]+) s", printed)
    assert wall and float(wall.group(1)) > 0


def test_an_embedded_evaluated_model_does_not_time_its_endpoint_background(tmp_path, capsys):
    """The embedded model's calls at its rate, an endpoint's at its own latency: an endpoint
    with none leaves the wall time unknown, said, rather than timed as the embedded model."""
    models = tmp_path / "models.yaml"
    models.write_text("B:\n  model: openai/smolB\n  base_url: http://127.0.0.1:9/v1\n")
    base = ["stss", *SMALL[2:], "--models", str(models), "--model", "local/smollm2-135m",
            "--background-model", "B", "--out", str(tmp_path / "suite"), "--dry-run"]
    assert main(base) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "Wall time: not known for B (openai/smolB)" in printed
    assert "Wall time: about" not in printed
    models.write_text(models.read_text() + "  latency_s: 100\n")
    assert main(base) == 0
    printed = " ".join(capsys.readouterr().out.split())
    background = int(re.search(r"\| background \| B \(openai/smolB\) \| (\d+) \|",
                               printed).group(1))
    # at least the background's calls at 100 s each
    said = re.search(r"Wall time: about (?:(\d+) h )?(\d+) min", printed)
    assert said, printed
    assert int(said.group(1) or 0) * 3600 + int(said.group(2)) * 60 >= background * 100 - 30


# Kept rates shaped as bench/stss_rates.py writes them, small enough to reckon by hand: the
# 15:00 window's first hour, 3 calls per background resident for public_spring_tasting's own
# rates, 10 for the mix, and a real model's factors.
RATE = [1.0, 3, 300, 30, 0.0]  # [resident units, calls, tokens in, tokens out, latency]
KEPT = {"scripted": {"model": "scripted/town", "windows": {
    "15:00": {"about": "same-day windows from 15:00 (test)",
              "mix": {"ga": {"residents@start": [1.0, 10, 300, 30, 0.0]}},
              "templates": {"public_spring_tasting": {"ga": {"residents@start": RATE}}}},
    "06:00": {"about": "full windows (test)",
              "mix": {"ga": {"residents@start": [1.0, 100, 300, 30, 0.0]}}, "templates": {}}}},
    "real": {"model": "local/smollm2-135m", "about": "the real model (test)",
             "factors": {"ga": {"residents@start": {"calls": 2.0, "prompt_tokens": 3.0,
                                                    "completion_tokens": 4.0}}}}}


def kept_file(tmp_path, monkeypatch, data) -> None:
    import json

    from tasks.stss.plugin import cost

    path = tmp_path / "rates.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    monkeypatch.setattr(cost, "RATES_FILE", path)


def town_row(printed: str) -> tuple[int, int, int, str]:
    row = re.search(r"\| town \| [^|]+ \| (\d+) \| (\d+) \| (\d+) \| [^|]+ \| ([^|]+) \|",
                    printed)
    return int(row.group(1)), int(row.group(2)), int(row.group(3)), row.group(4).strip()


def test_a_template_with_its_own_kept_rates_is_estimated_from_them_else_from_the_mix(
        tmp_path, monkeypatch, capsys):
    """Two background residents' first hour: 2 x 3 calls at public_spring_tasting's own rate
    (the kept window starting at 15:00, nearest the suite's); a copy of the template in a
    file of the user's own is not the built-in: 2 x 10 at the mix, and the note says so."""
    from tasks.stss import TEMPLATES_DIR

    kept_file(tmp_path, monkeypatch, KEPT)
    out = tmp_path / "suite"
    assert main(["stss", *SMALL, "--out", str(out), "--dry-run"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert town_row(printed)[:3] == (6, 600, 60)
    assert ("measured on scripted/town, same-day windows from 15:00 (test) (the kept window "
            "starting nearest the suite's); 1 episode(s) from their template's own rates."
            ) in printed
    mine = tmp_path / "my_tasting.yaml"
    mine.write_text((TEMPLATES_DIR / "public_spring_tasting.yaml").read_text())
    words = [w if w != "public_spring_tasting" else str(mine) for w in SMALL]
    assert main(["stss", *words, "--out", str(out), "--dry-run"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert town_row(printed)[:3] == (20, 600, 60)
    assert ("0 episode(s) from their template's own rates, 1 from the mix of the 1 built-in "
            "templates measured (no rates of their own: my_tasting)") in printed


def test_a_real_model_is_estimated_from_the_doubles_rates_scaled_by_its_factors(
        tmp_path, monkeypatch, capsys):
    """The embedded model: the double's 6 calls, 600 tokens in and 60 out scaled by the real
    model's factors (x2, x3, x4), and said; an endpoint gets the same factors, said to be
    another model's. The scripted double keeps its own rates."""
    kept_file(tmp_path, monkeypatch, KEPT)
    base = [*SMALL[2:], "--out", str(tmp_path / "suite"), "--dry-run"]
    assert main(["stss", "--model", "local/smollm2-135m", *base]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert town_row(printed) == (12, 1800, 240, "rates.json (bench/stss_rates.py), scaled to "
                                                "local/smollm2-135m")
    assert ("local/smollm2-135m: the scripted rates scaled per class of call by what "
            "local/smollm2-135m spent over scripted/town on the same episodes (the real model "
            "(test); calls x2.00, tokens in x3.00, tokens out x4.00).") in printed
    models = tmp_path / "models.yaml"
    models.write_text("E:\n  model: openai/other\n  base_url: http://127.0.0.1:9/v1\n")
    assert main(["stss", "--models", str(models), "--model", "E", *base]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert town_row(printed)[:3] == (12, 1800, 240)
    assert ("local/smollm2-135m is the one real model measured, E (openai/other) answer "
            "otherwise") in printed
    assert main(["stss", "--model", "scripted/town", *base]) == 0
    assert town_row(capsys.readouterr().out)[:3] == (6, 600, 60)


def test_the_shipped_rates_estimate_a_real_model_apart_from_the_double(tmp_path, capsys):
    """rates.json as shipped keeps a real model's factors: the embedded model's estimate is
    not the scripted double's tokens (a real window's were 2-4 times the double's)."""
    base = [*SMALL[2:], "--out", str(tmp_path / "suite"), "--dry-run"]
    assert main(["stss", "--model", "scripted/town", *base]) == 0
    double = town_row(capsys.readouterr().out)
    assert main(["stss", "--model", "local/smollm2-135m", *base]) == 0
    real = town_row(capsys.readouterr().out)
    assert real[3].endswith("scaled to local/smollm2-135m") and "scaled" not in double[3]
    assert real[1] > double[1] and real[2] > double[2], (real, double)


def test_a_damaged_rates_file_is_one_line_and_a_malformed_entry_is_left_out_and_said(
        tmp_path, monkeypatch, capsys):
    import copy

    args = ["stss", *SMALL, "--out", str(tmp_path / "suite"), "--dry-run"]
    for damaged, said in (("{\"scripted\": ", "not valid JSON"),
                          ("[1, 2]", "expected \"scripted\" rates per window start"),
                          ({"scripted": {"windows": {"3pm": {}}}}, "per window start")):
        kept_file(tmp_path, monkeypatch, damaged)
        assert main(args) == 2
        [err] = capsys.readouterr().err.strip().splitlines()
        assert "rates.json" in err and said in err and "bench/stss_rates.py" in err, err
    edited = copy.deepcopy(KEPT)
    edited["scripted"]["windows"]["15:00"]["templates"]["public_spring_tasting"]["ga"][
        "residents@start"] = [1.0, -1, 300, 30, 0.0]
    kept_file(tmp_path, monkeypatch, edited)
    assert main(args) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert town_row(printed)[:3] == (20, 600, 60)  # the mix, the template's own left out
    assert ("rates.json: 1 malformed entry not used (first: 15:00.templates."
            "public_spring_tasting.ga.residents@start: calls: -1 is not a non-negative "
            "number)") in printed


def test_the_bench_keeps_rates_that_estimate_the_suite_they_came_from(tmp_path, monkeypatch,
                                                                       capsys):
    """bench/stss_rates.py --from SUITE writes the suite's template's rates for its window
    start; --check SUITE then estimates that suite from them exactly (ratio 1.00 per role and
    class), and a dry run of it reads them back: rates written are rates read."""
    import importlib.util
    from pathlib import Path

    from tasks.stss.plugin import cost

    spec = importlib.util.spec_from_file_location(
        "stss_rates", Path(__file__).resolve().parents[2] / "bench" / "stss_rates.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    kept = tmp_path / "rates.json"
    monkeypatch.setattr(bench, "RATES_FILE", kept)
    monkeypatch.setattr(cost, "RATES_FILE", kept)
    suite = tmp_path / "suite"
    assert main(["stss", *SMALL, "--arch", "ga_tdp", "--out", str(suite)]) == 0
    assert bench.measure_double("", "", [], suite) == 0
    windows = cost.read_kept(kept).windows
    assert list(windows) == ["15:00"] and list(windows["15:00"].templates) == [
        "public_spring_tasting"]
    capsys.readouterr()
    assert bench.check(suite) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ga")
            or line.startswith("| role")]
    assert len(rows) > 6 and all(line.count("| 1.00 |") == 3 for line in rows), rows
    assert main(["stss", *SMALL, "--arch", "ga_tdp", "--out", str(tmp_path / "again"),
                 "--dry-run"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "2 episode(s) from their template's own rates." in printed
    made = sum(lines(suite / "public_spring_tasting" / arch / "s0") for arch in ("ga", "ga_tdp"))
    assert town_row(printed)[0] == made
