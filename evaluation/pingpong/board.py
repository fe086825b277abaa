"""The PingPong leaderboard: read benchmark directories, score every player, print the table.

A benchmark directory is what `sandbox pingpong --out DIR` writes: `pingpong.json` (who played,
with which settings) and `runs/<pair>/` run directories with their `judgments/`. Only the logs
and the saved judgments are read; nothing calls a model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.log import RunFormatError

from .aggregate import RESAMPLES, PlayerData, PlayerScore, leaderboard, score_conversation
from .judge import NotAPingPongRun, load_judgments, read_conversation

MANIFEST = "pingpong.json"
RUNS = "runs"


class BoardError(Exception):
    """A directory that is not a PingPong benchmark directory."""


class Board(BaseModel):
    rows: list[PlayerScore]
    seed: int
    resamples: int
    judges: dict[str, list[str]] = Field(default_factory=dict)  # player -> judges used
    warnings: list[str] = Field(default_factory=list)


def run_dirs(bench_dir: Path, selected: Sequence[str] | None = None) -> list[Path]:
    """The pair directories under `runs/`; only the `selected` pair ids when given."""
    runs = bench_dir / RUNS
    found = sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    if selected is None:
        return found
    wanted = set(selected)
    return [p for p in found if p.name in wanted]


def read_player(bench_dir: Path | str, judges: Sequence[str] | None = None) -> PlayerData:
    """A player's conversations and judgments from its benchmark directory."""
    bench_dir = Path(bench_dir)
    manifest_path = bench_dir / MANIFEST
    if not manifest_path.is_file():
        raise BoardError(f"{bench_dir} is not a PingPong benchmark directory (no {MANIFEST}; "
                         "write one with `sandbox pingpong --out DIR`)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BoardError(f"{manifest_path}: not JSON ({exc.msg})") from exc
    conversations, lengths, used = [], [], set()
    # Only the pairs the manifest selects count: a directory left by an earlier, different
    # configuration must not enter this player's means. (Older manifests list no pairs.)
    chosen = run_dirs(bench_dir, manifest.get("pairs") or None)
    left_out = len(run_dirs(bench_dir)) - len(chosen)
    for run_dir in chosen:
        try:
            conversation = read_conversation(run_dir)
        except (RunFormatError, NotAPingPongRun, KeyError):
            continue
        if not conversation.finished:
            continue  # a killed conversation is finished by the next `sandbox pingpong`
        found = [j for j in load_judgments(run_dir) if judges is None or j.judge in judges]
        used.update(j.judge for j in found)
        conversations.append(score_conversation(run_dir.name, found))
        lengths.extend(len(reply) for reply in conversation.replies)
    label = manifest.get("label") or manifest.get("player") or bench_dir.name
    meta = {"dir": str(bench_dir), "player": manifest.get("player"),
            "interrogator": manifest.get("interrogator"), "judges": sorted(used),
            "sampling": manifest.get("sampling", {}).get("player"), "left_out": left_out}
    return PlayerData(label=label, conversations=conversations, reply_lengths=lengths, meta=meta)


def build_board(bench_dirs: Sequence[Path | str], judges: Sequence[str] | None = None,
                seed: int = 0, resamples: int = RESAMPLES) -> Board:
    players = [read_player(d, judges) for d in bench_dirs]
    warnings = []
    labels = [p.label for p in players]
    for player in players:
        if labels.count(player.label) > 1:  # two directories of one model: tell them apart
            player.label = f"{player.label} ({Path(player.meta['dir']).name})"
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
    return Board(rows=leaderboard(players, seed=seed, resamples=resamples), seed=seed,
                 resamples=resamples, judges=judge_sets, warnings=warnings)


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def board_markdown(board: Board) -> str:
    """The leaderboard as a Markdown table, best first."""
    head = ("| # | Player | LN score | 95% CI | Agg. | Refusal ratio | In character | "
            "Entertaining | Fluency | Length | Length factor | Convs | Judge fallbacks |")
    lines = [head, "|" + "|".join(["--:", "---"] + ["--:"] * 11) + "|"]
    for rank, row in enumerate(board.rows, start=1):
        ci = "-" if row.ci is None else f"[{row.ci[0]:.2f}, {row.ci[1]:.2f}]"
        lines.append("| " + " | ".join([
            str(rank), row.label, _num(row.score), ci, _num(row.aggregate),
            _num(row.refusal_ratio), _num(row.criteria["in_character"]),
            _num(row.criteria["entertaining"]), _num(row.criteria["fluency"]),
            f"{row.mean_length:.0f}", f"{row.length_factor:.3f}",
            f"{row.scored}/{row.conversations}", str(row.judge_fallbacks)]) + " |")
    judged_by = "; ".join(f"{label} by {', '.join(j) or 'no judge'}"
                          for label, j in board.judges.items())
    notes = [f"95% CI: bootstrap of the mean over conversations, {board.resamples} resamples, "
             f"seed {board.seed}. Judged: {judged_by}."]
    notes += [f"Warning: {w}" for w in board.warnings]
    return "\n".join(lines + [""] + notes) + "\n"


def board_json(board: Board) -> str:
    return board.model_dump_json(indent=2)
