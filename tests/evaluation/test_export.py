"""`sandbox export`: one row per scored unit of every benchmark, the same numbers as the boards
(each board's means are a group-by of the export), every unit counted (damaged, failed and
unjudged ones with their status and reason), calls per row, the three formats, and the bad
input: foreign directories named, an output inside an input refused, a missing extra said in
one line."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean

import pytest

from evaluation.export import CALL_COLUMNS, STATUSES, UNIT_COLUMNS
from sandbox.app.cli import main
from tests.evaluation.damage import runs
from tests.evaluation.export_sets import build_all

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, Path]:
    """One run set of every benchmark (tests/evaluation/export_sets.py), under one directory."""
    return build_all(tmp_path_factory.mktemp("sets") / "all")


@pytest.fixture(scope="module")
def rows(sets, tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("export") / "units.jsonl"
    assert main(["export", str(sets["stss"].parent), "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def of(rows, benchmark, path=None):
    return [r for r in rows if r["benchmark"] == benchmark and
            (path is None or r["run_set_dir"] == str(path))]


def means(rows, key, value="value"):
    groups = defaultdict(list)
    for r in rows:
        v = r[value] if isinstance(value, str) else value(r)
        if v is not None:
            groups[key(r)].append(v)
    return {k: mean(v) for k, v in groups.items()}


def test_every_benchmark_is_exported_with_every_unit_its_board_counts(sets, rows):
    assert {r["benchmark"] for r in rows} == {"stss", "stss-lang", "pingpong", "simulbench",
                                              "refutebench", "interview"}
    assert all(set(r) == set(UNIT_COLUMNS) for r in rows)
    assert all(r["status"] in STATUSES for r in rows)
    counts = {name: len([r for r in rows if r["run_set_dir"] == str(path)])
              for name, path in sets.items()}
    # 2 episodes, 3 scenarios, 4 pairs, 5 scripts, 3 + 2 dialogues, 2 agents x 15 questions
    assert counts == {"stss": 2, "stss-lang": 3, "pingpong": 4, "simulbench": 5,
                      "refutebench": 3, "refutebench-1.0": 2, "interview": 30}
    stss = of(rows, "stss")[0]
    assert stss["model"] == "scripted/town" and stss["architecture"] == "ga"
    assert stss["template"] == "public_spring_tasting" and stss["seed"] == 0
    assert stss["usage"]["town"]["calls"] == stss["calls"] > 0
    assert stss["code_version"] and stss["wall_s"] > 0
    pp = of(rows, "pingpong")[0]
    assert set(pp["judges"]) == {"scripted/pingpong", "scripted/pingpong-strict"}
    assert pp["value"] == pytest.approx(mean(pp["judges"].values()))
    assert set(pp["usage"]) == {"player", "interrogator", "judge"}
    assert pp["roles"] == {"player": "scripted/pingpong", "interrogator": "scripted/pingpong"}


def test_each_board_mean_is_a_group_by_of_the_export(sets, rows):
    from evaluation.interview.board import interview_board
    from evaluation.pingpong import build_board as pingpong_board
    from evaluation.refutebench.board import build_board as refute_board
    from evaluation.refutebench.board import v1_cells
    from evaluation.simulbench.board import build_board as simul_board
    from evaluation.stss.board import suite_board
    from evaluation.stss_lang.board import table3

    for rules, value in (("ours", "value"), ("reference", "value_reference")):
        board = suite_board([sets["stss"]], rules=rules).data["rows"][0]
        exported = of(rows, "stss")
        assert board["overall"]["mean"] == pytest.approx(
            means(exported, lambda r: r["architecture"], value)["ga"])
        for kind, cell in board["by_type"].items():
            if cell["mean"] is not None:
                assert cell["mean"] == pytest.approx(
                    means(exported, lambda r: r["type"], value)[kind])

    _, data, _ = table3([sets["stss-lang"]])
    lang = of(rows, "stss-lang")
    assert data["rows"][0]["conversation_gcsr_micro"] == pytest.approx(
        means(lang, lambda r: r["run_set"])["scripted/stss-lang ga"])
    assert data["rows"][0]["summary_sr_micro"] == pytest.approx(
        means(lang, lambda r: 0, lambda r: r["measures"]["summary_sr"])[0])

    player = pingpong_board([sets["pingpong"]]).rows[0]
    pp = of(rows, "pingpong")
    assert player.aggregate == pytest.approx(means(pp, lambda r: r["run_set"])[player.label])
    for criterion, value in player.criteria.items():
        assert value == pytest.approx(
            means(pp, lambda r: 0, lambda r, k=criterion: (r["measures"] or {}).get(k))[0])

    board = simul_board([sets["simulbench"]])["rows"][0]
    sb = of(rows, "simulbench")
    assert board["subsets"]["all"]["mean"] == pytest.approx(means(sb, lambda r: 0)[0])
    for category, value in means(sb, lambda r: r["type"]).items():
        assert board["subsets"][category]["mean"] == pytest.approx(value)

    board = refute_board([sets["refutebench"]])
    rb = of(rows, "refutebench", sets["refutebench"])
    for family, value in means(rb, lambda r: r["type"]).items():
        assert board.rows[0].tables.cells[family]["overall"].mean == pytest.approx(value)
    v1 = v1_cells(refute_board([sets["refutebench-1.0"]]))
    rb1 = of(rows, "refutebench", sets["refutebench-1.0"])
    assert [c["met"].mean for c in v1] == pytest.approx(
        [means(rb1, lambda r: 0, lambda r, k=f"v1_rule.{c['feedback']}":
               (r["measures"] or {}).get(k))[0] for c in v1])

    board = interview_board([sets["interview"]]).data["rows"]
    answers = of(rows, "interview")
    by_category = means(answers, lambda r: (r["architecture"], r["type"]))
    by_arch = means(answers, lambda r: r["architecture"])
    for row in board:
        expected = by_arch[row["architecture"]] if row["category"] == "all" else \
            by_category[(row["architecture"], row["category"])]
        assert row["rating"] == pytest.approx(expected)


def test_calls_are_one_row_each_and_add_up_to_the_units(sets, rows, tmp_path):
    out = tmp_path / "calls.csv"
    assert main(["export", str(sets["pingpong"]), str(sets["stss"]), "--calls", "--out",
                 str(out)]) == 0
    with out.open(newline="") as f:
        calls = list(csv.DictReader(f))
    assert list(calls[0]) == list(CALL_COLUMNS)
    for unit in of(rows, "pingpong") + of(rows, "stss"):
        mine = [c for c in calls if c["run_dir"] == unit["run_dir"]]
        assert len(mine) == unit["calls"]
        assert sum(int(c["tokens_in"]) for c in mine) == unit["tokens_in"]
        for role, spent in unit["usage"].items():
            assert sum(c["role"] == role for c in mine) == spent["calls"]
    assert {c["purpose"] for c in calls if c["role"] == "judge"} == {"pingpong.judge"}


def test_money_comes_from_the_prices_of_the_models_file(tmp_path):
    """A player named by a priced alias: its calls cost what the file says; the others', on
    bare model names, are left unpriced (null), never counted as free."""
    from tests.evaluation.export_sets import PINGPONG

    models = tmp_path / "models.yaml"
    models.write_text("pp:\n  model: scripted/pingpong\n  price_in: 1.0\n  price_out: 2.0\n")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(PINGPONG))
    bench = tmp_path / "pp"
    assert main(["pingpong", "--models", str(models), "--player", "pp", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--settings",
                 str(settings), "--every", "4", "--out", str(bench)]) == 0
    out = tmp_path / "u.jsonl"
    assert main(["export", str(bench), "--models", str(models), "--out", str(out)]) == 0
    for unit in map(json.loads, out.read_text().splitlines()):
        player = unit["usage"]["player"]
        assert player["money"] == pytest.approx(
            (player["tokens_in"] * 1.0 + player["tokens_out"] * 2.0) / 1e6)
        assert unit["money"] == player["money"] and unit["endpoints"] == {"player": "pp"}
        assert unit["usage"]["judge"]["money"] is None


def test_the_three_formats_hold_the_same_rows(sets, tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    paths = {s: tmp_path / f"u.{s}" for s in ("csv", "jsonl", "parquet")}
    for path in paths.values():
        assert main(["export", str(sets["simulbench"]), str(sets["stss"]), "--out",
                     str(path)]) == 0
    jsonl = [json.loads(line) for line in paths["jsonl"].read_text().splitlines()]
    table = pq.read_table(paths["parquet"]).to_pylist()
    with paths["csv"].open(newline="") as f:
        rows_csv = list(csv.DictReader(f))
    assert len(jsonl) == len(table) == len(rows_csv) == 7
    for a, b, c in zip(jsonl, table, rows_csv, strict=True):
        assert a["value"] == b["value"] and (c["value"] == "" if a["value"] is None
                                             else float(c["value"]) == a["value"])
        assert json.loads(b["usage"]) == a["usage"] == json.loads(c["usage"])


def test_damaged_unfinished_and_foreign_directories_are_written_with_their_status(
        sets, tmp_path, capsys):
    pp = tmp_path / "pp"
    shutil.copytree(sets["pingpong"], pp)
    first, second, third, _ = runs(pp)
    shutil.rmtree(first)
    events = (second / "events.jsonl").read_text().splitlines(keepends=True)
    events[-2] = "{not json\n"
    (second / "events.jsonl").write_text("".join(events))
    result = json.loads((third / "result.json").read_text())
    result.update(status="unavailable", error="no call reached a model")
    (third / "result.json").write_text(json.dumps(result))
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_text("meow")
    out = tmp_path / "u.jsonl"
    capsys.readouterr()
    assert main(["export", str(pp), str(foreign), str(second), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"- {foreign}: no run set in it" in printed
    assert f"- {second}: a run directory, not a run set" in printed
    got = {r["item"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert len(got) == 4
    assert got[first.name]["status"] == "unscored"
    assert got[first.name]["reason"] == "missing: no run directory"
    assert got[second.name]["status"] == "damaged" and "line" in got[second.name]["reason"]
    assert got[third.name]["status"] == "unavailable"
    assert got[third.name]["value"] is None


def test_an_output_that_is_an_input_or_inside_one_is_refused(sets, capsys):
    for option in (["--out", str(sets["pingpong"] / "units.csv")],
                   ["--inspect", str(sets["pingpong"] / "logs")]):
        assert main(["export", str(sets["pingpong"]), *option]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "an input of this command" in err
    assert not (sets["pingpong"] / "units.csv").exists()


def test_parquet_and_inspect_without_their_extra_say_how_in_one_line(sets, tmp_path,
                                                                      capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    assert main(["export", str(sets["pingpong"]), "--out", str(tmp_path / "u.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith("pip install '.[data]'")
    assert main(["export", str(sets["pingpong"]), "--inspect", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith("pip install '.[inspect]'")
    assert not (tmp_path / "logs").exists() and not (tmp_path / "u.parquet").exists()


def test_an_unknown_format_or_no_output_is_one_line(sets, tmp_path, capsys):
    assert main(["export", str(sets["pingpong"]), "--out", str(tmp_path / "u.xlsx")]) == 2
    assert ".csv, .jsonl, .parquet" in capsys.readouterr().err
    assert main(["export", str(sets["pingpong"])]) == 2
    assert "--out FILE" in capsys.readouterr().err


def readme_columns(heading: str) -> dict[str, str]:
    text = (ROOT / "evaluation" / "README.md").read_text()
    section = text.split(heading, 1)[1].split("\n\n", 2)[1]
    return dict(re.findall(r"^\| `(\w+)` \| (\w+) \|", section, re.M))


def test_the_readme_documents_every_column_with_its_type():
    assert readme_columns("Unit columns") == UNIT_COLUMNS
    assert readme_columns("Call columns") == CALL_COLUMNS


def test_pandas_and_duckdb_read_the_export_as_the_readme_shows(sets, tmp_path):
    pd = pytest.importorskip("pandas")
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    out = tmp_path / "results.parquet"
    assert main(["export", str(sets["pingpong"]), str(sets["simulbench"]), "--out",
                 str(out)]) == 0
    df = pd.read_parquet(out)
    scored = df[df.status == "scored"]
    by_pandas = scored.groupby(["benchmark", "run_set"])["value"].mean()
    by_duck = duckdb.sql(f"""
        SELECT benchmark, run_set, avg(value) AS mean, count(*) AS n
        FROM '{out}' WHERE status = 'scored' GROUP BY ALL ORDER BY benchmark""").df()
    assert list(by_duck.n) == [4, 5]
    for _, row in by_duck.iterrows():
        assert by_pandas[(row.benchmark, row.run_set)] == pytest.approx(row["mean"])
    judged = duckdb.sql(f"""
        SELECT count(*) FROM '{out}'
        WHERE json_extract(judges, '$."scripted/pingpong-strict"') IS NOT NULL""").fetchall()
    assert judged == [(4,)]


def test_inspect_logs_read_back_give_the_boards_numbers(sets, rows, tmp_path):
    pytest.importorskip("inspect_ai", reason="the `inspect` extra (pip install '.[inspect]')")
    from inspect_ai.analysis import samples_df
    from inspect_ai.log import read_eval_log

    from evaluation.pingpong import build_board as pingpong_board
    from evaluation.pingpong import read_player
    from evaluation.stss.board import suite_board

    logs = tmp_path / "logs"
    assert main(["export", str(sets["stss"].parent), "--inspect", str(logs)]) == 0
    files = sorted(p.name for p in logs.iterdir())
    assert len(files) == len(sets) and all(f.endswith(".eval") for f in files)

    stss = read_eval_log(str(logs / "stss_stss_ga.eval"))
    assert stss.eval.task == "stss stss ga" and stss.eval.model == "scripted/town"
    assert len(stss.samples) == 2
    summary = stss.samples[0].messages[-1].text
    assert summary.startswith("What ") and "Score (ours)" in summary
    board = {rules: suite_board([sets["stss"]], rules=rules).data["rows"][0]["overall"]["mean"]
             for rules in ("ours", "reference")}
    results = {s.name: s.metrics["mean"].value for s in stss.results.scores}
    assert results == pytest.approx({"score": board["ours"],
                                     "score_reference": board["reference"]})

    pp = read_eval_log(str(logs / "pingpong_pp.eval"))
    assert pp.eval.model == "scripted/pingpong"
    assert pp.eval.model_roles["interrogator"].model == "scripted/pingpong"
    conversation = pp.samples[0].messages
    assert [m.role for m in conversation[:2]] == ["user", "assistant"]  # the player answers

    df = samples_df(str(logs))
    assert len(df) == len(rows)
    player = pingpong_board([sets["pingpong"]]).rows[0]
    mine = df[df.log.str.endswith("pingpong_pp.eval")]
    assert mine.score_final.mean() == pytest.approx(player.aggregate)
    strict = [c.final for c in read_player(sets["pingpong"], ["scripted/pingpong-strict"])
              .conversations]
    assert mine.score_by_scripted_pingpong_strict.mean() == pytest.approx(mean(strict))
    assert df.metadata_status.eq("scored").sum() == sum(r["status"] == "scored" for r in rows)


def test_an_inspect_log_holds_an_error_for_each_unit_that_failed(sets, tmp_path):
    pytest.importorskip("inspect_ai", reason="the `inspect` extra (pip install '.[inspect]')")
    from inspect_ai.log import read_eval_log

    sb = tmp_path / "sb"
    shutil.copytree(sets["simulbench"], sb)
    failed = runs(sb)[0]
    result = json.loads((failed / "result.json").read_text())
    result.update(status="failed", error="the endpoint said 500")
    (failed / "result.json").write_text(json.dumps(result))
    assert main(["export", str(sb), "--inspect", str(tmp_path / "logs")]) == 0
    log = read_eval_log(str(tmp_path / "logs" / "simulbench_sb.eval"))
    errors = {s.id: s.error.message for s in log.samples if s.error is not None}
    assert errors == {failed.name: "failed: the endpoint said 500"}
    assert log.results.completed_samples == 4


def test_an_unfinished_suite_is_written_with_every_planned_episode(sets, tmp_path, capsys):
    suite = tmp_path / "holder" / "suite"
    shutil.copytree(sets["stss"], suite)
    first, second = sorted((suite / "public_spring_tasting" / "ga").iterdir())
    shutil.rmtree(first)
    result = json.loads((second / "result.json").read_text())
    result.update(status="unavailable", error="no call reached a model")
    (second / "result.json").write_text(json.dumps(result))
    (second / "score.json").unlink()
    (second / "score.reference.json").unlink()
    out = tmp_path / "u.csv"
    # the suite found below the directory given, and the same suite given again counted once
    assert main(["export", str(tmp_path / "holder"), str(suite), "--out", str(out)]) == 0
    assert f"- {suite}: given twice, exported once" in capsys.readouterr().out
    with out.open(newline="") as f:
        got = {r["item"]: r for r in csv.DictReader(f)}
    assert set(got) == {"public_spring_tasting/ga/s0", "public_spring_tasting/ga/s1"}
    never = got["public_spring_tasting/ga/s0"]
    assert never["status"] == "unscored" and never["value"] == ""
    assert never["reason"] == "not run: no run directory (never started)"
    assert got["public_spring_tasting/ga/s1"]["status"] == "unavailable"


def test_a_damaged_stss_episode_is_exported_damaged_and_counted_on_the_board(sets, tmp_path,
                                                                            capsys):
    """An episode whose events.jsonl no longer reads whole (a line edited, the file cut since
    the run ended) or whose score files are gone is damaged, as a kit benchmark's run is: off
    the board, named with why, counted."""
    suite = tmp_path / "suite"
    shutil.copytree(sets["stss"], suite)
    edited, lost = sorted((suite / "public_spring_tasting" / "ga").iterdir())
    events = (edited / "events.jsonl").read_text().splitlines(keepends=True)
    events[3] = events[3][:40] + "\x00\x00\x00\n"  # a disk fault in the middle of the log
    (edited / "events.jsonl").write_text("".join(events))
    (lost / "score.json").unlink()
    (lost / "score.reference.json").unlink()
    out = tmp_path / "u.jsonl"
    assert main(["export", str(suite), "--out", str(out)]) == 0
    got = {r["item"]: r for r in map(json.loads, out.read_text().splitlines())}
    first, second = got["public_spring_tasting/ga/s0"], got["public_spring_tasting/ga/s1"]
    assert first["status"] == second["status"] == "damaged"
    assert first["value"] is None and first["value_reference"] is None
    assert first["reason"].startswith("damaged: events.jsonl line 4: unreadable")
    assert "remove its run directory and run the suite again" in first["reason"]
    assert second["reason"].startswith("damaged: finished, but no score file")
    capsys.readouterr()
    assert main(["stss-board", str(suite)]) == 0
    printed = capsys.readouterr().out
    assert "scored 0 of 2 planned episode(s); 2 without a score, not in the means " \
           "(2 damaged):" in printed
    assert f"  - {edited}: damaged: events.jsonl line 4: unreadable" in printed

    # cut since the run ended: fewer whole lines than its result.json counts
    (edited / "events.jsonl").write_text("".join(events[:-3]) + events[-3][:10])
    assert main(["export", str(suite), "--out", str(out)]) == 0
    cut = next(r for r in map(json.loads, out.read_text().splitlines())
               if r["item"] == "public_spring_tasting/ga/s0")
    assert cut["status"] == "damaged" and "(cut since it ended)" in cut["reason"]


def test_two_inspect_exports_of_the_same_run_sets_are_the_same_bytes(sets, tmp_path):
    """Message ids, the log's ids and times and the zip's member times all come from the run
    sets (their runs' headers say when they ran), not from the clock or a random draw."""
    pytest.importorskip("inspect_ai", reason="the `inspect` extra (pip install '.[inspect]')")
    import zipfile
    from datetime import datetime

    from inspect_ai.log import read_eval_log

    for out in ("first", "second"):
        assert main(["export", str(sets["stss"]), str(sets["pingpong"]), "--inspect",
                     str(tmp_path / out)]) == 0
    logs = sorted(p.name for p in (tmp_path / "first").iterdir())
    assert logs == ["pingpong_pp.eval", "stss_stss_ga.eval"]
    for name in logs:
        assert (tmp_path / "first" / name).read_bytes() == \
            (tmp_path / "second" / name).read_bytes()
    header = json.loads((runs(sets["pingpong"])[0] / "header.json").read_text())
    log = read_eval_log(str(tmp_path / "first" / "pingpong_pp.eval"))
    created = datetime.fromisoformat(log.eval.created).replace(tzinfo=None)
    assert created >= datetime.fromisoformat(header["created_at"])
    with zipfile.ZipFile(tmp_path / "first" / "pingpong_pp.eval") as zf:
        assert {i.date_time for i in zf.infolist()} == {
            (created.year, created.month, created.day, created.hour, created.minute,
             created.second // 2 * 2)}


def test_an_inspect_scores_answer_is_what_the_unit_answered(sets, tmp_path):
    """The ANSWER column of `inspect view`: the evaluated model's last words, an interview's
    answer, an STSS performer's last action in short."""
    pytest.importorskip("inspect_ai", reason="the `inspect` extra (pip install '.[inspect]')")
    from inspect_ai.log import read_eval_log

    from sandbox.interviews import load_answer

    logs = tmp_path / "logs"
    assert main(["export", str(sets["stss"]), str(sets["pingpong"]), str(sets["interview"]),
                 "--inspect", str(logs)]) == 0
    pp = read_eval_log(str(logs / "pingpong_pp.eval")).samples[0]
    last_reply = [m.text for m in pp.messages if m.role == "assistant"][-1]
    assert {s.answer for s in pp.scores.values()} == {last_reply}
    interview = read_eval_log(str(logs / "interview_set_ga.eval")).samples[0]
    said = load_answer(Path(interview.metadata["run_dir"])).answer
    assert interview.scores["rating"].answer == said
    stss = read_eval_log(str(logs / "stss_stss_ga.eval")).samples[0]
    answer = stss.scores["score"].answer
    assert re.fullmatch(r"last: \d{4}-\d\d-\d\d \d\d:\d\d .+ at .+ \(\d+ actions, \d+ "
                        r"conversations\)", answer), answer
    assert stss.scores["score_reference"].answer == answer


def test_an_interview_answer_carries_its_judges_usage(sets, rows):
    """The judges' calls of an interview answer (one per judgment saved beside it) are in its
    row as every benchmark's judges are: calls and tokens per role, in the unit's totals; over
    the set they add up to the judge calls of its calls.jsonl."""
    from sandbox.judgments import read_judgments
    from sandbox.log import read_calls

    answers = of(rows, "interview")
    for unit in answers:
        judged, _ = read_judgments(Path(unit["run_dir"]))
        judge = unit["usage"]["judge"]
        assert judge["calls"] == len(judged) == 1
        assert judge["tokens_in"] == sum(j.prompt_tokens for j in judged) > 0
        assert judge["tokens_out"] == sum(j.completion_tokens for j in judged) > 0
        assert unit["calls"] == unit["usage"]["agent"]["calls"] + judge["calls"]
        assert unit["tokens_in"] == unit["usage"]["agent"]["tokens_in"] + judge["tokens_in"]
    calls, problems = read_calls(sets["interview"])
    assert not problems
    judge_calls = [c for c in calls if c.tag == "interview.judge"]
    assert sum(u["usage"]["judge"]["calls"] for u in answers) == len(judge_calls)
    assert sum(u["usage"]["judge"]["tokens_in"] for u in answers) == \
        sum(c.prompt_tokens for c in judge_calls)


def test_money_comes_from_the_models_file_the_runs_were_made_with(tmp_path, monkeypatch,
                                                                   capsys):
    """A player reached over HTTP through an alias of a priced models file: its header records
    the file, and the export prices the calls by it with no --models (the user's own file
    knows no such alias); that file gone, the one given prices them; one that no longer
    reads is named, not taken as free."""
    import yaml

    from sandbox.llm.loopback import Loopback
    from tests.evaluation.export_sets import PINGPONG

    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(PINGPONG))
    made_with = tmp_path / "made" / "models.yaml"
    made_with.parent.mkdir()
    bench = tmp_path / "pp"
    monkeypatch.setenv("KEY_PP", "sk-not-a-real-key")
    with Loopback("pingpong") as server:
        made_with.write_text(yaml.safe_dump({"pp": {
            "model": "openai/pingpong", "base_url": server.url, "key_env": "KEY_PP",
            "price_in": 1.0, "price_out": 2.0}}))
        assert main(["pingpong", "--models", str(made_with), "--player", "pp",
                     "--interrogator", "scripted/pingpong", "--judge", "scripted/pingpong",
                     "--settings", str(settings), "--every", "4", "--out", str(bench)]) == 0
    mine = tmp_path / "mine.yaml"  # the user's own models file: other aliases, other prices
    mine.write_text(yaml.safe_dump({"other": {"model": "scripted/pingpong"}}))
    monkeypatch.setenv("SANDBOX_MODELS", str(mine))
    out = tmp_path / "u.jsonl"

    def exported(*extra):
        assert main(["export", str(bench), "--out", str(out), *extra]) == 0
        return [json.loads(line) for line in out.read_text().splitlines()]

    for unit in exported():
        player = unit["usage"]["player"]
        assert player["tokens_in"] > 0 and unit["endpoints"]["player"] == "pp"
        assert player["money"] == pytest.approx(
            (player["tokens_in"] * 1.0 + player["tokens_out"] * 2.0) / 1e6)
        assert unit["money"] == player["money"]
    calls = tmp_path / "calls.jsonl"
    assert main(["export", str(bench), "--calls", "--out", str(calls)]) == 0
    priced = [c for c in map(json.loads, calls.read_text().splitlines()) if c["role"] == "player"]
    assert priced and all(c["money"] == pytest.approx(
        (c["tokens_in"] * 1.0 + c["tokens_out"] * 2.0) / 1e6) for c in priced)

    made_with.unlink()  # gone: the file given prices the alias
    given = tmp_path / "given.yaml"
    given.write_text(yaml.safe_dump({"pp": {"model": "openai/pingpong", "price_in": 3.0,
                                            "price_out": 3.0}}))
    for unit in exported("--models", str(given)):
        player = unit["usage"]["player"]
        assert player["money"] == pytest.approx(
            (player["tokens_in"] + player["tokens_out"]) * 3.0 / 1e6)

    made_with.write_text("pp: [not, an, alias]\n")  # there, but no longer read
    capsys.readouterr()
    units = exported()
    assert all(u["money"] is None for u in units)
    assert f"- {made_with}: the models file runs recorded does not read" in \
        capsys.readouterr().out
