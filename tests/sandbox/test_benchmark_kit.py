"""A new benchmark is a small package: this one is defined in this file alone (one role, one
judge, one metric) and runs, resumes, is re-judged and appears on a board like PingPong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from statistics import mean

import pytest
from pydantic import BaseModel

from agents.chat import ChatAgent, ChatPersona, ChatTurn
from evaluation.kit import (
    Column,
    JudgeSpec,
    Ledger,
    Plot,
    PlotPoint,
    Verdict,
    accounting_markdown,
    bootstrap_ci,
    check_judges,
    markdown_table,
    read_bench_dir,
    read_dialogue,
)
from sandbox.app.commands.benchmark import register_benchmark
from sandbox.app.suites.benchmark import Benchmark, BoardReport
from sandbox.judgments import load_judgments
from sandbox.llm import SCRIPTS, LLMRequest, ScriptedBackend
from sandbox.log import load_run
from tasks.kit import Cast, DialogueScenario, ItemSet, Role, Sampling, name_id

ANSWER_TAG = "toy.answer"
JUDGE_TAG = "toy.judge"
QUESTIONS = ["Could you pass the salt?", "Where is the station?", "What time is it?"]


# -- items: three questions, ids from their text ----------------------------------------------
def load_questions(path: Path | None, options: dict) -> ItemSet[str]:
    questions = json.loads(path.read_text()) if path else QUESTIONS
    return ItemSet(items=questions, ids=[name_id(q) for q in questions],
                   origins=[f"questions.{i}" for i in range(len(questions))],
                   source=str(path or ""), digest=str(hash(tuple(questions))))


# -- the dialogue: a fixed asker (no model), then the role under test answers -------------------
class Asker:
    def __init__(self, question: str):
        self.name, self.question = "Asker", question

    def speak(self, engine, transcript, partners, place, situation, max_turns):
        yield engine.timeout(0)
        return ChatTurn(utterance=self.question)


class Answerer(ChatAgent):
    def speak(self, engine, transcript, partners, place, situation, max_turns):
        request = LLMRequest(messages=self.messages(transcript, partners, place, situation,
                                                    max_turns),
                             tag=ANSWER_TAG, agent=self.name, temperature=self.temperature,
                             max_tokens=self.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        return ChatTurn(utterance=completion.text.strip() or "...", end_conversation=True)


class ToyScenario(DialogueScenario):
    benchmark = name = "toy"
    max_turns = 2

    def __init__(self, question: str, cast: Cast):
        super().__init__(cast)
        self.question = question

    def item_config(self):
        return {"question": self.question}

    def speakers(self):
        sampling = self.cast.sampling["speaker"]
        return [Asker(self.question),
                Answerer(ChatPersona(name="Speaker", description="a polite person"),
                         llm=self.cast.llm("speaker"), temperature=sampling.temperature,
                         max_tokens=sampling.max_tokens)]


# -- the judge: free text "yes" or "no", parsed; a declared fallback ---------------------------
class Polite(BaseModel):
    polite: bool


def parse_yes_no(text: str) -> Polite:
    word = text.strip().lower()
    if word.startswith("yes"):
        return Polite(polite=True)
    if word.startswith("no"):
        return Polite(polite=False)
    raise ValueError("neither yes nor no")


def judge_spec(prompts: Path) -> JudgeSpec:
    return JudgeSpec(
        name="polite", tag=JUDGE_TAG, templates=("system.j2", "user.j2"), package=prompts,
        context=lambda d: {"question": d.config["question"],
                           "answer": d.said_by("Speaker")[0].text},
        parser=parse_yes_no, fallback=lambda d: Polite(polite=False),
        verdict=lambda answer, d: Verdict(scores={"polite": float(answer.polite)}))


# -- the metric and the board: share of polite answers, with a bootstrap interval; the kit's
# ledger accounts for every selected item (finished, judged, or why not) ---------------------
def toy_board(dirs, judge: JudgeSpec, judges=None, seed=0, resamples=1000) -> BoardReport:
    rows, ledgers = [], []
    benches = [read_bench_dir(path, "toy.json", "sandbox toy") for path in dirs]
    check_judges(benches, judges)
    for found in benches:
        ledger = Ledger(found.label)
        values = [j.scores["polite"] for run in ledger.read_runs(found, "toy", only=judges)
                  for j in ledger.judgments_of(run, [judge], found.judges, judges)["polite"]
                  if j.usable]
        score = mean(values) if values else None
        ci = bootstrap_ci(values, seed=seed, resamples=resamples) if values else None
        rows.append({"label": found.label, "polite": score, "ci": ci, "n": len(values)})
        ledgers.append(ledger)
    columns = [Column("label", "Speaker", None, "---"), Column("polite", "Polite"),
               Column("n", "Judged", None)]
    lines = markdown_table(columns, rows) + [""] + accounting_markdown(ledgers)
    return BoardReport(markdown="\n".join(lines) + "\n",
                       data={"rows": rows, "accounting": [x.data() for x in ledgers]},
                       plot=Plot("toy", "polite", [PlotPoint(r["label"], r["polite"], r["ci"])
                                                   for r in rows]))


def toy_benchmark(prompts: Path) -> Benchmark:
    judge = judge_spec(prompts)
    return Benchmark(
        name="toy", title="toy politeness benchmark",
        roles=[Role("speaker", Sampling(temperature=0.0, top_p=1.0, max_tokens=40), ANSWER_TAG,
                    "model under test")],
        under_test="speaker", load_items=load_questions,
        scenario=lambda question, item_id, cast, options: ToyScenario(question, cast),
        judges=[judge], judge_sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=8),
        board=lambda dirs, **kwargs: toy_board(dirs, judge, **kwargs))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "system.j2").write_text("Answer yes or no: is the answer polite?")
    (prompts / "user.j2").write_text("Question: {{ question }}\nAnswer: {{ answer }}")
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

    import argparse

    parser = argparse.ArgumentParser(prog="sandbox")
    sub = parser.add_subparsers(dest="command", required=True)
    register_benchmark(sub, toy_benchmark(prompts), example="sandbox toy --out runs/toy")

    def cli(*argv) -> int:
        args = parser.parse_args(argv)
        return args.func(args)

    return cli, calls


def test_the_toy_benchmark_runs_resumes_and_is_judged_by_its_own_rules(tmp_path, toy, capsys):
    cli, calls = toy
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
    (tmp_path / "prompts" / "system.j2").write_text("Is the answer polite? Say yes or no.")
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(out), "--rejudge") == 0
    assert calls == {"speaker": 3, "judge": 6}
    assert "judgments made 3 (0 fell back), skipped 0" in capsys.readouterr().out


def test_the_toy_board_compares_configurations_with_a_plot(tmp_path, toy, capsys):
    cli, calls = toy
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


def test_another_configuration_in_the_same_directory_is_one_line_exit_2(tmp_path, toy, capsys):
    cli, _ = toy
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(tmp_path / "a")) == 0
    from sandbox.errors import UserError

    with pytest.raises(UserError, match="speaker 'scripted/toy-kind', not 'scripted/toy-rude'"):
        cli("toy", "--speaker", "scripted/toy-rude", "--judge", "scripted/toy-judge",
            "--out", str(tmp_path / "a"))


def test_one_broken_item_is_reported_and_the_others_finish(tmp_path, toy, capsys,
                                                           monkeypatch):
    cli, calls = toy

    def breaks_on_the_station(request):
        if "station" in request.messages[-1].content:
            raise RuntimeError("the backend fell over")
        return "Certainly, please."

    monkeypatch.setitem(SCRIPTS, "toy-flaky", lambda: ScriptedBackend(
        {ANSWER_TAG: breaks_on_the_station}, model_id="scripted/toy-flaky"))
    out = tmp_path / "flaky"
    assert cli("toy", "--speaker", "scripted/toy-flaky", "--judge", "scripted/toy-judge",
               "--out", str(out)) == 1
    printed = capsys.readouterr().out
    station = name_id(QUESTIONS[1])
    assert f"failed: {station}: RuntimeError: the backend fell over" in printed
    assert "1 of 3 items failed" in printed
    assert "| scripted/toy-flaky | 1.00 | 2 |" in printed  # the other two, judged
    assert load_run(out / "runs" / station).result.status == "failed"  # kept, with why


def test_every_selected_item_is_accounted_for_and_the_next_run_makes_it_good(tmp_path, toy,
                                                                            capsys):
    cli, calls = toy
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
    cli, calls = toy
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


def test_an_unknown_judge_filter_is_one_line_naming_the_judges_present(tmp_path, toy):
    cli, _ = toy
    assert cli("toy", "--speaker", "scripted/toy-kind", "--judge", "scripted/toy-judge",
               "--out", str(tmp_path / "a")) == 0
    from sandbox.errors import UserError

    with pytest.raises(UserError, match=r"^no judge nobody/none in this directory; judges "
                                        r"present: scripted/toy-judge$"):
        cli("toy-board", str(tmp_path / "a"), "--judge", "nobody/none")
