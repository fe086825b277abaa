"""A collection directory (`sandbox simulbench-collect --out`) read: its finished dialogues with
their challenge judgments, the test scripts they give (`extract_dir`, `sandbox
simulbench-extract`), the user agent's strategies, and the collection board
(`sandbox simulbench-collect-board`). Reads run directories and judgments only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.kit import (
    BenchDir,
    BoardError,
    BoardReport,
    Ledger,
    check_dirs,
    check_judges,
    pool_rows,
    read_bench_dir,
)
from sandbox.log import load_run
from tasks.simulbench import Collected, Message, Script, SimTask, extract, write_scripts
from tasks.simulbench.models import STRATEGIES

from .board import collection_board
from .judges import CHALLENGE, CHALLENGE_JUDGE

COLLECT_BENCHMARK = "simulbench-collect"  # the runs' benchmark and the command that wrote them
COLLECT_MANIFEST = "simulbench-collect.json"
COMMAND = "sandbox simulbench-collect"
CATEGORY_NAMES = ("lastonly", "firstchan", "subseqchan")


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


def category_counts(scripts: Sequence[Script]) -> dict[str, int]:
    """Scripts per category: LastOnly, FirstChan, SubseqChan."""
    return {c: sum(s.category == c for s in scripts) for c in CATEGORY_NAMES}


def collected(path: Path | str, judge: str | None = None) -> CollectedDir:
    """Read a collection directory; `judge` picks one judge model's verdict (default: the first
    usable one found)."""
    found = read_bench_dir(path, COLLECT_MANIFEST, COMMAND)
    return collected_row([found], found.label, judge)


def collected_row(benches: Sequence[BenchDir], label: str,
                  judge: str | None = None) -> CollectedDir:
    """The dialogues of a board row's directories (one configuration, kit.rows), a dialogue
    of one seed read once."""
    only = [judge] if judge else None
    out = CollectedDir(ledger=Ledger(label))
    runs = [(found, run) for found in benches
            for run in out.ledger.read_runs(found, COLLECT_BENCHMARK, only=only)]
    for found, run in runs:
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
    check_judges([read_bench_dir(path, COLLECT_MANIFEST, COMMAND)], [judge] if judge else None)
    summary = collected(path, judge)
    scripts = extract(summary.dialogues)
    if not scripts:  # an empty script file would only fail the run that reads it
        raise BoardError(f"{path}: no scripts to write ({len(summary.dialogues)} judged "
                         f"dialogues; {summary.ledger.summary() if summary.ledger else ''}); "
                         f"nothing written to {out}")
    write_scripts(scripts, out)
    return scripts, summary


def collection_report(dirs: Sequence[Path | str], judges: Sequence[str] | None = None,
                      seed: int = 0, resamples: int = 1000) -> BoardReport:
    """The collection board over collection directories: per simulator its dialogues, how many
    were challenged, the scripts they give by category, fallbacks, unjudged dialogues and the
    user agent's strategies (`seed` and `resamples` are unused: no interval here)."""
    rows, ledgers = [], []
    benches = [read_bench_dir(p, COLLECT_MANIFEST, COMMAND) for p in dirs]
    check_dirs(benches)
    check_judges(benches, judges)
    # Rows are (label, configuration), as on every kit board (kit.rows).
    for row in pool_rows(benches, judges=judges):
        label = row.label
        summary = collected_row(row.benches, label, judge=(judges or [None])[0])
        ledgers.append(summary.ledger)
        scripts = extract(summary.dialogues)
        rows.append({"label": label, "dialogues": len(summary.dialogues),
                     "challenged": sum(d.challenging_turn > 0 for d in summary.dialogues),
                     "fallbacks": summary.fallbacks, "unjudged": len(summary.unjudged),
                     "scripts": len(scripts), **category_counts(scripts),
                     "strategies": strategy_counts(summary.strategies),
                     "strategy_counts": dict(summary.strategies),
                     "accounting": summary.ledger.data()})
    markdown, plot = collection_board(rows, ledgers)
    return BoardReport(markdown=markdown, data={"rows": rows}, plot=plot)
