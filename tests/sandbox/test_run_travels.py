"""A run made with a models file travels: `sandbox rerun --cache-only` replays it from any
directory, with no key in the environment, and with the models file gone; the header records
what each alias resolved to."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.llm.loopback import Loopback

EPISODE = ["public_spring_tasting", "--background", "2", "--same-day", "--start", "15:00",
           "--until", "17:10", "--seed", "1", "--embedder", "hashing", "--quiet"]


def made_and_elsewhere(tmp_path):
    """Two new directories: where a command is typed, and where it is made again."""
    made, elsewhere = tmp_path / "made", tmp_path / "elsewhere"
    made.mkdir()
    elsewhere.mkdir()
    return made, elsewhere


def models_file(made, monkeypatch, model: str, **urls: str) -> None:
    """MADE/models.yaml naming `model` at each alias's endpoint, its key in KEY_<ALIAS>
    (set)."""
    (made / "models.yaml").write_text(yaml.safe_dump({
        alias: {"model": model, "base_url": url, "key_env": f"KEY_{alias.upper()}"}
        for alias, url in urls.items()}))
    for alias in urls:
        monkeypatch.setenv(f"KEY_{alias.upper()}", f"sk-{alias}-not-a-real-key")


def test_a_run_with_a_models_file_reruns_cache_only_anywhere_without_a_key(
        tmp_path, monkeypatch):
    made, elsewhere = made_and_elsewhere(tmp_path)
    with Loopback("town") as evaluated, Loopback("town") as background:
        models_file(made, monkeypatch, "openai/town", a=evaluated.url, b=background.url)
        monkeypatch.chdir(made)
        assert main(["run", *EPISODE, "--models", "models.yaml", "--model", "a",
                     "--background-model", "b", "--out", "run"]) == 0
    run = made / "run"
    header = json.loads((run / "header.json").read_text())
    endpoints = header["config"]["endpoints"]
    assert set(endpoints) == {"a (openai/town)", "b (openai/town)"}
    assert endpoints["a (openai/town)"]["base_url"] == evaluated.url
    assert endpoints["b (openai/town)"]["key_env"] == "KEY_B"
    assert endpoints["a (openai/town)"]["models_file"] == str(made / "models.yaml")
    assert endpoints["a (openai/town)"]["json_dialect"] == "json_schema"
    # the header's `models` keeps model ids (what old runs hold, fork and interview read);
    # every place a person reads names them as the roles resolved: "alias (model id)"
    from sandbox.log import read_header

    assert header["models"]["Julian Reyes"] == "openai/town"
    assert read_header(run).model_names() == {
        "Maya Lindqvist": "a (openai/town) + b (openai/town)",  # the paper routing splits her
        "Julian Reyes": "b (openai/town)", "Priya Raman": "b (openai/town)"}
    # The servers are gone, the keys unset, and the command is run from another directory.
    monkeypatch.delenv("KEY_A")
    monkeypatch.delenv("KEY_B")
    monkeypatch.chdir(elsewhere)
    assert main(["rerun", str(run), "--cache-only", "--out", "again"]) == 0
    assert (elsewhere / "again" / "events.jsonl").read_bytes() == \
        (run / "events.jsonl").read_bytes()
    # And with the models file itself gone: the header's aliases stand in for it.
    os.remove(made / "models.yaml")
    assert main(["rerun", str(run), "--cache-only", "--out", "third"]) == 0
    assert (elsewhere / "third" / "events.jsonl").read_bytes() == \
        (run / "events.jsonl").read_bytes()
    assert not any("sk-" in p.read_text(errors="replace")
                   for d in (run, elsewhere) for p in d.rglob("*") if p.is_file())


VOLATILE = {"created_at", "latency_s", "wall_time_s", "cached", "code_version",
            "json_dialect", "json_dialect_from", "models_file"}


def _kept(value):
    """A JSON file's content without what differs between a run and its replay for no
    reason: when it was written, how long calls took, whether an answer came from the cache,
    the endpoint's JSON dialect (a cache-only replay asks no server) and where its models file
    was (one rebuilt from the header, when the file is gone, is a temporary file)."""
    if isinstance(value, dict):
        return {k: _kept(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_kept(v) for v in value]
    return value


def _same_item(a, b) -> None:
    assert (a / "events.jsonl").read_bytes() == (b / "events.jsonl").read_bytes()
    for name in ("header.json", "result.json"):
        assert _kept(json.loads((a / name).read_text())) == \
            _kept(json.loads((b / name).read_text())), name
    judgments = sorted(p.name for p in (a / "judgments").iterdir())
    assert judgments and judgments == sorted(p.name for p in (b / "judgments").iterdir())
    for name in judgments:
        assert _kept(json.loads((a / "judgments" / name).read_text())) == \
            _kept(json.loads((b / "judgments" / name).read_text())), name


def test_a_pingpong_item_made_with_relative_paths_reruns_from_anywhere_without_a_key(
        tmp_path, monkeypatch):
    """Its command recorded with the models file, the settings file and --out absolute: `sandbox
    rerun ITEM --cache-only` from another directory, keys unset and servers gone, makes the
    same dialogue and the same judgments; also with the models file gone."""
    from pathlib import Path

    made, elsewhere = made_and_elsewhere(tmp_path)
    settings = Path(__file__).resolve().parents[2] / "tasks" / "pingpong" / "settings.yaml"
    (made / "settings.yaml").write_bytes(settings.read_bytes())
    with Loopback("pingpong") as player, Loopback("pingpong") as judge:
        models_file(made, monkeypatch, "openai/pingpong", p=player.url, j=judge.url)
        monkeypatch.chdir(made)
        argv = ["pingpong", "--models", "models.yaml", "--player", "p", "--interrogator", "j",
                "--judge", "j", "--settings", "settings.yaml", "--every", "32", "--out", "pp"]
        assert main(argv) == 0
    items = sorted((made / "pp" / "runs").iterdir())
    assert len(items) == 3
    command = json.loads((items[0] / "header.json").read_text())["config"]["benchmark_command"]
    assert command == ["sandbox", "pingpong", "--models", str(made / "models.yaml"), "--player",
                       "p", "--interrogator", "j", "--judge", "j", "--settings",
                       str(made / "settings.yaml"), "--every", "32", "--out", str(made / "pp")]
    from sandbox.log import read_header

    assert read_header(items[0]).model_names() == {"player": "p (openai/pingpong)",
                                                   "interrogator": "j (openai/pingpong)"}
    monkeypatch.delenv("KEY_P")
    monkeypatch.delenv("KEY_J")
    monkeypatch.chdir(elsewhere)
    for item in items:
        assert main(["rerun", str(item), "--cache-only", "--out", f"again-{item.name}"]) == 0
        _same_item(elsewhere / f"again-{item.name}", item)
    os.remove(made / "models.yaml")  # the header's aliases stand in for it
    assert main(["rerun", str(items[0]), "--cache-only", "--out", "third"]) == 0
    _same_item(elsewhere / "third", items[0])
    # into the item itself, over it: the same again
    before = (items[1] / "events.jsonl").read_bytes()
    assert main(["rerun", str(items[1]), "--cache-only"]) == 0
    assert (items[1] / "events.jsonl").read_bytes() == before
    assert not any("sk-" in p.read_text(errors="replace")
                   for d in (made, elsewhere) for p in d.rglob("*") if p.is_file())


def test_a_rerun_of_an_item_missing_an_answer_stops_and_says_so(tmp_path, capsys):
    out = tmp_path / "pp"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "32",
                 "--out", str(out)]) == 0
    item = next((out / "runs").iterdir())
    (item / "llm_cache.jsonl").write_text("")  # every answer gone
    capsys.readouterr()
    assert main(["rerun", str(item), "--cache-only", "--out", str(tmp_path / "again")]) == 1
    assert "stopped: cache-only run: no cached answer" in capsys.readouterr().err


def _simulbench(made):
    s = "scripted/simulbench"
    assert main(["simulbench-collect", "--user", s, "--simulator", s, "--judge", s,
                 "--every", "20", "--out", "collect"]) == 0
    assert main(["simulbench-extract", "collect", "--out", "scripts.jsonl"]) == 0
    return ["simulbench", "--scripts", "scripts.jsonl", "--simulator", s, "--judge", s,
            "--every", "4", "--out", "out"], made / "out", ["scripts.jsonl"]


R, SB, L = "scripted/refutebench", "scripted/simulbench", "scripted/stss-lang"
BENCHMARKS = {
    "refutebench": lambda made: (["refutebench", "--model", R, "--refuter", R, "--judge", R,
                                  "--every", "27", "--tasks", "mt", "--out", "out"],
                                 made / "out", []),
    "simulbench-collect": lambda made: (["simulbench-collect", "--user", SB, "--simulator", SB,
                                         "--judge", SB, "--every", "20", "--out", "out"],
                                        made / "out", []),
    "simulbench": _simulbench,
    "stss-lang": lambda made: (["stss-lang", "--model", L, "--judge", L, "--every", "20",
                                "--arch", "ga", "--out", "out"], made / "out" / "ga", []),
}


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_single_room_benchmark_item_records_absolute_paths_and_reruns_elsewhere(
        tmp_path, monkeypatch, name):
    made, elsewhere = made_and_elsewhere(tmp_path)
    monkeypatch.chdir(made)
    argv, home, files = BENCHMARKS[name](made)
    assert main(argv) == 0
    item = sorted((home / "runs").iterdir())[0]
    command = json.loads((item / "header.json").read_text())["config"]["benchmark_command"]
    assert command[command.index("--out") + 1] == str(made / "out")
    for file in files:
        assert str(made / file) in command
    monkeypatch.chdir(elsewhere)
    assert main(["rerun", str(item), "--cache-only", "--out", "again"]) == 0
    _same_item(elsewhere / "again", item)


def test_a_sweep_cell_s_items_record_absolute_paths(tmp_path, monkeypatch):
    """The cells' commands are made from the experiment file's flags (a settings file given
    relative to where the sweep runs): each item's header holds them absolute."""
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    settings = Path(__file__).resolve().parents[2] / "tasks" / "pingpong" / "settings.yaml"
    (tmp_path / "s.yaml").write_bytes(settings.read_bytes())
    (tmp_path / "experiment.yaml").write_text(yaml.safe_dump({
        "out": "exp", "models": {"plain": "scripted/pingpong"},
        "benchmarks": {"pingpong": {"flags": {"interrogator": "scripted/pingpong",
                                              "judge": ["scripted/pingpong"], "every": 32,
                                              "settings": "s.yaml"}}}}))
    assert main(["sweep", "experiment.yaml"]) == 0
    item = next((tmp_path / "exp" / "pingpong" / "plain" / "runs").iterdir())
    command = json.loads((item / "header.json").read_text())["config"]["benchmark_command"]
    assert str(tmp_path / "s.yaml") in command
    assert str(tmp_path / "exp" / "pingpong" / "plain") in command
    record = json.loads((tmp_path / "exp" / "sweep.json").read_text())
    assert record["cells"][0]["command"] == command  # what remakes the cell, as its items say


def test_the_recorded_command_makes_each_path_word_absolute_and_keeps_the_rest(tmp_path,
                                                                              monkeypatch):
    """Files and directories the command reads or writes, absolute; a reference to a built-in
    or a file (a template, an architecture, a world) as typed: the run's config and events
    name it so, and a rerun must name it alike."""
    from sandbox.app.cli import build_parser
    from sandbox.app.recorded import absolute_paths

    monkeypatch.chdir(tmp_path)
    argv = ["run", "t/task.yaml", "--arch", "a.yaml", "--models=m.yaml", "--model", "a",
            "--human", "Kenji Mori", "--human-ui", "script:s.yaml", "--prompts", "p",
            "--out", "r", "--quiet"]
    assert absolute_paths(build_parser(), argv) == [
        "run", "t/task.yaml", "--arch", "a.yaml", f"--models={tmp_path}/m.yaml", "--model",
        "a", "--human", "Kenji Mori", "--human-ui", f"script:{tmp_path}/s.yaml", "--prompts",
        str(tmp_path / "p"), "--out", str(tmp_path / "r"), "--quiet"]
    fork = ["fork", "r", "--at", "10:00", "--agent-arch", "Kenji Mori=my/arch.yaml",
            "--out", "/abs/new"]
    assert absolute_paths(build_parser(), fork) == [
        "fork", str(tmp_path / "r"), "--at", "10:00", "--agent-arch",
        "Kenji Mori=my/arch.yaml", "--out", "/abs/new"]
    short = ["pingpong", "--sett", "s.yaml", "--out", "o"]  # an option's prefix, as argparse
    assert absolute_paths(build_parser(), short) == [
        "pingpong", "--sett", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o")]
    board = ["pingpong-board", "a", "b", "--json", "x.json"]  # every positional of a list
    assert absolute_paths(build_parser(), board) == [
        "pingpong-board", str(tmp_path / "a"), str(tmp_path / "b"), "--json",
        str(tmp_path / "x.json")]


def test_a_config_naming_a_file_as_typed_is_the_one_naming_it_absolute():
    from sandbox.app.rerunning import same_config

    assert same_config({"arch": "mine/a.yaml", "m": {"mine/a.yaml": 1}},
                       {"arch": "/home/u/mine/a.yaml", "m": {"/home/u/mine/a.yaml": 1}})
    assert not same_config({"arch": "mine/a.yaml"}, {"arch": "/home/u/other/a.yaml"})
    assert not same_config({"arch": "ga"}, {"arch": "/home/u/ga"})  # a built-in, not a file
    assert not same_config({"n": 1}, {"n": 2})


def test_a_header_without_roles_names_its_models_by_their_ids():
    from datetime import datetime

    from sandbox.log import RunHeader

    old = RunHeader(scenario="stss", seed=0, start_time=datetime(2024, 2, 14),
                    models={"Maya": "local/smollm2-135m", "Kenji": "local/smollm2-135m"})
    assert old.model_names() == old.models


def test_a_run_of_a_template_file_named_as_typed_reruns_and_forks_from_anywhere(
        tmp_path, monkeypatch, capsys):
    """`sandbox run mytask.yaml` (a template file of one's own, named relative to where the
    command was typed): its config and events name it as typed, so the header records the
    directory too, and rerun and fork run from there: the same run from any directory. With
    that directory gone, one line says where the command was typed."""
    from tasks.stss import TEMPLATES_DIR

    made, elsewhere = made_and_elsewhere(tmp_path)
    (made / "mytask.yaml").write_bytes((TEMPLATES_DIR / "public_spring_tasting.yaml")
                                       .read_bytes())
    monkeypatch.chdir(made)
    assert main(["run", "mytask.yaml", *EPISODE[1:], "--model", "scripted/town",
                 "--out", "run"]) == 0
    assert json.loads((made / "run" / "header.json").read_text())["config"][
        "command_dir"] == str(made)
    monkeypatch.chdir(elsewhere)
    assert main(["rerun", str(made / "run"), "--cache-only", "--out", "again"]) == 0
    assert (elsewhere / "again" / "events.jsonl").read_bytes() == \
        (made / "run" / "events.jsonl").read_bytes()
    assert main(["fork", str(made / "run"), "--at", "16:00", "--whisper",
                 "Maya Lindqvist@16:00: the tasting moved to the garden", "--out",
                 "forked"]) == 0
    assert main(["rerun", "forked", "--cache-only", "--out", "forked-again"]) == 0
    assert (elsewhere / "forked-again" / "events.jsonl").read_bytes() == \
        (elsewhere / "forked" / "events.jsonl").read_bytes()
    capsys.readouterr()
    moved = tmp_path / "moved"
    made.rename(moved)
    assert main(["rerun", str(moved / "run"), "--cache-only", "--out", "lost"]) == 2
    err = capsys.readouterr().err
    assert f"the command was typed in {made}, which is not there now" in err
    assert len(err.strip().splitlines()) == 1
