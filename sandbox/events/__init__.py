"""Typed events of the episode log. One module per family of kinds; importing this package
registers them all, so the log reader (and the viewer, and scorers) know every kind.

To add a kind: subclass `Event` with `kind: Literal["my_kind"] = "my_kind"` in a module here and
import the module below.
"""

from . import (
    agent,  # noqa: F401  (registers plans, actions, memories, reflections)
    refutebench,  # noqa: F401  (registers refutation_written, rule_feedback)
    simulbench,  # noqa: F401  (registers user_request_written)
    stss,  # noqa: F401  (registers task_assigned)
)
from .base import EVENT_TYPES, Event, UnknownEvent
from .core import AgentJoined, ConversationEnded, ConversationStarted, EpisodeEnded, Utterance
from .world import (  # noqa: F401
    ArenaEntry,
    Moved,
    MoveStopped,
    ObjectStateChanged,
    Placed,
    WalkFailed,
)

__all__ = [
    "EVENT_TYPES", "AgentJoined", "ConversationEnded", "ConversationStarted", "EpisodeEnded",
    "Event", "UnknownEvent", "Utterance",
]
