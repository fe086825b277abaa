"""Numbers drawn from text that stay the same in every process and on every machine (Python's
own `hash` of a string changes with each interpreter): seeds fixed by an item's key, a scripted
double's choice fixed by what it was asked."""

from __future__ import annotations

import hashlib

SEED_MODULUS = 2**31 - 1  # what numpy and the engine take as a seed


def stable_int(text: str, hex_digits: int = 8) -> int:
    """The first `hex_digits` hex digits of the text's SHA-256, as an integer."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:hex_digits], 16)


def stable_seed(*parts: object) -> int:
    """A seed fixed by `parts` (joined with '|'), below SEED_MODULUS."""
    return stable_int("|".join(str(p) for p in parts)) % SEED_MODULUS
