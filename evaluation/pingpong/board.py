"""The PingPong leaderboard: read benchmark directories, score every player, print the table.

A benchmark directory is what `sandbox pingpong --out DIR` writes: `pingpong.json` (who played,
with which settings) and `runs/<pair>/` run directories with their `judgments/`. Only the logs
and the saved judgments are read; nothing calls a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from evaluation.kit import (
    MIN_UNITS_WHY,
    RESAMPLES,
    BoardError,
    Column,
    Ledger,
    Plot,
    PlotPoint,
    RowDirs,
    accounting_markdown,
    check_dirs,
    check_judges,
    markdown_table,
    pool_rows,
    pooling_notes,
    read_bench_dir,
)

from .aggregate import (
    REFERENCE_WEIGHTINGS,
    Arithmetic,
    PlayerData,
    PlayerScore,
    leaderboard,
    score_conversation,
)
from .judge import JUDGE, PINGPONG_JUDGE, conversation_of

MANIFEST = "pingpong.json"
COMMAND = "sandbox pingpong"

__all__ = ["MANIFEST", "Board", "BoardError", "board_json", "board_markdown", "board_plot",
           "build_board", "read_player"]


class Board(BaseModel):
    rows: list[PlayerScore]
    seed: int
    resamples: int
    arithmetic: str = "paper"
    judges: dict[str, list[str]] = Field(default_factory=dict)  # player -> judges used
    warnings: list[str] = Field(default_factory=list)
    # player -> what became of every pair its manifest selected (evaluation.kit.Ledger.data)
    accounting: dict[str, dict] = Field(default_factory=dict)


def read_player(bench_dir: Path | str, judges: Sequence[str] | None = None,
                arithmetic: Arithmetic = "paper") -> PlayerData:
    """A player's conversations and judgments from its benchmark directory; every pair its
    manifest selected is accounted for in `meta["ledger"]` (finished, judged, or why not)."""
    found = read_bench_dir(bench_dir, MANIFEST, COMMAND, "PingPong")
    return read_row(RowDirs(found.label, [found]), judges, arithmetic)


def read_row(row: RowDirs, judges: Sequence[str] | None = None,
             arithmetic: Arithmetic = "paper") -> PlayerData:
    """A board row's player: the conversations of its directories (one configuration,
    kit.rows), a pair of one seed read once."""
    ledger = Ledger(row.label)
    conversations, lengths, used = [], [], set()
    # Only the pairs the manifest selects count: a directory left by an earlier, different
    # configuration must not enter this player's means.
    runs = [(found_dir, run) for found_dir in row.benches
            for run in ledger.read_runs(found_dir, JUDGE, "pair", only=judges)]
    for found_dir, run in runs:
        try:
            conversation = conversation_of(run.dialogue)
        except KeyError as exc:
            ledger.refuse(run, f"not a PingPong conversation: its header has no {exc}")
            continue
        found = ledger.judgments_of(run, [PINGPONG_JUDGE], found_dir.judges, judges)[JUDGE]
        used.update(j.model for j in found)
        score = score_conversation(run.item, found, arithmetic)
        conversations.append(score)
        if score.judged:  # a conversation no judge could judge tells nothing of length either
            lengths.extend(len(reply) for reply in conversation.replies)
    manifest = row.benches[0].manifest
    roles = manifest.get("roles", {})
    meta = {"dir": ", ".join(str(b.path) for b in row.benches),
            "dirs": [str(b.path) for b in row.benches], "player": roles.get("player"),
            "interrogator": roles.get("interrogator"), "judges": sorted(used),
            "sampling": manifest.get("sampling", {}).get("player"),
            "left_out": sum(b.left_out for b in row.benches), "ledger": ledger}
    return PlayerData(label=row.label, conversations=conversations, reply_lengths=lengths,
                      meta=meta, selected=ledger.selected)


def build_board(bench_dirs: Sequence[Path | str], judges: Sequence[str] | None = None,
                seed: int = 0, resamples: int = RESAMPLES,
                arithmetic: Arithmetic = "paper") -> Board:
    benches = [read_bench_dir(d, MANIFEST, COMMAND, "PingPong") for d in bench_dirs]
    check_dirs(benches)
    check_judges(benches, judges)
    # Rows are (label, configuration) (kit.rows): a label's directories run the same way pool,
    # a label run two ways is a row each, named by what differs.
    rows = pool_rows(benches, judges=judges)
    players = [read_row(row, judges, arithmetic) for row in rows]
    warnings = pooling_notes(rows)
    for player in players:
        if not player.conversations:
            warnings.append(f"{player.meta['dir']}: no finished conversation")
        if player.meta["left_out"]:
            warnings.append(f"{player.meta['dir']}: {player.meta['left_out']} run "
                            f"director{'y' if player.meta['left_out'] == 1 else 'ies'} not "
                            f"selected by its {MANIFEST} left out")
    judge_sets = {p.label: p.meta["judges"] for p in players}
    if len({tuple(v) for v in judge_sets.values()}) > 1:
        warnings.append("players were judged by different judges; pass --judge to compare "
                        "on the same ones")
    accounting = {}
    for player in players:
        ledger = player.meta.pop("ledger")
        ledger.label = player.label
        accounting[player.label] = ledger.data()
    return Board(rows=leaderboard(players, seed=seed, resamples=resamples,
                                  arithmetic=arithmetic),
                 seed=seed, resamples=resamples, arithmetic=arithmetic, judges=judge_sets,
                 warnings=warnings, accounting=accounting)


COLUMNS = [Column("rank", "#", None), Column("label", "Player", None, "---"),
           Column("score", "LN score"), Column("ci", "95% CI", None),
           Column("aggregate", "Agg."), Column("refusal_ratio", "Refusal ratio"),
           Column("in_character", "In character"), Column("entertaining", "Entertaining"),
           Column("fluency", "Fluency"), Column("length", "Length", None),
           Column("length_factor", "Length factor", None), Column("convs", "Convs", None),
           Column("judge_fallbacks", "Judge fallbacks", None)]


def _cells(row: PlayerScore) -> dict:
    return {**row.criteria, "rank": row.rank, "label": row.label, "score": row.score,
            "ci": None if row.ci is None else f"[{row.ci[0]:.2f}, {row.ci[1]:.2f}]",
            "aggregate": row.aggregate, "refusal_ratio": row.refusal_ratio,
            "length": f"{row.mean_length:.0f}", "length_factor": f"{row.length_factor:.3f}",
            "convs": f"{row.scored}/{row.selected}", "judge_fallbacks": row.judge_fallbacks}


def board_markdown(board: Board) -> str:
    """The leaderboard as a Markdown table, best first."""
    lines = markdown_table(COLUMNS, [_cells(row) for row in board.rows])
    judged_by = "; ".join(f"{label} by {', '.join(j) or 'no judge'}"
                          for label, j in board.judges.items())
    notes = [f"95% CI: bootstrap of the mean over conversations, {board.resamples} resamples, "
             f"seed {board.seed}. Judged: {judged_by}."]
    if board.arithmetic == "reference":
        notes.append("Arithmetic: the public leaderboard code's (final = sum of 0.333 x "
                     "criterion, integer mean length, ranks shared within 0.06); point "
                     "estimates are exact means.")
        notes += ["", "LN score under each weighting of the public board's selector (weights of "
                  "in character, entertaining, fluency in a conversation's final):", ""]
        columns = [Column("label", "Player", None, "---"),
                   *(Column(name, name) for name in REFERENCE_WEIGHTINGS)]
        notes += markdown_table(columns, [{"label": r.label, **r.weightings}
                                          for r in board.rows])
        notes.append("")
    notes.append("Convs: conversations in the means / pairs the manifest selected (the "
                 "rest: refused by every judge, unjudged, or below).")
    if any(row.ci is None and row.scored for row in board.rows):
        notes.append(f"A score without an interval: {MIN_UNITS_WHY}.")
    notes += [f"Warning: {w}" for w in board.warnings]
    ledgers = [Ledger.from_data(label, data) for label, data in board.accounting.items()]
    return "\n".join(lines + [""] + notes + [""] + accounting_markdown(ledgers)) + "\n"


def board_json(board: Board) -> str:
    return board.model_dump_json(indent=2)


def board_plot(board: Board) -> Plot:
    return Plot(title="PingPong: length-normalised score with its 95% interval",
                axis="score (1-5)",
                points=[PlotPoint(r.label, r.score, r.ci, n=r.scored) for r in board.rows],
                scale=(1, 5), interval=f"bars: 95% bootstrap interval over conversations "
                                       f"(seed {board.seed}, {board.resamples} resamples)")
