"""Test-script extraction (paper section 2.3; the original script_extraction): cut scripts from
a collected dialogue, given the first turn a judge found too hard for the simulator.

    t = 0 (none)  -> one LastOnly script: the dialogue without its last answer (turn_num 0)
    t in 1..T     -> one FirstChan script ending on turn t's request (turn_num t), and one
                     SubseqChan script ending on each later turn's request (turn_num k > t)

A script's history ends on the user request every model under test then answers. Scripts are
written in the published format (write_scripts): all Hard scripts first, dialogue by dialogue,
then all LastOnly ones, with sequential ids, as the original orders them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .models import SOURCE_FILES, TURNS, Message, Script, SimTask


@dataclass
class Collected:
    """One collected dialogue: its task, which of the task's dialogues, the messages (user and
    simulator alternating) and the challenging turn its judge named (0: none)."""

    task: SimTask
    index: int
    messages: list[Message]
    challenging_turn: int


def source_file(index: int) -> str:
    return SOURCE_FILES[index] if index < len(SOURCE_FILES) else f"gpt-3.5-turbo-{index}.json"


def cut(dialogue: Collected, turns: int = TURNS) -> list[Script]:
    """The scripts of one dialogue (ids left at 0; `number` sets them), with categories."""
    messages = dialogue.messages
    if len(messages) != 2 * turns:
        raise ValueError(f"{dialogue.task.act} dialogue {dialogue.index}: {len(messages)} "
                         f"messages, expected {2 * turns}")
    t = dialogue.challenging_turn
    if not 0 <= t <= turns:
        raise ValueError(f"challenging turn {t} is not in 0..{turns}")
    task = dialogue.task

    def script(history: list[Message], turn_num: int, category: str) -> Script:
        return Script(id=0, source_id=task.id, act=task.act,
                      task_description=task.task_description, type=task.type,
                      source_file_name=source_file(dialogue.index), turn_num=turn_num,
                      dialogue_history=history, category=category)

    if t == 0:
        return [script(messages[:-1], 0, "lastonly")]
    return [script(messages[:2 * t - 1], t, "firstchan")] + \
        [script(messages[:2 * k - 1], k, "subseqchan") for k in range(t + 1, turns + 1)]


def extract(dialogues: Sequence[Collected], turns: int = TURNS) -> list[Script]:
    """Every dialogue's scripts: the Hard ones first, then the LastOnly ones, numbered 0, 1, ..."""
    cuts = [cut(d, turns) for d in dialogues]
    hard = [s for c in cuts for s in c if s.hard]
    last = [s for c in cuts for s in c if not s.hard]
    return [s.model_copy(update={"id": i}) for i, s in enumerate(hard + last)]
