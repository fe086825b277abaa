"""Events of STSS social-task episodes (tasks/stss): which task the performer was given.

The full instantiated task lives in the run header (`config.stss_task`), which is what scorers
read; this event puts the moment of injection on the timeline for viewers and log readers.

Its kinds reach the log reader through the entry point `stss` of the group `sandbox.events`
(pyproject.toml): the reader imports this module on the first kind it does not know.
"""

from __future__ import annotations

from typing import Literal

from sandbox.events.base import Event


class TaskAssigned(Event):
    """The performer (`agent`) was given a social task: injected into `currently` (and, with
    TDP, into its task planner)."""

    kind: Literal["task_assigned"] = "task_assigned"
    template: str
    task_type: str
    goal: str
    criteria: str
    architecture: str = ""


class SummaryWritten(Event):
    """A character's own summary of a conversation (the STSS language level's summary level:
    the performer's partner summarises, and the goal conditions are judged on it)."""

    kind: Literal["summary_written"] = "summary_written"
    conversation: str
    text: str
