"""Events of RefuteBench dialogues (tasks/refutebench): what the refuter wrote before cleaning.

The cleaned refutation is the user's next Utterance; this event keeps, beside it, the refuter's
raw answer, the focus it was given and whether it was asked for a standing rule, so a reader
can see what the cleaning removed and which schedule the refuter followed.
"""

from __future__ import annotations

from typing import Literal

from .base import Event


class RefutationWritten(Event):
    """The refuter (`agent`) wrote refutation `k` (1-based) of the dialogue."""

    kind: Literal["refutation_written"] = "refutation_written"
    k: int
    focus: str
    standing: bool = False  # persistent setting: asked for a rule that holds from now on
    raw: str
    cleaned: str
    fallback: bool = False  # no usable refutation: the declared one was said instead
