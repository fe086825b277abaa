"""SimulBench on the kit: two kit benchmarks and the steps between them.

    COLLECT      `sandbox simulbench-collect`: task x 3 dialogues of a user agent and a
                 simulator (4 turns each), each judged for its first challenging turn
    extract_dir  `sandbox simulbench-extract`: the collected dialogues and their challenge
                 judgments -> test scripts in the published format
    SIMULBENCH   `sandbox simulbench`: every script answered by the model under test, rated
                 1-10 by each judge; `sandbox simulbench-board` compares configurations
    run_pairwise `sandbox simulbench-pairwise`: answer directories compared two by two (every
                 pair, or each against a reference) by a judge in both orders (Table 1)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from evaluation.kit import (
    JUDGE_FORMATS,
    Ledger,
    check_judges,
    read_bench_dir,
    read_dialogue,
)
from evaluation.simulbench import (
    CHALLENGE,
    CHALLENGE_JUDGE,
    SCORE_JUDGE,
    answer_of,
    board_markdown,
    board_plot,
    build_board,
    challenge_judge,
    score_judge,
)
from evaluation.simulbench.board import collection_board
from evaluation.simulbench.pairwise import PairResult, PairwiseReport, judge_pair
from sandbox.files import FileFormatError
from sandbox.llm import AccountingLLM, CallLog
from sandbox.log import CACHE, CALLS, load_run
from sandbox.storage import write_atomic
from tasks.kit import Role, Sampling
from tasks.simulbench import (
    JUDGE_SAMPLING,
    SIMULATOR_SAMPLING,
    SUBSETS,
    USER_SAMPLING,
    Collected,
    Message,
    Script,
    collection_items,
    extract,
    load_scripts,
    load_tasks,
    script_items,
    write_scripts,
)
from tasks.simulbench.scenario import SIMULATOR_TAG, AnswerScenario, CollectScenario
from tasks.simulbench.user_agent import STRATEGIES, USER_TAG

from ..plugins import Benchmark, Board, BoardReport, Items, Judging, Option
from .benchmark import BenchmarkMismatch

CHALLENGE_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=200)


def judge_format(what: str) -> dict[str, Option]:
    return {"judge_format": Option(
        "text", f"how the {what} answers: text (the paper's: reasons, then the verdict in "
        "double brackets) or json (a schema-bound JSON object, which a local model's grammar "
        "cannot leave: for small judges that never write the brackets)", JUDGE_FORMATS)}


# -- stage 1: collection -------------------------------------------------------------------------
TURN_LABELS = ("ours", "original")


def _collect_items(path: Path | None, options: dict[str, Any]):
    if options.get("turn_labels", "ours") not in TURN_LABELS:
        raise FileFormatError("--turn-labels", f"{options['turn_labels']!r} is neither 'ours' "
                                               "nor 'original'")
    return collection_items(load_tasks(path), source=str(path or ""))


def _collect_board(dirs, judges=None, seed: int = 0, resamples: int = 1000) -> BoardReport:
    rows, ledgers = [], []
    benches = [read_bench_dir(p, COLLECT.manifest_file, "sandbox simulbench-collect")
               for p in dirs]
    check_judges(benches, judges)
    for path, found in zip(dirs, benches, strict=True):
        summary = collected(path, judge=(judges or [None])[0])
        ledgers.append(summary.ledger)
        scripts = extract(summary.dialogues)
        count = {c: sum(s.category == c for s in scripts)
                 for c in ("lastonly", "firstchan", "subseqchan")}
        rows.append({"label": found.label, "dialogues": len(summary.dialogues),
                     "challenged": sum(d.challenging_turn > 0 for d in summary.dialogues),
                     "fallbacks": summary.fallbacks, "unjudged": len(summary.unjudged),
                     "scripts": len(scripts), **count,
                     "strategies": strategy_counts(summary.strategies),
                     "strategy_counts": dict(summary.strategies),
                     "accounting": summary.ledger.data()})
    markdown, plot = collection_board(rows, ledgers)
    return BoardReport(markdown=markdown, data={"rows": rows}, plot=plot)


COLLECT = Benchmark(
    name="simulbench-collect", title="SimulBench dialogue collection",
    roles=[Role("user", USER_SAMPLING, USER_TAG, "the user agent's model", "per request"),
           Role("simulator", SIMULATOR_SAMPLING, SIMULATOR_TAG,
                "the simulator that answers the user agent", "per answer")],
    under_test="simulator",
    items=Items(_collect_items, flag="tasks", noun="dialogues",
                help="simulation tasks: our YAML or the public simulbench_tasks.jsonl "
                     "[default: our 40 tasks]"),
    scenario=lambda item, item_id, cast, options: CollectScenario(
        item[0], item[1], cast, turn_labels=options.get("turn_labels", "ours")),
    judging=Judging([CHALLENGE_JUDGE], CHALLENGE_SAMPLING,
                    options=judge_format("challenging-turn judge"),
                    choose=lambda chosen: [challenge_judge(chosen["judge_format"])]),
    board=Board(_collect_board, example="sandbox simulbench-collect-board runs/sb-collect"),
    options={"turn_labels": Option("ours", "how the challenge judge numbers turns: ours (1..4, "
                                           "answer 0..4) or original (shown 0..3, answer asked "
                                           "in 1..8 with 0 for none; above 4 is re-asked)")},
    noun="dialogues",
    example="sandbox simulbench-collect --user local/smollm2-135m --simulator "
            "local/smollm2-135m --judge local/smollm2-135m --judge-format json --every 40 "
            "--user-max-tokens 60 --simulator-max-tokens 80 --out runs/sb-collect; then sandbox "
            "simulbench-extract runs/sb-collect --out runs/scripts.jsonl")


# -- stage 2: extraction -------------------------------------------------------------------------
@dataclass
class CollectedDir:
    """The finished, judged dialogues of a collection directory; `ledger` accounts for every
    dialogue its manifest selected (evaluation.kit.Ledger: unfinished, missing, stale or
    unreadable judgments, named)."""

    dialogues: list[Collected] = field(default_factory=list)
    fallbacks: int = 0  # judged, but the judge gave no usable turn: taken as no challenge
    unjudged: list[str] = field(default_factory=list)  # finished, but no challenge judgment
    strategies: Counter = field(default_factory=Counter)  # the user agent's, over the dialogues
    ledger: Ledger | None = None

    @property
    def left_out(self) -> int:
        """Selected dialogues that give no script: not finished, not read, or not judged."""
        runs = self.ledger.runs if self.ledger else Counter()
        return sum(n for state, n in runs.items() if state != "finished") + len(self.unjudged)


def strategy_counts(counts: Counter) -> str:
    """"next_step 5, new_request 3, ..." in the paper's order, then any other reading."""
    order = [*STRATEGIES, "unnamed", "fallback"]
    return ", ".join(f"{name} {counts[name]}" for name in order if counts[name]) or "none"


def collected(path: Path | str, judge: str | None = None) -> CollectedDir:
    """Read a collection directory; `judge` picks one judge model's verdict (default: the first
    usable one found)."""
    from tasks.simulbench import SimTask

    found = read_bench_dir(path, COLLECT.manifest_file, "sandbox simulbench-collect")
    only = [judge] if judge else None
    out = CollectedDir(ledger=Ledger(found.label))
    for run in out.ledger.read_runs(found, COLLECT.name, only=only):
        judgments = out.ledger.judgments_of(run, [CHALLENGE_JUDGE], found.judges,
                                            only)[CHALLENGE]
        usable = [j for j in judgments if j.usable]
        if not judgments:
            out.unjudged.append(run.item)
            continue
        if not usable:
            out.fallbacks += 1
        turn = int(usable[0].scores["challenging_turn"]) if usable else 0
        messages = [Message(role="user" if i % 2 == 0 else "assistant", content=u.text)
                    for i, u in enumerate(run.dialogue.utterances)]
        out.dialogues.append(Collected(task=SimTask(**run.dialogue.config["task"]),
                                       index=int(run.dialogue.config["dialogue"]),
                                       messages=messages, challenging_turn=turn))
        out.strategies.update(e.strategy for e in load_run(run.run_dir).of_kind(
            "user_request_written"))
    return out


def extract_dir(path: Path | str, out: Path | str, judge: str | None = None
                ) -> tuple[list[Script], CollectedDir]:
    """Write the scripts of a collection directory to `out` (published format)."""
    summary = collected(path, judge)
    scripts = extract(summary.dialogues)
    write_scripts(scripts, out)
    return scripts, summary


# -- stages 3-4: answering and the 1-10 judge ----------------------------------------------------
def _script_items(path: Path | None, options: dict[str, Any]):
    if path is None:
        raise FileFormatError("--scripts", "give a test-script file: the published "
                                           "simulbench_all.jsonl or one written by "
                                           "`sandbox simulbench-extract`")
    subset = options.get("subset", "all")
    if subset not in SUBSETS:  # before any file is read: the option is what is wrong
        raise FileFormatError("--subset", f"unknown subset {subset!r}; one of "
                                          f"{', '.join(SUBSETS)}")
    tasks = load_tasks(options["tasks"]) if options.get("tasks") else None
    return script_items(load_scripts(path, tasks), source=str(path), subset=subset)


def request_types(*tasks_files: str | None) -> dict[str, str]:
    """source_id -> request_type, from our built-in tasks and the task files given."""
    found = {t.id: t.request_type for t in load_tasks(None)}
    for tasks_file in tasks_files:
        if tasks_file:
            found.update({t.id: t.request_type for t in load_tasks(tasks_file)})
    return found


def run_task_files(dirs) -> list[str]:
    """The task files the answer directories were run with (`--tasks`, in their manifests),
    those still where they were."""
    files = []
    for path in dirs:
        found = read_bench_dir(path, SIMULBENCH.manifest_file, "sandbox simulbench")
        options = found.manifest.get("options") or {}
        if options.get("tasks") and Path(options["tasks"]).is_file():
            files.append(options["tasks"])
    return list(dict.fromkeys(files))


def _board(dirs, judges=None, seed: int = 0, resamples: int = 1000,
           tasks: str | None = None) -> BoardReport:
    # Without --tasks, each directory's own task file gives its scripts' request types.
    files = [tasks] if tasks else run_task_files(dirs)
    board = build_board(dirs, judges=judges, seed=seed, resamples=resamples,
                        request_types=request_types(*files))
    return BoardReport(markdown=board_markdown(board), data=board, plot=board_plot(board))


SIMULBENCH = Benchmark(
    name="simulbench", title="SimulBench simulation benchmark",
    roles=[Role("simulator", SIMULATOR_SAMPLING, SIMULATOR_TAG, "the model under test",
                "per answer")],
    under_test="simulator",
    items=Items(_script_items, flag="scripts", noun="scripts",
                help="test scripts in the published format (simulbench_all.jsonl, or written "
                     "by `sandbox simulbench-extract`); required"),
    scenario=lambda script, item_id, cast, options: AnswerScenario(script, cast),
    judging=Judging([SCORE_JUDGE], JUDGE_SAMPLING, options=judge_format("1-10 judge"),
                    choose=lambda chosen: [score_judge(chosen["judge_format"])]),
    board=Board(_board, options={"tasks": {
        "default": None, "help": "a task file giving each script's request_type for the "
                                 "by-request-type table [default: the one each directory was "
                                 "run with, and our tasks]"}},
        example="sandbox simulbench-board runs/sb-smol runs/sb-other --plot board.png"),
    options={"subset": Option("all", "which scripts: all, hard, lastonly, firstchan, "
                                     "subseqchan, stateful, stateless"),
             "tasks": Option("", "a task file; every script's source_id must name one of its "
                                 "tasks")},
    noun="answers",
    example="sandbox simulbench --scripts runs/scripts.jsonl --simulator local/smollm2-135m "
            "--judge local/smollm2-135m --judge-format json --simulator-max-tokens 80 "
            "--judge-max-tokens 120 --every 2 --out runs/sb-smol (or --scripts "
            "simulbench_all.jsonl --subset hard for the published set)")


# -- the pairwise comparison ---------------------------------------------------------------------
PAIRWISE = "pairwise"


def plan_pairs(dirs: Sequence[Path], reference: Path | None = None) -> list[tuple[Path, Path]]:
    """The pairs to compare: each directory against `reference` (the directory's model first,
    so the rates are its rates over the reference), or every pair of `dirs` in the order given
    (the earlier one first), the paper's Table 1."""
    if reference is not None:
        return [(d, reference) for d in dirs]
    return list(combinations(dirs, 2))


def _answers(path: Path | str) -> tuple[str, dict[str, tuple[dict, str, str]]]:
    """label, item -> (script, category, answer) of a finished answer directory."""
    found = read_bench_dir(path, SIMULBENCH.manifest_file, "sandbox simulbench")
    out = {}
    for run_dir in found.runs:
        dialogue = read_dialogue(run_dir, SIMULBENCH.name)
        if dialogue.finished:
            out[run_dir.name] = (dialogue.config["script"], dialogue.config.get("category"),
                                 answer_of(dialogue))
    return found.label, out


def _pair_keys(pairs: Sequence[tuple[Path, Path]]) -> dict[Path, str]:
    """A folder-safe name per directory: its own name, numbered when two share one."""
    names: dict[Path, str] = {}
    for path in dict.fromkeys(p for pair in pairs for p in pair):
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(path).resolve().name) or "dir"
        name, n = base, 1
        while name in names.values():
            n += 1
            name = f"{base}-{n}"
        names[path] = name
    return names


def _open_pairwise(out: Path, judge_format: str, pairs: list[dict]) -> None:
    """OUT/pairwise.json: the judge format and every pair compared here. Verdicts of another
    judge format are not mixed in: that is another --out."""
    path = out / "pairwise.json"
    have = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    was = have.get("judge_format", "text")
    if have and was != judge_format and any((out / PAIRWISE).rglob("*.json")):
        raise BenchmarkMismatch(f"{out} holds pairwise verdicts of --judge-format {was}, not "
                                f"{judge_format}; use another --out")
    known = {p["key"]: p for p in have.get("pairs", [])}
    known.update({p["key"]: p for p in pairs})
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"judge_format": judge_format,
                                   "pairs": list(known.values())}, indent=2))


def run_pairwise(pairs: Sequence[tuple[Path | str, Path | str]], out: Path | str, judge: str,
                 pool, sampling: Sampling = JUDGE_SAMPLING, judge_format: str = "text",
                 on_progress: Callable[[str], None] | None = None) -> list[PairwiseReport]:
    """Judge, for each pair, every script both directories answered, in both orders; a saved
    verdict is kept. One report per pair, in order."""
    out = Path(out)
    pairs = [(Path(a), Path(b)) for a, b in pairs]
    answers = {d: _answers(d) for d in dict.fromkeys(p for pair in pairs for p in pair)}
    names = _pair_keys(pairs)
    keys = [f"{names[a]}__vs__{names[b]}" for a, b in pairs]
    _open_pairwise(out, judge_format, [
        {"key": key, "first": str(a), "second": str(b), "first_label": answers[a][0],
         "second_label": answers[b][0]} for key, (a, b) in zip(keys, pairs, strict=True)])
    llm = pool.llm(judge, out / CACHE)
    calls = CallLog(out / CALLS)
    reports = []
    try:
        for key, (a, b) in zip(keys, pairs, strict=True):
            reports.append(_judge_pair_dirs(answers[a], answers[b], out / PAIRWISE / key, key,
                                            judge, AccountingLLM(llm, calls), sampling,
                                            judge_format, on_progress))
    finally:
        calls.close()
    return reports


def _judge_pair_dirs(first, second, verdicts: Path, key: str, judge: str, llm,
                     sampling: Sampling, judge_format: str, on_progress) -> PairwiseReport:
    (label_a, answers_a), (label_b, answers_b) = first, second
    common = sorted(set(answers_a) & set(answers_b))
    report = PairwiseReport(label_a, label_b, judge,
                            missing=len(set(answers_a) ^ set(answers_b)), key=key)
    verdicts.mkdir(parents=True, exist_ok=True)
    for item in common:
        script, category, answer_a = answers_a[item]
        path = verdicts / f"{item}__{judge.replace('/', '_')}.json"
        result = PairResult(**json.loads(path.read_text(encoding="utf-8"))) \
            if path.is_file() else None
        if result is not None and not result.unavailable:
            report.skipped += 1
        else:
            if on_progress:
                on_progress(f"{label_a} vs {label_b}: {item}")
            result = judge_pair(llm, item, script["act"], script["dialogue_history"], answer_a,
                                answers_b[item][2], sampling, judge_format)
            write_atomic(path, result.to_json())
            report.made += 1
            report.unavailable += result.unavailable
        report.add(result, hard=script["turn_num"] > 0, category=category)
    return report
