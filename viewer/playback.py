"""The time cursor: play/pause, speed, scrub, step, and following a run that is still written.

Pure state, no pygame: the window and the exporter both drive it, and tests can too.
"""

from __future__ import annotations

from dataclasses import dataclass

# Simulated seconds per wall second. 1x is real time; a town day needs the high end.
SPEEDS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


@dataclass
class Playback:
    start: float = 0.0
    end: float = 0.0
    t: float = 0.0
    speed: float = 1.0
    playing: bool = False
    live: bool = False  # the run may still grow: stay at its end when already there

    def tick(self, wall_seconds: float) -> None:
        """Advance by `wall_seconds` of wall time at the current speed."""
        if self.playing:
            self.seek(self.t + wall_seconds * self.speed)
            if self.t >= self.end and not self.live:
                self.playing = False  # a finished run stops at its end

    def seek(self, t: float) -> None:
        self.t = min(max(t, self.start), self.end)

    def toggle(self) -> None:
        if not self.playing and self.t >= self.end and not self.live:
            self.t = self.start  # play again from the beginning
        self.playing = not self.playing

    def faster(self) -> None:
        self.speed = next((s for s in SPEEDS if s > self.speed), SPEEDS[-1])

    def slower(self) -> None:
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])

    @property
    def at_end(self) -> bool:
        return self.t >= self.end

    def extend(self, end: float) -> None:
        """New events arrived: a cursor that was at the end follows them (live follow)."""
        following = self.at_end and self.live
        self.end = max(self.end, end)
        if following and not self.playing:
            self.t = self.end
