"""Where an answer's first few sentences end (`LLMRequest.max_sentences`).

A sentence ends at `.`, `!`, `?` or `…` (with any closing quotes) followed by white space. An
aside -- in square brackets, parentheses or asterisks: a mark such as `[END]`, a stage direction
such as `(smiles.)` -- is not a sentence and ends none: one after the last sentence kept stays
with it. "Mr. Smith" counts as two sentences; an answer cut one short there is still an answer.
"""

from __future__ import annotations

import re

_END = re.compile(r"[.!?…]+[\"'”’]*\s+")
# An aside, or the start of one still being written (up to the end of the text so far).
_ASIDE = re.compile(r"\[[^\]]*\]?|\([^)]*\)?|\*[^*]*\*?")


def _without_asides(text: str) -> str:
    """`text` with every aside blanked out, character for character (positions stay)."""
    return _ASIDE.sub(lambda aside: " " * len(aside[0]), text)


def next_sentence_at(text: str, n: int) -> int | None:
    """Where the sentence after the first `n` begins in `text`; None while there is none yet
    (fewer sentences, or nothing but white space and asides after the nth)."""
    speech = _without_asides(text)
    at = 0
    for _ in range(n):
        found = _END.search(speech, at)
        if found is None:
            return None
        at = found.end()
    at += len(speech[at:]) - len(speech[at:].lstrip())  # asides after it are white space now
    return at if at < len(text) else None


def first_sentences(text: str, n: int) -> str:
    """`text` up to the end of its nth sentence (and any aside after it); all of it if shorter."""
    at = next_sentence_at(text, n)
    return text if at is None else text[:at].rstrip()
