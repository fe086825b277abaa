"""Scripted stand-ins for PingPong's dialogue roles, for tests and dry runs.

Deterministic: the same prompt gives the same answer. The player answers in a voice built from
its card (`verbose`: about three times as long); the interrogator asks numbered questions. The
judge's stand-in is in evaluation.pingpong.scripted, which puts all three into one backend.
"""

from __future__ import annotations

import re

from agents.roleplay import INTERROGATOR_TAG, PLAYER_TAG
from sandbox.hashing import stable_int
from sandbox.llm import LLMRequest


def _hash(text: str) -> int:
    return stable_int(text)


def player(verbose: bool = False):
    def answer(request: LLMRequest) -> str:
        card = request.messages[0].content
        name = re.search(r"You are ([^.\n]+)\.", card)
        last = request.messages[-1].content.strip().split()
        said = " ".join(last[-5:]) if last else "nothing"
        line = (f"*{['nods', 'smiles', 'frowns', 'laughs'][_hash(card + said) % 4]}* "
                f"As {name.group(1) if name else 'myself'}, I hear you say '{said}'. "
                f"Let me answer in my own way.")
        return " ".join([line] * 3) if verbose else line
    return answer


def interrogator(request: LLMRequest) -> str:
    asked = sum(m.role == "assistant" for m in request.messages)  # its own earlier lines
    return f"Question {asked + 1}: tell me something about your day?"


def dialogue_answers(verbose: bool = False) -> dict:
    """Tag -> answer function for the player and the interrogator."""
    return {PLAYER_TAG: player(verbose), INTERROGATOR_TAG: interrogator}
