"""Judgments: what an LLM judge made of one run, saved beside it in `judgments/`.

One file per (judge, judge model): `judgments/<judge>__<model>.json`. The format is the same for
every single-room benchmark, so the viewer shows any benchmark's scores next to the turns they
are about, and a board re-reads them without calling a model. A benchmark keeps what only it
needs in `answer` (the judge's parsed answer as given).

    scores   item-level scores by metric (e.g. a 1-10 rating)
    flags    item-level yes/no verdicts (e.g. a refusal seen)
    turns    per-utterance verdicts, keyed by the Utterance's `turn` in events.jsonl
    status   "ok"; "fallback" when the judge gave no usable answer (left out of every mean);
             "unavailable" when its call never reached a model (the endpoint refused it or
             could not be reached): not a verdict at all, asked again by the next run
    dialogue_digest  a digest of what of the dialogue the judge read: a judgment whose digest
             no longer matches its run judged another dialogue (stale; evaluation.kit)

`read_judgments` also says which files do not read as a judgment (not JSON, an unknown status,
a missing field); boards count and name them, and the runner asks their judge again.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .files import FileFormatError, read_text
from .log import JUDGMENTS
from .storage import write_atomic


class TurnVerdict(BaseModel):
    """A judge's verdict on one utterance."""

    turn: int  # Utterance.turn of the judged line (0-based, as in events.jsonl)
    scores: dict[str, float] = Field(default_factory=dict)
    flags: dict[str, bool] = Field(default_factory=dict)
    notes: dict[str, str] = Field(default_factory=dict)  # the judge's reasons, by metric


class Judgment(BaseModel):
    """One judge model's verdict on one run."""

    judge: str  # the judge's name in its benchmark (one benchmark may have several judges)
    model: str  # the judge model's id
    item: str = ""  # the item id of the run
    status: Literal["ok", "fallback", "unavailable"]
    scores: dict[str, float] = Field(default_factory=dict)
    flags: dict[str, bool] = Field(default_factory=dict)
    turns: list[TurnVerdict] = Field(default_factory=list)
    answer: Any = None
    faults: list[str] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    sampling: dict[str, Any] = Field(default_factory=dict)
    dialogue_digest: str = ""  # "" in judgments saved before it was recorded
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))

    @property
    def usable(self) -> bool:
        return self.status == "ok"


def settle_status(judgment: Judgment) -> Judgment:
    """`judgment` with status "unavailable" when its call never reached a model (fault
    "unavailable": the fallback it holds is no judge's answer)."""
    if judgment.status != "ok" and "unavailable" in judgment.faults:
        return judgment.model_copy(update={"status": "unavailable"})
    return judgment


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_") or "judge"


def judgment_path(run_dir: Path | str, judge: str, model: str) -> Path:
    return Path(run_dir) / JUDGMENTS / f"{_slug(judge)}__{_slug(model)}.json"


def save_judgment(run_dir: Path | str, judgment: Judgment) -> Path:
    """Write atomically: a kill never leaves half a judgment."""
    path = judgment_path(run_dir, judgment.judge, judgment.model)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, judgment.model_dump_json(indent=2))
    return path


class UnreadableJudgment(BaseModel):
    """A file in judgments/ that does not read as a judgment, and why."""

    path: Path
    reason: str


def _why_unreadable(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg})"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        return f"not a judgment ({where}: {first['msg']})"
    if isinstance(exc, FileFormatError):
        return f"cannot be read ({exc.reason})"
    return f"cannot be read ({exc})"


def read_judgments(run_dir: Path | str, judge: str | None = None
                   ) -> tuple[list[Judgment], list[UnreadableJudgment]]:
    """Every judgment saved beside a run (only `judge`'s when given), ordered by file name,
    and the files that do not read as one. An unreadable file's judge is known only by its
    name (`<judge>__<model>.json`), so with `judge` given only files of that prefix count."""
    folder = Path(run_dir) / JUDGMENTS
    found: list[Judgment] = []
    unreadable: list[UnreadableJudgment] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            # guarded (no FIFO); NaN read, so a rating that is not a number is named as such
            judgment = Judgment.model_validate(json.loads(read_text(path)))
        except (ValueError, OSError, FileFormatError) as exc:  # JSON and validation errors too
            if judge is None or path.name.startswith(f"{_slug(judge)}__"):
                unreadable.append(UnreadableJudgment(path=path, reason=_why_unreadable(exc)))
            continue
        if judge is None or judgment.judge == judge:
            found.append(judgment)
    return found, unreadable


def load_judgments(run_dir: Path | str, judge: str | None = None) -> list[Judgment]:
    """Every judgment saved beside a run that reads as one (only `judge`'s when given); the
    viewer's and `sandbox log`'s view. Boards use `read_judgments`, which names the rest."""
    return read_judgments(run_dir, judge)[0]
