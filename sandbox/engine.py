"""The engine kernel: SimPy clocks mapped to a simulated datetime, a seeded stream per resident,
and a run loop that keeps as many LLM calls in flight as the residents' real dependencies allow.

Each resident is a *logical process* (LP) with a SimPy environment of its own; whatever belongs
to no resident runs in the kernel LP. Agents are SimPy processes of their resident's LP. To ask
the model, a process yields `engine.ask(request)` and receives the `Completion`. An LP's next
step has a key (time, round, level, index); a resident may take its step when no LP with a
smaller key could be in its arena by then (`Reach`), so residents that cannot meet run ahead of
each other with their calls in flight together. Events and calls are written in key order, so
a run is the same for a given seed and answers, whatever order the answers come back in and
whichever schedule ran it. sandbox/README.md, "Running ahead", has the design and why it is safe.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import math
import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import chain
from typing import Any, Protocol

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

SCHEDULES = ("ahead", "lockstep")
SCHEDULE_ENV = "SANDBOX_SCHEDULE"  # `--schedule` sets it for a command
KERNEL = ""  # the kernel LP's name: what runs in no resident
_INF = (math.inf, 0, 0, 0)
RECENT_ANSWERS = 64  # an LP's last answers kept for `Engine.answers`


def schedule_setting() -> str:
    """The schedule runs use: $SANDBOX_SCHEDULE (`--schedule`), else "ahead"."""
    text = os.environ.get(SCHEDULE_ENV, "").strip() or "ahead"
    if text not in SCHEDULES:
        raise ValueError(f"{SCHEDULE_ENV}={text!r}: must be one of {', '.join(SCHEDULES)}")
    return text


class SimClock:
    """Simulated seconds since the start <-> simulated datetimes."""

    def __init__(self, start: datetime):
        self.start = start

    def at(self, t: float) -> datetime:
        return self.start + timedelta(seconds=t)

    def seconds(self, when: datetime) -> float:
        return (when - self.start).total_seconds()


@dataclass
class Behind:
    """The residents behind a step, in key order: the first `count` of a pass's `order` (every
    resident's (key, LP), sorted), with the keys they were sorted by (`keys`) and the LPs by
    name (`lps`), so a world can look up those near a place without going through everyone."""

    order: list[tuple[tuple, LP]]
    count: int
    keys: dict[LP, tuple]
    lps: dict[str, LP]
    # resident -> the residents it holds (a conversation's partner, whose queue is empty
    # until its initiator ends it: behind nobody, it is where its holder is in time)
    holds: dict[str, list[str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.count

    def until(self, t: float) -> int:
        """How many of them are at `t` or earlier (they come first)."""
        return bisect.bisect_right(self.order, ((t, math.inf),), 0, self.count)

    def entries(self, start: int, stop: int) -> Iterator[tuple[str, float]]:
        """(name, time) of those from `start` to `stop` in key order: the time from which what
        it does can show (its key's, or later while it keeps to itself: `Engine.aside`)."""
        order = self.order
        for i in range(start, stop):
            key, lp = order[i]
            yield lp.name, (key[0] if lp.quiet_until <= key[0] else lp.quiet_until)

    def earliest(self) -> float:
        """The time of the one furthest behind (nobody behind does anything before it)."""
        return self.order[0][0][0]

    def time_of(self, name: str) -> float | None:
        """The time `name` is at, if it is behind; else None."""
        lp = self.lps.get(name)
        key = self.keys.get(lp) if lp is not None else None
        if key is None or not self.count or key > self.order[self.count - 1][0]:
            return None
        return key[0] if lp.quiet_until <= key[0] else lp.quiet_until


class Reach(Protocol):
    """What the engine asks of a world to let residents run ahead."""

    def meets(self, resident: str, t: float, behind: Behind) -> str | None:
        """One of those `behind` that could be in the arena `resident` is in by `t`
        (`resident` itself when the world cannot tell); None: nobody."""

    def horizon(self) -> float:
        """Seconds beyond which nobody can be from whoever is furthest behind: anyone could be
        anywhere by then (a step further ahead is not even looked at)."""

    def goes(self, resident: str, t: float) -> None:
        """`resident` takes its step at `t`, `meets` having found nobody: the world holds
        every later move to what that assumed (and tells `Engine.overtook` if one breaks it)."""


class _Environment(simpy.Environment):
    """One LP's SimPy environment. Its queue's priority holds the event's *level* as well
    (level * 2 + SimPy's priority): what one LP triggers in another at one instant comes a
    level after the step that triggered it (sandbox/README.md, "The key of a step")."""

    def __init__(self, engine: Engine, initial_time: float):
        super().__init__(initial_time=initial_time)
        self.engine = engine
        self.lp: LP | None = None  # whose clock it is
        self.level = 0  # of the event being processed (or last processed)

    def schedule(self, event: simpy.Event, priority=simpy.core.NORMAL, delay: float = 0) -> None:
        source = self.engine._running
        if source is None or source.env is self:
            at, level = self._now + delay, (self.level if delay == 0 else 0)
        else:  # another LP's step triggers one of ours: at its time, a level after it
            at = source.env._now + delay
            self.lp.depth = max(self.lp.depth, source.depth)
            self.engine._woken = True  # its key may have come down: keys sorted again
            level = source.env.level + 1 if delay == 0 else 0
            if at < self._now:
                raise RuntimeError(f"an event at {at} s for an LP already at {self._now} s")
        heapq.heappush(self._queue, (at, level * 2 + int(priority), next(self._eid), event))
        self.engine._changed.add(self.lp)

    def schedule_at(self, event: simpy.Event, at: float) -> None:
        """Schedule `event` at the simulated time `at` exactly, as a timeout (level 0, NORMAL
        priority, after everything already scheduled then)."""
        heapq.heappush(self._queue, (at, simpy.core.NORMAL, next(self._eid), event))
        self.engine._changed.add(self.lp)

    def step(self) -> None:
        if self._queue:
            self.level = self._queue[0][1] // 2
        super().step()

    def head(self) -> tuple[float, int]:
        """(time, level) of the next event; (inf, 0) when none."""
        if not self._queue:
            return math.inf, 0
        at, priority, _eid, _event = self._queue[0]
        return at, priority // 2


class _Held(simpy.Event):
    """An event of one resident's that another holds it by (`Engine.event_for(by=...)`):
    triggering it lets it go."""

    def __init__(self, env: _Environment, engine: Engine):
        super().__init__(env)
        self.engine = engine

    def succeed(self, value=None):
        self.engine._release(self.env.lp.name)
        return super().succeed(value)


class _TimeoutAt(simpy.Event):
    """A timeout due at an exact time. A restored checkpoint schedules its processes' waits
    again with these: `now + (at - now)` may round to another float than `at`."""

    def __init__(self, env: _Environment, at: float):
        if at < env.now:
            raise ValueError(f"a timeout at {at} is before now ({env.now})")
        super().__init__(env)
        self._ok, self._value = True, None  # as a Timeout is: already triggered, no value
        env.schedule_at(self, at)


@dataclass
class _Ask:
    # (time, round, level, index, n): its answer comes at the round after the one it was
    # asked in (the key's first four), and its record goes in calls.jsonl by all five
    key: tuple
    depth: int  # of its chain of calls (the asker's so far, and itself)
    request: LLMRequest
    llm: Any
    done: simpy.Event
    asker: LP
    future: Future | None = None


@dataclass(eq=False)  # one of each: compared and hashed as itself
class LP:
    """A logical process: a resident (or the kernel) with its own clock and stream."""

    name: str
    index: int
    env: _Environment
    stream: np.random.Generator
    emitted: int = 0  # its events so far (the last part of their keys)
    asked: int = 0  # its calls so far
    asks: list[_Ask] = field(default_factory=list)  # waiting for answers
    pending: int = 0  # of its asks, those not back yet (sent or not)
    # The rounds of calls it has had answered at its current instant (`at`): its steps at one
    # instant between two answers are that instant's rounds, as in lockstep.
    at: float = -math.inf
    round: int = 0
    # The longest chain of calls its state waited on so far (its own answers, what it was
    # woken by, whom it perceived), and what its answers handed over bring, taken at its next
    # step: the critical path's measure, the same in any schedule.
    depth: int = 0
    answered_depth: int = 0
    # Its steps keep to themselves (`Engine.aside`): they go on whoever is behind. What
    # others read of it is what it showed when it went aside, its depth then included.
    aside: bool = False
    shown_depth: int | None = None
    # Nothing it does shows before this time (its steps aside until then: a conversation's
    # next line or end is a line's time away); the rule reads it as there from then on.
    quiet_until: float = -math.inf
    quiet_seen: float = -math.inf  # as the order last saw it (`_sort`)
    # Its answers so far, and the last of them with what they were asked (`Engine.answers`),
    # kept from the first time it asks `answers` on: a town's residents never do, and 64
    # prompts kept for each of 1,000 were a third of a megabyte a resident.
    answered: int = 0
    recent: deque | None = None

    def head(self) -> tuple[float, int, int, int]:
        """The key of its first event: (time, round, level, index)."""
        time, level = self.env.head()
        return time, (self.round if time == self.at else 0), level, self.index

    def key(self) -> tuple[float, int, int, int]:
        """Its next step's key: its first event's, or its calls' answers' when they come
        first."""
        head = self.head()
        return min(head, self.asks[0].key[:4]) if self.asks else head

    def steppable(self) -> bool:
        """Its first event comes before the answers it waits on (its other processes at this
        round run until they wait too)."""
        return not self.asks or self.head() < self.asks[0].key[:4]

    def answerable(self) -> bool:
        """Every call it waits on is back and nothing of it comes before their answers: they
        are handed over at one point of its own order, whenever they arrived."""
        return bool(self.asks) and not self.pending and self.head() > self.asks[0].key[:4]


def stream_seed(seed: int, name: str) -> list[int]:
    """A resident's stream from the episode's seed and its name (not its place in the list, so
    a town that gains a resident keeps everyone else's draws)."""
    return [seed, int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")]


class Engine:
    def __init__(self, *, llm, seed: int, start_time: datetime, log: EpisodeLog | None = None,
                 calls: CallLog | None = None, max_concurrency: int | None = None,
                 budgets: list[Budget] | None = None, now: float = 0.0,
                 schedule: str | None = None):
        """`now`: the simulated second it starts at (a restored checkpoint's; else 0);
        `schedule`: "ahead" (residents run ahead of each other where nothing can meet them)
        or "lockstep" (one simulated instant at a time), the same files either way [default:
        `schedule_setting()`]. A run with a budget goes in lockstep: its rounds, whatever the
        answers' order, so a cap stops it at the same call every time."""
        schedule = schedule or schedule_setting()
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule {schedule!r}: one of {', '.join(SCHEDULES)}")
        self.clock = SimClock(start_time)
        self.seed = seed
        self.llm = llm
        self.log = log
        self.calls = calls if calls is not None else CallLog()
        self.max_concurrency = max(1, max_concurrency or llm.max_concurrency)
        self.budgets = [b for b in budgets or [] if b.capped]  # the episode's, the suite's
        self.schedule = "lockstep" if self.budgets else schedule
        self._running: LP | None = None  # the LP whose event is being processed
        self._kernel = self._new_lp(KERNEL, -1, now, np.random.default_rng(seed))
        self._lps: dict[str, LP] = {KERNEL: self._kernel}
        self._current = self._kernel  # whose code runs: the running LP, or one `resident` opened
        self.reach: Reach | None = None  # a town's: who could meet whom (None: anyone)
        # What was emitted and answered, by key, until no LP can emit anything before it.
        self._events: list[tuple[tuple, Event]] = []
        self._records: list[tuple[tuple, _Ask, Completion]] = []
        self._in_run = False
        self._woken = False  # an LP's step triggered an event of another's (_advance)
        # Every LP's key as last computed, the residents' (key, LP) in key order, and the LPs
        # whose key may have changed since (an event scheduled, a step taken, a call asked or
        # answered): a pass computes only those and moves only them in the order (a
        # 400-resident town's passes asked every LP 1,900,000 times; sorting every key every
        # pass cost a 1,000-resident day a fifth of its time).
        self._keys: dict[LP, tuple] = {}
        self._order: list[tuple[tuple, LP]] = []
        self._changed: set[LP] = set()
        self._kernel_key = _INF  # as _advance's pass began
        # A step that must wait, and the LP behind that could reach it: the step is not looked
        # at again until one of the two changes (`_parked`: who waits on whom); then the one
        # it met is asked first (`_hint`).
        self._met: dict[LP, LP] = {}
        self._parked: dict[LP, list[LP]] = {}
        self._hint: dict[LP, LP] = {}
        # Who holds whom (`event_for(by=...)`): holder -> held, held -> holder, by name.
        self._holds: dict[str, list[str]] = {}
        self._held: dict[str, str] = {}
        # A run restored from a checkpoint (sandbox/runner.py): its time, and the events,
        # calls and cached calls it carried over; empty for a run from the start.
        self.restored: dict[str, float] = {}
        self._subscribers: list[Callable[[Event], None]] = []
        # The threads calls go out on, kept for one `run`: starting new ones for every round
        # cost a 4,000-resident day 25 s of its 300 (15,870 rounds).
        self._pool: ThreadPoolExecutor | None = None
        # The calls of this `run`: those asked and not sent, the residents waiting on some,
        # and the answers back (a call's future puts its asker in `_back` on the pool's
        # thread; the run loop takes them): the loop looks at what changed, not at every
        # call in flight (a 1,000-resident town keeps hundreds in flight, each looked at
        # thousands of times).
        self._unsent: list[_Ask] = []
        self._asking: set[LP] = set()
        self._back: queue.SimpleQueue = queue.SimpleQueue()
        self._in_flight = 0
        # How the run went (sandbox log reads it from calls.jsonl; benchmarks from here).
        self.rounds = 0  # lockstep: rounds of calls; ahead: times calls went out
        self.peak_in_flight = 0
        # Moves the rule had said could not happen (a resident into a place some step ahead
        # went on assuming nobody could reach in time): each a run that may differ from
        # lockstep, said in result.json's warnings (never seen in a test; the net under it).
        self.overtaken: list[str] = []

    # -- logical processes ---------------------------------------------------------------------
    def register(self, names: list[str]) -> None:
        """The residents, in the order the episode lists them (their index in every key).
        Called once, before any of them runs; names already known keep their place."""
        for name in names:
            if name not in self._lps:
                self._lps[name] = self._new_lp(
                    name, len(self._lps) - 1, self._kernel.env.now,
                    np.random.default_rng(stream_seed(self.seed, name)))

    def _new_lp(self, name: str, index: int, now: float, stream: np.random.Generator) -> LP:
        lp = LP(name, index, _Environment(self, now), stream)
        lp.env.lp = lp
        return lp

    @contextmanager
    def resident(self, name: str) -> Iterator[None]:
        """Run what is inside as resident `name`'s: the processes, timeouts and events it
        creates are its own, on its clock."""
        self.register([name])
        before, self._current = self._current, self._lps[name]
        try:
            yield
        finally:
            self._current = before

    def residents(self) -> list[str]:
        return [name for name in self._lps if name != KERNEL]

    def answers(self, since: int | None = None
                ) -> tuple[int, list[tuple[LLMRequest, Completion]]]:
        """How many answers the running LP has had, and those after the first `since` (of
        the last RECENT_ANSWERS): what a process asked and got back, at once, in its own order
        (calls.jsonl gets them later, in the run's written order). An LP keeps them from its
        first call of this on; `since` None: the count alone (and none of them)."""
        lp = self._current
        if lp.recent is None:  # kept from now on
            lp.recent = deque(maxlen=RECENT_ANSWERS)
        if since is None:
            return lp.answered, []
        kept = lp.answered - len(lp.recent)
        if since < kept:
            raise ValueError(f"answers from {since} on are no longer kept (from {kept})")
        return lp.answered, list(lp.recent)[since - kept:]

    def saw(self, names: list[str]) -> None:
        """The running resident perceived these residents: what it does next waits on what
        they did (the critical path's measure; `WorldState.sharing_arena` says so): what
        they showed, for one that keeps to itself (`aside`) the step it went aside in."""
        lp = self._current
        for name in names:
            other = self._lps.get(name)
            if other is not None:
                shown = other.depth if other.shown_depth is None else other.shown_depth
                lp.depth = max(lp.depth, shown)

    def aside(self, on: bool, quiet_for: float = 0.0) -> None:
        """From the running resident's next step on (`on`), until called with False: its
        steps read nothing anyone else can change and change nothing anyone else reads (a
        town conversation's lines: its two speakers unavailable, standing where they are),
        so they go on whoever is behind (sandbox/README.md, "Steps that keep to
        themselves"). Others read it as it was when it first went aside until `shows`;
        `quiet_for`: none of its steps for so many seconds from now shows anything (its
        next line, or the conversation's end, is a line's time away). The kernel's steps
        never do: it can reach everyone."""
        lp = self._current
        if lp is self._kernel:
            return
        lp.aside = on
        if on and lp.shown_depth is None:
            lp.shown_depth = lp.depth
        if on and quiet_for > 0:
            lp.quiet_until = max(lp.quiet_until, lp.env.now + quiet_for)
            self._changed.add(lp)

    def shows(self) -> None:
        """The running resident's step changes what others read of it (a conversation's
        end): from now on they read it as it is."""
        lp = self._current
        lp.shown_depth, lp.quiet_until = None, -math.inf

    def event_for(self, name: str, by: str | None = None) -> simpy.Event:
        """An event resident `name`'s processes can wait on (another resident triggers it).
        `by`: the resident who will trigger it and holds `name` until then (a conversation's
        initiator its partner): `name` is read where it stands at `by`'s time (Behind.holds)."""
        self.register([name] + ([by] if by is not None else []))
        target = self._lps[name]
        if by is None or by == name:
            return target.env.event()
        self._release(name)
        self._holds.setdefault(by, []).append(name)
        self._held[name] = by
        return _Held(target.env, self)

    def _release(self, name: str) -> None:
        holder = self._held.pop(name, None)
        if holder is not None:
            held = self._holds[holder]
            held.remove(name)
            if not held:
                del self._holds[holder]

    @property
    def env(self) -> _Environment:
        return self._current.env

    @property
    def rng(self) -> np.random.Generator:
        """The stream of whose code runs: a resident's own, or the episode's."""
        return self._current.stream

    def streams(self) -> dict[str, dict]:
        """Every LP's generator state (a checkpoint keeps them)."""
        return {lp.name: lp.stream.bit_generator.state for lp in self._lps.values()}

    def set_streams(self, states: dict[str, dict]) -> None:
        self.register([name for name in states if name != KERNEL])
        for name, state in states.items():
            self._lps[name].stream.bit_generator.state = state

    def depths(self) -> dict[str, int]:
        """Every LP's chain of calls so far (a checkpoint keeps them: the calls after it count
        on from there, as in a run never stopped)."""
        return {lp.name: max(lp.depth, lp.answered_depth) for lp in self._lps.values()}

    def shown(self) -> dict[str, list]:
        """The residents read as they were when they went aside, with that depth, whether
        their steps still keep to themselves and until when nothing of them shows (a
        checkpoint keeps them: readers after it read what they read before)."""
        return {lp.name: [lp.shown_depth, lp.aside, lp.quiet_until] for lp in self._lps.values()
                if lp.shown_depth is not None}

    def set_shown(self, shown: dict[str, list]) -> None:
        self.register(list(shown))
        for name, (depth, aside, quiet) in shown.items():
            lp = self._lps[name]
            lp.shown_depth, lp.aside, lp.quiet_until = int(depth), bool(aside), float(quiet)

    def set_depths(self, depths: dict[str, int]) -> None:
        self.register([name for name in depths if name != KERNEL])
        for name, depth in depths.items():
            self._lps[name].depth = int(depth)

    def overtook(self, what: str) -> None:
        """The world saw a move the rule had said could not happen (`Reach.goes`)."""
        self.overtaken.append(what)

    # -- time ---------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self._current.env.now

    @property
    def now_datetime(self) -> datetime:
        return self.clock.at(self.now)

    def timeout(self, seconds: float) -> simpy.Event:
        return self.env.timeout(seconds)

    def process(self, generator: Process) -> simpy.Process:
        return self.env.process(generator)

    def timeout_at(self, at: float) -> simpy.Event:
        """A timeout due at simulated second `at` exactly (restoring a checkpoint)."""
        return _TimeoutAt(self.env, at)

    def scheduled(self) -> list[tuple[float, simpy.Event, str]]:
        """The events scheduled and not yet processed, LP by LP (kernel first), each LP's in
        the order they will be, with the LP's name: between two instants, the timeouts the
        processes wait on (a checkpoint saves them so)."""
        return [(at, event, lp.name) for lp in self._lps.values()
                for at, _priority, _eid, event in sorted(lp.env._queue)]

    # -- log ----------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], None]) -> None:
        """Call `callback` with every event as it is written (live console output, viewers)."""
        self._subscribers.append(callback)

    def emit(self, event: Event) -> Event:
        lp = self._current
        lp.emitted += 1
        heapq.heappush(self._events, ((lp.env.now, lp.round if lp.env.now == lp.at else 0,
                                       lp.env.level, lp.index, lp.emitted), event))
        if not self._in_run:
            self._flush(_INF)
        return event

    def _flush(self, below: tuple) -> None:
        """Write every event and call record whose key is below `below`, in key order."""
        while self._events and self._events[0][0][:4] < below:
            _key, event = heapq.heappop(self._events)
            if self.log is not None:
                self.log.emit(event)
            for callback in self._subscribers:
                callback(event)
        while self._records and self._records[0][0][:4] < below:
            _key, ask, completion = heapq.heappop(self._records)
            llm = ask.llm
            # a resident's call has a depth; the kernel's (a single room's) none: their
            # calls.jsonl reads as before residents ran ahead
            self.calls.record(ask.request, completion, t=ask.key[0], model=llm.model_id,
                              role=getattr(llm, "role", None),
                              endpoint=getattr(llm, "endpoint", None),
                              depth=ask.depth if ask.key[3] >= 0 else None)

    # -- LLM ----------------------------------------------------------------------------------
    def ask(self, request: LLMRequest, llm=None) -> simpy.Event:
        """An event that fires with the Completion; yield it from an agent process.

        `llm` defaults to the episode's model; agents with a model of their own (a player and
        a judge of different models) pass theirs. A Router (sandbox/llm/roles.py) picks the
        role's model for this request.
        """
        lp = self._current
        if request.seed is None:  # from the asker's stream, in its own ask order
            request = request.model_copy(update={"seed": int(lp.stream.integers(2**31 - 1))})
        done = lp.env.event()
        llm = llm or self.llm
        pick = getattr(llm, "pick", None)
        lp.asked += 1
        self._changed.add(lp)
        now = lp.env.now
        answered = (lp.round if now == lp.at else 0) + 1  # the round its answer starts
        ask = _Ask((now, answered, lp.env.level, lp.index, lp.asked), lp.depth + 1, request,
                   pick(request) if pick is not None else llm, done, lp)
        lp.asks.append(ask)
        lp.pending += 1
        self._unsent.append(ask)
        self._asking.add(lp)
        return done

    def _send(self) -> None:
        """Put every call asked and not yet sent in flight (the budgets reserve them first,
        in key order)."""
        if not self._unsent:
            return
        asks, self._unsent = sorted(self._unsent, key=lambda a: a.key), []
        for budget in self.budgets:
            budget.reserve(len(asks))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.max_concurrency)
        back = self._back
        for ask in asks:
            ask.future = self._pool.submit(timed_complete, ask.llm, ask.request)
            ask.future.add_done_callback(lambda _future, lp=ask.asker: back.put(lp))
        self._in_flight += len(asks)
        self.rounds += 1

    def _take_back(self, block: bool) -> None:
        """Count the answers back since the loop last looked (waiting for one if `block`). The
        run loop is the queue's one reader: while it is not empty, a get never waits."""
        back = [self._back.get()] if block else []
        while not self._back.empty():
            back.append(self._back.get())
        for lp in back:
            lp.pending -= 1
        self._in_flight -= len(back)

    def _answer(self, lp: LP) -> None:
        """Hand an LP its answers, in its ask order (all of them are back)."""
        asks, lp.asks = lp.asks, []
        self._asking.discard(lp)
        lp.at, lp.round = asks[0].key[0], asks[0].key[1]  # its next round at this instant
        self._changed.add(lp)
        self._running = lp
        try:
            for ask in asks:
                completion = ask.future.result()  # an exception of the call is the run's
                heapq.heappush(self._records, (ask.key, ask, completion))
                lp.answered_depth = max(lp.answered_depth, ask.depth)
                lp.answered += 1
                if lp.recent is not None:
                    lp.recent.append((ask.request, completion))
                for budget in self.budgets:
                    budget.spend_tokens(completion.usage.prompt_tokens
                                        + completion.usage.completion_tokens)
                lp.env.level = ask.key[2]  # its answer comes at the level that asked
                ask.done.succeed(completion)
        finally:
            self._running = None

    # -- the rule: when an LP may go on --------------------------------------------------------
    def _may_go(self, lp: LP, key: tuple, floor: tuple) -> bool:
        """Whether `lp` may take its step of `key`: no LP with a smaller key (`floor` the
        smallest of all, `_order` the residents' sorted) could reach it by then
        (sandbox/README.md, "The rule")."""
        if floor >= key:
            return True
        if lp is self._kernel or self._kernel_key < key or self.reach is None:
            return False
        if lp.aside:  # its step reads and changes nothing of anyone else's
            return True
        reach, keys = self.reach, self._keys
        self._current = lp
        try:
            name, hint = None, self._hint.pop(lp, None)
            if hint is not None and hint is not lp and keys[hint] < key:
                # the one it met last is the likeliest to meet it still: asked alone first
                name = reach.meets(lp.name, key[0], Behind(
                    [(keys[hint], hint)], 1, {hint: keys[hint]}, {hint.name: hint},
                    self._holds))
            if name is None:  # those behind it: the residents before it in key order
                count = bisect.bisect_left(self._order, (key, lp))
                name = reach.meets(lp.name, key[0], Behind(self._order, count, keys, self._lps,
                                                           self._holds))
        finally:
            self._current = self._kernel
        if name is None:
            reach.goes(lp.name, key[0])
            return True
        other = self._lps[name]
        self._met[lp] = other
        self._parked.setdefault(other, []).append(lp)
        return False

    def _step(self, lp: LP) -> None:
        at = lp.env.head()[0]
        if at != lp.at:  # a new instant: its first round
            lp.at, lp.round = at, 0
        lp.depth = max(lp.depth, lp.answered_depth)
        self._changed.add(lp)
        self._running = self._current = lp
        try:
            lp.env.step()
        finally:
            self._running, self._current = None, self._kernel

    # -- run loop -----------------------------------------------------------------------------
    def run(self, until: float | None = None) -> None:
        """Run until no event is left or the next one is later than `until` (sim seconds):
        a barrier, after which everything emitted is written and nothing is in flight."""
        limit = math.inf if until is None else until
        # between runs anything may have changed (a restore, a whisper): every key computed
        # anew, every step looked at again
        for kept in (self._keys, self._order, self._met, self._parked, self._hint):
            kept.clear()
        self._unsent, self._asking, self._in_flight = [], set(), 0
        self._back = queue.SimpleQueue()  # a stopped run's stragglers answer into the old one
        self._in_run, current = True, self._current
        try:
            self._run(limit)
        finally:
            self._in_run, self._current = False, current
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(cancel_futures=True)
            for lp in self._lps.values():
                lp.asks = []  # a run stopped by an error: what it waited on is not its any more
                lp.pending = 0
            self._unsent, self._asking = [], set()
            self._flush(_INF)
            # The episode's clock: the last instant anything happened.
            self._kernel.env._now = max(lp.env.now for lp in self._lps.values())

    def _run(self, limit: float) -> None:
        lockstep = self.schedule == "lockstep"
        while True:
            if INTERRUPT.is_set():
                raise KeyboardInterrupt
            self._advance(limit, lockstep)
            self._send()
            if not self._asking:
                return
            self._take_back(block=False)
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            if lockstep:  # one round: every call of the instant is back before anything goes on
                self._await(everyone=True)
            elif not any(lp.answerable() for lp in self._asking):
                self._await(everyone=False)
            # in the residents' order: each takes its answers at a point of its own order, so
            # the order they are handed over in changes nothing but is kept the same anyway
            for lp in sorted((lp for lp in self._asking if lp.answerable()),
                             key=lambda lp: lp.index):
                self._answer(lp)

    def _await(self, everyone: bool) -> None:
        """Wait for every call in flight (a lockstep round) or for the first of them back;
        the wall time the run loop waits on calls (bench/growth.py times it here)."""
        if everyone:
            while self._in_flight:
                self._take_back(block=True)
        elif self._in_flight:  # those back before were taken: this waits for a new one
            self._take_back(block=True)

    def _advance(self, limit: float, lockstep: bool) -> None:
        """Take every step the rule allows, until none can be taken; then write what no LP
        can still come before. Keys are those of the pass's start: an LP that stepped has a
        larger key than its entry says, which only makes those after it wait more (safe); an
        LP woken by another's step may have a smaller one, so a wake ends the pass."""
        kernel = self._kernel
        while True:
            self._sort()
            order, kernel_key, met = self._order, self._keys[kernel], self._met
            self._kernel_key = kernel_key
            floor = min(order[0][0], kernel_key) if order else kernel_key
            # beyond the horizon every step waits for the one furthest behind: not looked at
            horizon = floor[0] + (self.reach.horizon() if self.reach is not None else 0.0)
            progressed = False
            self._woken = False
            entries = chain([(kernel_key, kernel)], order) if kernel_key == floor else order
            for key, lp in entries:
                if key[0] > limit or key[0] > horizon or key[0] == math.inf \
                        or (lockstep and key[0] > floor[0]):
                    break
                if lp in met:  # it waits on one that has not changed (never the floor)
                    continue
                if lp.steppable() and self._may_go(lp, key, floor):
                    self._step(lp)
                    progressed = True
                    if self._woken:
                        break
            if not progressed:
                self._flush(floor)
                return

    def _sort(self) -> None:
        """Compute the keys of the LPs that changed, move them in the order, and let those
        that waited on them be looked at again."""
        known, order, changed = self._keys, self._order, self._changed
        if len(known) != len(self._lps):
            changed.update(self._lps.values())
        met, parked, hint = self._met, self._parked, self._hint
        for lp in changed:
            old, new = known.get(lp), lp.key()
            known[lp] = new
            if lp is not self._kernel and new != old:
                if old is not None:
                    del order[bisect.bisect_left(order, (old, lp))]
                bisect.insort(order, (new, lp))
            blocker = met.pop(lp, None)
            if blocker is not None:
                hint[lp] = blocker
            waiters = parked.pop(lp, None)
            if not waiters:
                continue
            # Those that wait on it are looked at again once its clock moves on, or once it is
            # no longer behind them. At the instant it was at it cannot come nearer: a walk
            # begun there starts from where it stands (and a step between two of its answers,
            # a line of a conversation, is most of what an LP does).
            moved = old is None or new[0] != old[0] or lp.quiet_until != lp.quiet_seen
            lp.quiet_seen = lp.quiet_until
            still = []
            for waiter in waiters:
                if met.get(waiter) is not lp:
                    continue
                if moved or new > known[waiter]:
                    del met[waiter]
                    hint[waiter] = lp
                else:
                    still.append(waiter)
            if still:
                parked[lp] = still
        changed.clear()
