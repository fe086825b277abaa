"""A finished single-room dialogue read back from its run directory (header and events only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.events import Utterance
from sandbox.log import EVENTS, load_run


class NotABenchmarkRun(Exception):
    """The directory is a run, but not one of this benchmark's dialogues."""


@dataclass
class Dialogue:
    """What a judge and a board may know of one episode: the item (from the header), who
    played which role, the utterances in order, and whether the run completed. `damaged`
    names every line of its events.jsonl that does not read ("events.jsonl line 7: ..."): the
    dialogue read without them is not the one that was run."""

    run_dir: Path
    item: str
    config: dict[str, Any]
    models: dict[str, str]
    utterances: list[Utterance]
    finished: bool
    damaged: list[str] = field(default_factory=list)

    def said_by(self, agent: str) -> list[Utterance]:
        return [u for u in self.utterances if u.agent == agent]


def read_dialogue(run_dir: Path | str, benchmark: str | None = None,
                  item_key: str = "item") -> Dialogue:
    """The dialogue of a run directory; NotABenchmarkRun when it is another benchmark's run
    (RunFormatError from sandbox.log when it is no run at all)."""
    run = load_run(run_dir)
    config = run.header.config
    if benchmark is not None and config.get("benchmark") != benchmark:
        raise NotABenchmarkRun(f"{run_dir} is a {run.header.scenario!r} run, not a "
                               f"{benchmark} one")
    conversation = config.get("conversation", "c0")
    said = sorted((e for e in run.events
                   if isinstance(e, Utterance) and e.conversation == conversation),
                  key=lambda e: e.turn)
    return Dialogue(run_dir=Path(run_dir), item=str(config.get(item_key, Path(run_dir).name)),
                    config=config, models=dict(run.header.models), utterances=said,
                    finished=run.result is not None and run.result.status == "completed",
                    damaged=[f"{EVENTS} line {p.line}: {p.reason}" for p in run.problems
                             if p.file == EVENTS])
