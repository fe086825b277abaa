"""Events of SimulBench collection dialogues (tasks/simulbench): the user agent's choice.

The request itself is the user's next Utterance; this event keeps, beside it, the strategy the
user agent chose for it (the paper's four: point out an error, build on the state, a harder new
request, other), as it wrote it and as we read it, so a reader sees how the dialogue was steered
(`sandbox log` counts them, the viewer lists them under the user's other events).

Its kind reaches the log reader through the entry point `simulbench` of the group
`sandbox.events` (pyproject.toml): the reader imports this module on the first kind it does not
know.
"""

from __future__ import annotations

from typing import Literal

from sandbox.events.base import Event


class UserRequestWritten(Event):
    """The user agent (`agent`) chose a strategy and wrote its request for user turn `turn`
    (1-based; turn 1 is the task's own first turn, so the agent writes turns 2..4)."""

    kind: Literal["user_request_written"] = "user_request_written"
    turn: int
    strategy: str  # improvement | next_step | new_request | other | unnamed | fallback
    said: str  # the strategy as the user agent wrote it
    request: str
