"""The event base class and the registry of event kinds.

Every event is a pydantic model with a literal `kind`, the simulated time `t` (seconds since the
episode's start) and the acting `agent` (None for the world or the engine). Defining a subclass
registers its kind, so the reader can load it back typed.

Kinds defined outside the kernel (a benchmark's own, in its tasks package) are found through the
entry point group `sandbox.events`: `event_type` imports every module the group names the first
time it meets a kind it does not know. A module that fails to import is logged and recorded in
`FAILED_PLUGINS`; its kinds are then read as `UnknownEvent`, and the log is still read.
"""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint, entry_points
from threading import RLock
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

EVENT_TYPES: dict[str, type[Event]] = {}

PLUGIN_GROUP = "sandbox.events"

# Simulated seconds a log may hold: never negative, and bounded so that the start time plus `t`
# is still a date (a corrupt line with t = -6e10 crashed the viewer's clock).
SIM_SECONDS = Field(ge=0, le=1e10, allow_inf_nan=False)


class Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    t: float = SIM_SECONDS
    agent: str | None = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        field = cls.model_fields.get("kind")
        kind = field.default if field is not None else None
        if isinstance(kind, str) and kind:
            if kind in EVENT_TYPES and EVENT_TYPES[kind].__qualname__ != cls.__qualname__:
                raise TypeError(f"event kind {kind!r} defined twice")
            EVENT_TYPES[kind] = cls


class UnknownEvent(Event):
    """An event of a kind this version does not know (a newer log): kept, not typed."""

    model_config = ConfigDict(extra="allow")


class FailedPlugin(NamedTuple):
    """An entry point of `PLUGIN_GROUP` whose module did not import, and why."""

    name: str
    module: str
    error: str


FAILED_PLUGINS: list[FailedPlugin] = []
_plugins_loaded = False
# Reentrant: a plug-in that reads a kind while it is being imported must not wait on itself;
# the lock only keeps a second thread (the viewer's reader) from seeing a half-loaded registry.
_plugins_lock = RLock()


def plugin_entry_points() -> list[EntryPoint]:
    """The installed entry points of `PLUGIN_GROUP` (a function, so a test can swap them)."""
    return list(entry_points(group=PLUGIN_GROUP))


def load_event_plugins() -> list[FailedPlugin]:
    """Import every module of the `sandbox.events` entry points, once per process, so that
    their kinds are in `EVENT_TYPES`. Call it before enumerating kinds; `event_type` calls it
    on its first miss. Returns the plug-ins that failed (also in `FAILED_PLUGINS`)."""
    global _plugins_loaded
    with _plugins_lock:
        if not _plugins_loaded:
            # set first: a plug-in that looks a kind up while importing must not start over
            _plugins_loaded = True
            for point in plugin_entry_points():
                _load_plugin(point)
    return FAILED_PLUGINS


def _load_plugin(point: EntryPoint) -> None:
    try:
        point.load()  # importing the module defines its Event subclasses, which register
    except Exception as exc:  # whatever a plug-in raises, the log is still read
        failure = FailedPlugin(point.name, point.value, f"{type(exc).__name__}: {exc}")
        FAILED_PLUGINS.append(failure)
        log.warning("event plug-in %r (%s, entry point group %s) failed to import, so its "
                    "kinds are read as unknown events: %s", failure.name, failure.module,
                    PLUGIN_GROUP, failure.error)


def event_type(kind: str) -> type[Event]:
    """The class of events of `kind`: a registered one (after loading the plug-ins, the first
    time a kind is missing), else `UnknownEvent`."""
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        load_event_plugins()
        cls = EVENT_TYPES.get(kind, UnknownEvent)
    return cls
