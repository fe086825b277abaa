"""A new benchmark is a small package installed beside the sandbox: tests/data/toybench (one
role, one judge, one metric) declares itself by an entry point, and the real command line makes
`sandbox toy` and `sandbox toy-board` from it; it runs, resumes, is re-judged and appears on a
board like PingPong."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.kit import read_dialogue
from sandbox.judgments import load_judgments
from sandbox.llm import SCRIPTS, ScriptedBackend
from sandbox.log import load_run
from tasks.kit import name_id

ANSWER_TAG = "toy.answer"
JUDGE_TAG = "toy.judge"
QUESTIONS = ["Could you pass the salt?", "Where is the station?", "What time is it?"]


TOYBENCH = Path(__file__).resolve().parents[1] / "data" / "toybench"


def install_toybench(site: Path, value: str = "toybench:PLUGIN") -> Path:
    """The toy package copied into `site` with a dist-info whose entry point declares it, as
    pip would install a third-party benchmark; returns the package's folder."""
    shutil.copytree(TOYBENCH / "toybench", site / "toybench")
    info = site / "toybench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[sandbox.benchmarks]\ntoy = {value}\n")
    return site / "toybench"


def forget_toys() -> None:
    """No toy module kept from another test's site, and the plug-ins found afresh, as in a new
    process. Popped for good, not through monkeypatch: its undo would put a module imported
    during the test back into sys.modules, and the next test would run that test's toy (its
    prompts in a deleted directory) instead of its own."""
    from sandbox.app.plugins import installed

    for name in [n for n in sys.modules if n == "toybench" or n.startswith("toybench.")]:
        del sys.modules[name]
    installed.cache_clear()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    from sandbox.app.cli import main

    site = tmp_path / "site"
    prompts = install_toybench(site) / "prompts"
    monkeypatch.syspath_prepend(str(site))
    forget_toys()  # found again, with this test's toy
    calls = {"speaker": 0, "judge": 0}

    def speaker(polite: bool):
        def answer(request):
            calls["speaker"] += 1
            return "Certainly, please." if polite else "No."
        return answer

    def judge(request):
        calls["judge"] += 1
        return "yes" if "please" in request.messages[-1].content else "no"

    monkeypatch.setitem(SCRIPTS, "toy-kind", lambda: ScriptedBackend(
        {ANSWER_TAG: speaker(True)}, model_id="scripted/toy-kind"))
    monkeypatch.setitem(SCRIPTS, "toy-rude", lambda: ScriptedBackend(
        {ANSWER_TAG: speaker(False)}, model_id="scripted/toy-rude"))
    monkeypatch.setitem(SCRIPTS, "toy-judge", lambda: ScriptedBackend(
        {JUDGE_TAG: judge}, model_id="scripted/toy-judge"))
    monkeypatch.setitem(SCRIPTS, "toy-babbler", lambda: ScriptedBackend(
        {JUDGE_TAG: lambda request: "maybe?"}, model_id="scripted/toy-babbler"))

    def cli(*argv) -> int:
        return main(list(argv))

    yield cli, calls, prompts
    forget_toys()  # the next test sees what is really installed


def test_the_toy_benchmark_runs_resumes_and_is_judged_by_its_own_rules(tmp_path, toy, capsys):
    cli, calls, prompts = toy
    out = tmp_path / "kind"
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(out)) == 0
    assert calls == {"speaker": 3, "judge": 3}
    printed = capsys.readouterr().out
    assert "dialogues run 3, skipped 0; judgments made 3" in printed
    assert "| scripted/toy-kind | 1.00 | 3 |" in printed
    run_dir = out / "runs" / name_id(QUESTIONS[0])
    run = load_run(run_dir)  # a standard run: header with the role's model and sampling
    assert run.header.models == {"speaker": "scripted/toy-kind"}
    assert run.header.config["sampling"]["speaker"]["max_tokens"] == 40
    assert [u.agent for u in read_dialogue(run_dir, "toy").utterances] == ["Asker", "Speaker"]
    tags = [json.loads(line)["tag"] for line in (run_dir / "calls.jsonl").read_text()
            .splitlines()]
    assert tags == [ANSWER_TAG, JUDGE_TAG]  # the judge's call is accounted like the role's

    # resumed: nothing runs again; a new judge model calls no speaker; a babbling judge falls
    # back, counted and left out of the mean
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--judge", "scripted/toy-babbler", "--out", str(out)) == 0
    assert calls == {"speaker": 3, "judge": 3}
    printed = capsys.readouterr().out
    assert "dialogues run 0, skipped 3; judgments made 3 (3 fell back), skipped 3" in printed
    assert {j.status for j in load_judgments(run_dir)} == {"ok", "fallback"}
    assert "| scripted/toy-kind | 1.00 | 3 |" in printed

    # --rejudge with a changed judge prompt asks again without running a dialogue (the same
    # prompt would be answered from the runs' caches)
    (prompts / "system.j2").write_text("Is the answer polite? Say yes or no.")
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(out), "--rejudge") == 0
    assert calls == {"speaker": 3, "judge": 6}
    assert "judgments made 3 (0 fell back), skipped 0" in capsys.readouterr().out


def test_the_toy_board_compares_configurations_with_a_plot(tmp_path, toy, capsys):
    cli, calls, prompts = toy
    for model, out in (("scripted/toy-kind", "kind"), ("scripted/toy-rude", "rude")):
        assert cli("toy", "--speaker", model, "--judge", "scripted/toy-judge", "--out",
                   str(tmp_path / out)) == 0
    capsys.readouterr()
    assert cli("toy-board", str(tmp_path / "kind"), str(tmp_path / "rude"), "--json",
               str(tmp_path / "b.json"), "--plot", str(tmp_path / "b.png")) == 0
    table = capsys.readouterr().out
    assert "| scripted/toy-kind | 1.00 | 3 |" in table
    assert "| scripted/toy-rude | 0.00 | 3 |" in table
    assert "| scripted/toy-kind | judge | 3 |" in table  # calls and tokens per role
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["usage"]["scripted/toy-rude"]["speaker"]["calls"] == 3
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_boards_usage_names_the_calls_it_could_not_count(tmp_path, toy, capsys):
    """A run's calls.jsonl cut mid-line by a kill, another's gone: the calls and tokens per role
    are what could be read, and the board says what it left out instead of a clean figure."""
    cli, _, _ = toy
    out = tmp_path / "kind"
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(out)) == 0
    first, second, _ = (out / "runs" / name_id(q) for q in QUESTIONS)
    calls = first / "calls.jsonl"
    calls.write_text(calls.read_text()[:-20])  # the judge's line cut short
    (second / "calls.jsonl").unlink()
    capsys.readouterr()
    assert cli("toy-board", str(out), "--json", str(tmp_path / "b.json")) == 0
    table = capsys.readouterr().out
    assert "| scripted/toy-kind | speaker | 2 |" in table  # the third run's, and the first's
    assert "Not counted above (2 unreadable)" in table
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["usage"]["scripted/toy-kind"]["judge"]["calls"] == 1
    assert sorted(data["usage_uncounted"]) == [
        f"{first.name}/calls.jsonl line 2: truncated last line",
        f"{second.name}/calls.jsonl: missing"]


def test_another_configuration_in_the_same_directory_is_one_line_exit_2(tmp_path, toy, capsys):
    cli, _, _ = toy
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(tmp_path / "a")) == 0
    capsys.readouterr()
    assert cli("toy", "--speaker", "scripted/toy-rude", "--judge", "scripted/toy-judge",
               "--out", str(tmp_path / "a")) == 2
    err = capsys.readouterr().err
    assert err.startswith("sandbox toy: error: ") and err.count("\n") == 1
    assert "speaker 'scripted/toy-kind', not 'scripted/toy-rude'" in err


def test_one_broken_item_is_reported_and_the_others_finish(tmp_path, toy, capsys,
                                                           monkeypatch):
    cli, calls, prompts = toy

    def breaks_on_the_station(request):
        if "station" in request.messages[-1].content:
            raise RuntimeError("the backend fell over")
        return "Certainly, please."

    monkeypatch.setitem(SCRIPTS, "toy-flaky", lambda: ScriptedBackend(
        {ANSWER_TAG: breaks_on_the_station}, model_id="scripted/toy-flaky"))
    out = tmp_path / "flaky"
    assert cli("toy", "--speaker", "scripted/toy-flaky", "--judge", "scripted/toy-judge",
               "--out", str(out)) == 1
    said = capsys.readouterr()
    printed = said.out
    station = name_id(QUESTIONS[1])
    assert f"failed: {station}: RuntimeError: the backend fell over" in said.err
    assert "1 of 3 items failed" in said.err
    assert "| scripted/toy-flaky | 1.00 | 2 |" in printed  # the other two, judged
    assert load_run(out / "runs" / station).result.status == "failed"  # kept, with why


def test_every_selected_item_is_accounted_for_and_the_next_run_makes_it_good(tmp_path, toy,
                                                                            capsys):
    cli, calls, prompts = toy
    out = tmp_path / "kind"
    run = ("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge", "--out",
           str(out))
    assert cli(*run) == 0
    salt, station, time = (out / "runs" / name_id(q) for q in QUESTIONS)
    judgment = "polite__scripted_toy-judge.json"
    shutil.rmtree(salt)  # a run directory deleted
    (station / "judgments" / judgment).write_text("{not json")  # a judgment made unreadable
    events = (time / "events.jsonl").read_text().splitlines(keepends=True)
    (time / "events.jsonl").write_text("".join(events[:-2]))  # events cut after judging
    capsys.readouterr()

    assert cli("toy-board", str(out), "--json", str(tmp_path / "b.json")) == 0
    board = capsys.readouterr().out
    assert "| scripted/toy-kind | - | 0 |" in board
    assert "- scripted/toy-kind: 3 selected: 1 finished, 1 unfinished, 1 missing; judgments: " \
        "0 usable, 1 stale, 1 unreadable" in board
    assert f"  - missing (no run directory): {salt.name}" in board
    assert f"  - unfinished (events.jsonl holds {len(events) - 2} of the {len(events)} events " \
        f"its run wrote): {time.name}" in board
    assert f"  - stale judgment (its run is not finished): {time.name} ({judgment})" in board
    assert f"  - unreadable judgment (not JSON (Expecting property name enclosed in double " \
        f"quotes)): {station.name} ({judgment})" in board
    named = json.loads((tmp_path / "b.json").read_text())["accounting"][0]["named"]
    assert len(named) == 4

    # the next run plays the missing and the cut dialogue again and asks the three judgments
    # again (the cut dialogue's answers come from its run's cache: only the deleted one calls)
    assert cli(*run) == 0
    printed = capsys.readouterr().out
    assert "dialogues run 2, skipped 1; judgments made 3 (0 fell back), skipped 0" in printed
    assert calls == {"speaker": 4, "judge": 4}
    assert "3 selected: 3 finished; judgments: 3 usable\n" in printed


def test_a_judgment_of_other_words_than_the_run_holds_is_stale_and_asked_again(tmp_path, toy,
                                                                                capsys):
    cli, calls, prompts = toy
    out = tmp_path / "kind"
    run = ("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge", "--out",
           str(out))
    assert cli(*run) == 0
    salt = out / "runs" / name_id(QUESTIONS[0])
    events = salt / "events.jsonl"
    events.write_text(events.read_text().replace("Certainly, please.", "No."))
    capsys.readouterr()
    assert cli("toy-board", str(out)) == 0
    assert f"  - stale judgment (judged another dialogue than the one in the run now (its " \
           f"events changed since)): {salt.name}" in capsys.readouterr().out
    assert cli(*run) == 0
    assert calls == {"speaker": 3, "judge": 4}  # the judgment only, not the dialogue
    assert "| scripted/toy-kind | 0.67 | 3 |" in capsys.readouterr().out


def test_an_unknown_judge_filter_is_one_line_naming_the_judges_present(tmp_path, toy, capsys):
    cli, _, _ = toy
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(tmp_path / "a")) == 0
    capsys.readouterr()
    assert cli("toy-board", str(tmp_path / "a"), "--judge", "nobody/none") == 2
    assert capsys.readouterr().err == "sandbox toy-board: error: no judge nobody/none in this " \
        "directory; judges present: scripted/toy-judge\n"


@pytest.fixture
def sandbox_with(monkeypatch, capsys):
    """`sandbox ARGV` as the installed command runs it, with `site` on the path (where a toy
    is installed), in this process: the plug-ins found afresh (no toy module kept from another
    test), then what the command printed and its exit status, argparse's and an unloadable
    set of plug-ins' SystemExit included."""
    from sandbox.app.cli import main

    def run(site: Path, *argv: str) -> subprocess.CompletedProcess:
        monkeypatch.syspath_prepend(str(site))
        forget_toys()
        capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)  # as the interpreter says it
        printed = capsys.readouterr()
        return subprocess.CompletedProcess(argv, code or 0, printed.out, printed.err)

    yield run
    forget_toys()  # the next test sees what is really installed


def test_an_installed_plugin_is_listed_with_its_commands_and_its_package(tmp_path,
                                                                         sandbox_with):
    install_toybench(tmp_path)
    done = sandbox_with(tmp_path, "list", "benchmarks")
    assert done.returncode == 0, done.stderr
    assert "| toy | toy politeness benchmark (a third-party plug-in) | toybench | sandbox toy, " \
        "sandbox toy-board |" in done.stdout
    assert "| pingpong |" in done.stdout  # the repository's own, beside it
    help_text = sandbox_with(tmp_path, "--help").stdout
    assert "toy-board" in help_text


def test_a_plugin_that_does_not_load_is_said_and_the_others_still_run(tmp_path, sandbox_with):
    install_toybench(tmp_path, value="toybench.missing:PLUGIN")
    listed = sandbox_with(tmp_path, "list", "benchmarks")
    assert listed.returncode == 1
    assert "| toy | **did not load**: ModuleNotFoundError: No module named " \
        "'toybench.missing' | toybench |  |" in listed.stdout
    other = sandbox_with(tmp_path, "pingpong-board", "--help")
    assert other.returncode == 0 and "usage: sandbox pingpong-board" in other.stdout
    assert "warning: benchmark plug-in toy (toybench) did not load" in other.stderr


def test_a_plugin_that_takes_an_installed_command_name_stops_with_both_named(tmp_path,
                                                                              sandbox_with):
    install_toybench(tmp_path, value="toybench.clash:PLUGIN")
    (tmp_path / "toybench" / "clash.py").write_text(
        "from dataclasses import replace\n"
        "from sandbox.app.plugins import Plugin\n"
        "from toybench import TOY\n"
        "PLUGIN = Plugin('toy', 'a toy named like PingPong', "
        "benchmarks=[replace(TOY, name='pingpong')])\n")
    done = sandbox_with(tmp_path, "list", "benchmarks")
    assert done.returncode == 1
    assert "benchmark plug-in toy (toybench)" in done.stderr
    assert "conflicting subparser: pingpong" in done.stderr
