"""The engine kernel: a SimPy clock mapped to a simulated datetime, one seeded generator, and a
run loop that puts every LLM call asked at the same simulated instant in flight together.

Agents are SimPy processes. To ask the model, a process yields `engine.ask(request)` and receives
the `Completion`. The run loop first lets every process due at the current instant run until it
waits; then it sends all pending requests at once (a thread pool bounded by the backend's
`max_concurrency`) and resumes the waiting processes in the order they asked. Because SimPy runs
same-time events in FIFO order and results are applied in request order, a run is deterministic
for a given seed and answers, however the threads finish.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import simpy

from .budget import Budget
from .events import Event
from .llm import CallLog, Completion, LLMRequest, timed_complete
from .log import EpisodeLog

Process = Generator[simpy.Event, Any, Any]

# Ctrl-C reaches only the main thread. A suite running episodes in other threads (--jobs) sets
# this on Ctrl-C: each of those episodes stops at its next step, as the main thread's would
# (KeyboardInterrupt; result.json says "interrupted").
INTERRUPT = threading.Event()


class SimClock:
    """Simulated seconds since the start <-> simulated datetimes."""

    def __init__(self, start: datetime):
        self.start = start

    def at(self, t: float) -> datetime:
        return self.start + timedelta(seconds=t)

    def seconds(self, when: datetime) -> float:
        return (when - self.start).total_seconds()


class _Environment(simpy.Environment):
    def schedule_at(self, event: simpy.Event, at: float) -> None:
        """Schedule `event` at the simulated time `at` exactly, as a timeout (NORMAL
        priority, after everything already scheduled then)."""
        heapq.heappush(self._queue, (at, simpy.core.NORMAL, next(self._eid), event))


class _TimeoutAt(simpy.Event):
    """A timeout due at an exact time. A restored checkpoint schedules its processes' waits
    again with these: `now + (at - now)` may round to another float than `at`."""

    def __init__(self, env: _Environment, at: float):
        if at < env.now:
            raise ValueError(f"a timeout at {at} is before now ({env.now})")
        super().__init__(env)
        self._ok, self._value = True, None  # as a Timeout is: already triggered, no value
        env.schedule_at(self, at)


class Engine:
    def __init__(self, *, llm, seed: int, start_time: datetime, log: EpisodeLog | None = None,
                 calls: CallLog | None = None, max_concurrency: int | None = None,
                 budgets: list[Budget] | None = None, now: float = 0.0):
        """`now`: the simulated second it starts at (a restored checkpoint's; else 0)."""
        self.env = _Environment(initial_time=now)
        self.clock = SimClock(start_time)
        self.seed = seed
        self.rng = np.random.default_rng(seed)  # the episode's only source of randomness
        self.llm = llm
        self.log = log
        self.calls = calls if calls is not None else CallLog()
        self.max_concurrency = max(1, max_concurrency or llm.max_concurrency)
        self.budgets = [b for b in budgets or [] if b.capped]  # the episode's, the suite's
        self._pending: list[tuple[LLMRequest, Any, simpy.Event]] = []
        # A run restored from a checkpoint (sandbox/runner.py): its time, and the events,
        # calls and cached calls it carried over; empty for a run from the start.
        self.restored: dict[str, float] = {}
        self._subscribers: list[Callable[[Event], None]] = []
        # The threads a round's calls go out on, kept for one `run`: starting new ones for every
        # round cost a 4,000-resident day 25 s of its 300 (15,870 rounds).
        self._pool: ThreadPoolExecutor | None = None

    # -- time ---------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.env.now

    @property
    def now_datetime(self) -> datetime:
        return self.clock.at(self.env.now)

    def timeout(self, seconds: float) -> simpy.Event:
        return self.env.timeout(seconds)

    def process(self, generator: Process) -> simpy.Process:
        return self.env.process(generator)

    def timeout_at(self, at: float) -> simpy.Event:
        """A timeout due at simulated second `at` exactly (restoring a checkpoint)."""
        return _TimeoutAt(self.env, at)

    def scheduled(self) -> list[tuple[float, simpy.Event]]:
        """The events scheduled and not yet processed, in the order they will be: between two
        instants, the timeouts the processes wait on (a checkpoint saves them so)."""
        return [(at, event) for at, _priority, _eid, event in sorted(self.env._queue)]

    # -- log ----------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], None]) -> None:
        """Call `callback` with every event as it is emitted (live console output, viewers)."""
        self._subscribers.append(callback)

    def emit(self, event: Event) -> Event:
        if self.log is not None:
            self.log.emit(event)
        for callback in self._subscribers:
            callback(event)
        return event

    # -- LLM ----------------------------------------------------------------------------------
    def ask(self, request: LLMRequest, llm=None) -> simpy.Event:
        """An event that fires with the Completion; yield it from an agent process.

        `llm` defaults to the episode's model; agents with a model of their own (a player and
        a judge of different models) pass theirs. A Router (sandbox/llm/roles.py) picks the
        role's model for this request.
        """
        if request.seed is None:
            # Drawn in ask order, which SimPy makes deterministic.
            request = request.model_copy(update={"seed": int(self.rng.integers(2**31 - 1))})
        done = self.env.event()
        llm = llm or self.llm
        pick = getattr(llm, "pick", None)
        self._pending.append((request, pick(request) if pick is not None else llm, done))
        return done

    def _dispatch(self) -> None:
        batch, self._pending = self._pending, []
        for budget in self.budgets:  # in ask order, before anything is sent: deterministic
            budget.reserve(len(batch))

        def call(item) -> Completion:
            request, llm, _ = item
            return timed_complete(llm, request)

        if self.max_concurrency > 1 and len(batch) > 1:
            # A backend that allows fewer connections (local llama.cpp) serialises on its lock.
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.max_concurrency)
            results: list[Completion] = list(self._pool.map(call, batch))
        else:
            results = [call(item) for item in batch]
        for (request, llm, done), completion in zip(batch, results, strict=True):
            self.calls.record(request, completion, t=self.env.now, model=llm.model_id,
                              role=getattr(llm, "role", None),
                              endpoint=getattr(llm, "endpoint", None))
            for budget in self.budgets:
                budget.spend_tokens(completion.usage.prompt_tokens
                                    + completion.usage.completion_tokens)
            done.succeed(completion)

    # -- run loop -----------------------------------------------------------------------------
    def run(self, until: float | None = None) -> None:
        """Run until no event is left or the next one is later than `until` (sim seconds)."""
        try:
            self._run(until)
        finally:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None

    def _run(self, until: float | None) -> None:
        env = self.env
        limit = math.inf if until is None else until
        while True:
            if INTERRUPT.is_set():
                raise KeyboardInterrupt
            while env.peek() == env.now:  # everything due now runs until it waits
                env.step()
            if self._pending:
                self._dispatch()  # resumes the askers at the same instant
                continue
            nxt = env.peek()
            if nxt == math.inf or nxt > limit:
                break
            env.step()
