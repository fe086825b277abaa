"""Where an answer's first few sentences end (`LLMRequest.max_sentences`).

A sentence ends at `.`, `!`, `?` or `…` (with any closing quotes or brackets) followed by white
space. A mark in square brackets after it (`[END]`) is not a sentence: it stays with the text
before it. "Mr. Smith" counts as two sentences; an answer cut one short there is still an
answer.
"""

from __future__ import annotations

import re

_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+")
_MARK = re.compile(r"\[[^\]\n]*\]?\s*")  # [END], or the start of one still being written


def next_sentence_at(text: str, n: int) -> int | None:
    """Where the sentence after the first `n` begins in `text`; None while there is none yet
    (fewer sentences, or nothing but white space and marks after the nth)."""
    at = 0
    for _ in range(n):
        found = _END.search(text, at)
        if found is None:
            return None
        at = found.end()
    while (mark := _MARK.match(text, at)) and mark.end() > at:
        at = mark.end()
    return at if at < len(text) else None


def first_sentences(text: str, n: int) -> str:
    """`text` up to the end of its nth sentence (and any mark after it); all of it if shorter."""
    at = next_sentence_at(text, n)
    return text if at is None else text[:at].rstrip()
