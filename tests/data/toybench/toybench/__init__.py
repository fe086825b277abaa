"""A benchmark from outside the repository: one package, installed by an entry point in the
group `sandbox.benchmarks` (tests/sandbox/test_benchmark_kit.py writes its dist-info), with one
role, one judge and one metric. It runs, resumes, is re-judged and appears on a board like
PingPong, and nothing of the sandbox names it.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean

from pydantic import BaseModel

from agents.chat import ChatAgent, ChatPersona, ChatTurn
from evaluation.kit import (
    BoardReport,
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
)
from sandbox.app.plugins import Benchmark, Board, Items, Judging, Plugin
from sandbox.llm import LLMRequest
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


JUDGE = judge_spec(Path(__file__).parent / "prompts")

TOY = Benchmark(
    name="toy", title="toy politeness benchmark",
    roles=[Role("speaker", Sampling(temperature=0.0, top_p=1.0, max_tokens=40), ANSWER_TAG,
                "model under test")],
    under_test="speaker", items=Items(load_questions),
    scenario=lambda question, item_id, cast, options: ToyScenario(question, cast),
    judging=Judging([JUDGE], Sampling(temperature=0.0, top_p=1.0, max_tokens=8)),
    board=Board(lambda dirs, **kwargs: toy_board(dirs, JUDGE, **kwargs)),
    example="sandbox toy --speaker MODEL --judge MODEL --out runs/toy")

PLUGIN = Plugin("toy", "toy politeness benchmark (a third-party plug-in)", benchmarks=[TOY])
