"""Typed events of the episode log. One module per family of kinds; importing this package
registers the kernel's own (conversations, the world, the agents' minds), so the log reader (and
the viewer, and scorers) know them.

To add a kind: subclass `Event` with `kind: Literal["my_kind"] = "my_kind"`. A kernel kind goes
in a module here, imported below. A package's own kinds (a benchmark's, say) stay in that package:
it names the module that defines them under the entry point group `sandbox.events` in its
pyproject.toml,

    [project.entry-points."sandbox.events"]
    my_bench = "my_package.events"

and `event_type` imports it the first time the log holds a kind the kernel does not know
(reinstall the package to pick a new entry point up). Code that lists every kind calls
`load_event_plugins()` first.
"""

from . import agent  # noqa: F401  (registers plans, actions, memories, reflections)
from .base import (
    EVENT_TYPES,
    FAILED_PLUGINS,
    PLUGIN_GROUP,
    Event,
    FailedPlugin,
    UnknownEvent,
    event_type,
    load_event_plugins,
)
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
    "EVENT_TYPES", "FAILED_PLUGINS", "PLUGIN_GROUP", "AgentJoined", "ConversationEnded",
    "ConversationStarted", "EpisodeEnded", "Event", "FailedPlugin", "UnknownEvent", "Utterance",
    "event_type", "load_event_plugins",
]
