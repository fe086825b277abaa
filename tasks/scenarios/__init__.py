"""Named scenarios for `sandbox run <name>`: each maps a name to a builder taking CLI options."""

from __future__ import annotations

from .single_room import SingleRoomScenario
from .town_day import town_day

SCENARIOS = {
    "single_room": SingleRoomScenario.from_file,
    "town_day": town_day,
}
