"""The judge formats every benchmark's judges are asked in, and the one reader of the text
format's marks.

- "text" (the papers'): the judge writes its reasons and a number in double brackets, `[[7]]`
  (a single-bracket `[7]` is read when no double one is there). Which mark counts when there are
  several is the benchmark's declared choice: SimulBench takes the first, RefuteBench the last
  (its judges restate the scale before they rate).
- "json": the judge's answer is bound to a schema (a local model's grammar cannot leave it), so
  there is nothing to parse.
"""

from __future__ import annotations

import re
from typing import Literal

JUDGE_FORMATS = ("text", "json")

_DOUBLE = re.compile(r"\[\[\s*(\d+(?:\.\d*)?)\s*\]\]")
_SINGLE = re.compile(r"\[\s*(\d+(?:\.\d*)?)\s*\]")


def bracketed_number(text: str, pick: Literal["first", "last"]) -> float | int:
    """The `pick` mark of `text`: `[[x]]`, else `[x]`; x a whole number or a decimal (an int
    when written without a point). ValueError when there is none."""
    found = _DOUBLE.findall(text) or _SINGLE.findall(text)
    if not found:
        raise ValueError("no [[rating]] in the answer")
    raw = found[0] if pick == "first" else found[-1]
    return float(raw) if "." in raw else int(raw)
