"""Running a suite's episodes side by side: threads in this process (`--jobs N`), or Ray actors
in other processes and machines (`--executor ray`), with the same results either way.

A suite hands over its episodes as (key, payload) pairs and two functions:
- `setup()` builds what every episode needs and is slow to build (the world, the model backend,
  the embedder): once in this process, or once in each Ray worker process;
- `work(state, payload)` runs one episode into its run directory and returns a small result.
Both must be picklable for Ray (module-level functions, `functools.partial` of them).

Episodes are independent: each has its own seed, run directory and model cache, so its log is
the same whatever runs beside it. The LLM calls of episodes in one process share one backend,
which holds the endpoint's connection limit (`--max-concurrency`); under Ray each worker gets
an equal share of it.

A Ray worker that dies (killed, out of memory, its machine gone) is restarted and its running
episodes are run again from the start, at most `retries` times; past that they are reported as
failed and the suite goes on.
"""

from __future__ import annotations

import logging
import os
import resource
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.engine import INTERRUPT
from sandbox.llm import calls_recorded

_log = logging.getLogger(__name__)

RAY_INSTALL = "pip install '.[ray]' in the project's directory (or: pip install ray)"


class ExecutorError(RuntimeError):
    """The executor cannot run (Ray missing, the cluster unreachable, a worker that cannot set
    up); one line for the user."""


@dataclass(frozen=True)
class Parallel:
    """How a suite's episodes run: the command's --jobs, --executor, --address, --workers."""

    jobs: int = 1  # episodes at once in each process
    executor: Literal["local", "ray"] = "local"
    address: str | None = None  # ray: an existing cluster; None starts a local one
    workers: int | None = None  # ray: worker processes [default: the cluster's CPUs]
    retries: int = 2  # ray: times an episode is run again after its worker died

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"--jobs {self.jobs}: must be at least 1")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"--workers {self.workers}: must be at least 1")


@dataclass
class Outcome:
    """What became of one episode."""

    key: str
    result: Any = None
    error: str | None = None  # set when it failed
    retried: int = 0  # times it was run again after its worker died
    worker: int | None = None  # the process id that ran it
    ran: bool = True  # False: the suite stopped (`stop_when`) before it started

    @property
    def failed(self) -> bool:
        return self.error is not None


def unreached(result: Any) -> bool:
    """Whether an episode or item that ran is unfinished because its calls never reached a
    model (an endpoint dead or refusing): a failure to whoever watches the progress line,
    though the suite goes on and the next run asks it again."""
    if getattr(result, "unavailable", None):  # a town suite's episode's
        return True
    stopped = getattr(result, "stopped", None)  # a benchmark item's: (item, why) pairs
    return isinstance(stopped, list) and any(
        isinstance(entry, tuple) and str(entry[-1]).startswith("unavailable")
        for entry in stopped)


@dataclass
class Monitor:
    """Progress of a suite for a progress line: episodes done, running and failed, LLM calls
    per second and the time left. The executor calls `started` and `finished`; `calls` is
    polled (every process's recorded calls, all episodes together)."""

    total: int
    on_change: Callable[[Monitor], None] | None = None
    done: int = 0
    failed: int = 0
    skipped: int = 0  # done before this run (resumed): not counted in the rates
    running: set[str] = field(default_factory=set)
    failures: list[Outcome] = field(default_factory=list)
    calls_source: Callable[[], int] = calls_recorded
    clock: Callable[[], float] = time.perf_counter
    _calls_at_start: int = 0
    _started: float = field(default_factory=time.perf_counter)
    _episode_calls: list[int] = field(default_factory=list)
    _calls_seen: int = 0
    failed_polls: int = 0  # calls counts the progress line could not take
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, calls_source: Callable[[], int]) -> None:
        self.calls_source = calls_source
        self._calls_at_start = calls_source()
        self._started = self.clock()

    def started(self, key: str) -> None:
        with self._lock:
            self.running.add(key)
        self._changed()

    def finished(self, outcome: Outcome, *, skipped: bool = False, calls: int = 0) -> None:
        with self._lock:
            self.running.discard(outcome.key)
            if outcome.failed or unreached(outcome.result):
                self.failed += 1
                self.failures.append(outcome)
            else:
                self.done += 1
                self.skipped += skipped
                if not skipped:
                    self._episode_calls.append(calls)
        self._changed()

    def dropped(self, key: str) -> None:
        """An episode stopped by the suite stopping (neither done nor failed)."""
        with self._lock:
            self.running.discard(key)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self._started

    def calls(self) -> int:
        try:
            self._calls_seen = self.calls_source() - self._calls_at_start
        except Exception as exc:  # noqa: BLE001 - a progress line never stops a suite
            # It keeps the last count it had; the failure is counted and logged.
            self.failed_polls += 1
            _log.info("the progress line could not count the calls: %s", exc)
        return self._calls_seen

    def calls_per_s(self) -> float:
        return self.calls() / max(self.elapsed_s, 1e-9)

    def eta_s(self) -> float | None:
        """Seconds left: the calls the episodes left should need (the mean of those run so
        far), minus those the running ones have made, at the rate so far. None before the
        first episode has run."""
        with self._lock:
            if not self._episode_calls:
                return None
            mean = sum(self._episode_calls) / len(self._episode_calls)
            left = self.total - self.done - self.failed
            made_by_running = self.calls() - sum(self._episode_calls)
        rate = self.calls_per_s()
        if rate <= 0:
            return None
        return max(0.0, left * mean - max(made_by_running, 0)) / rate

    def summary(self) -> str:
        eta = self.eta_s()
        left = "--" if eta is None else _clock(eta)
        skipped = f" ({self.skipped} already)" if self.skipped else ""
        rate = f"{self.calls_per_s():.1f} calls/s"
        if self.failed_polls:  # the rate is then as of the last count that worked
            rate += f" (calls not counted {self.failed_polls} times)"
        return (f"done {self.done}{skipped}, running {len(self.running)}, failed {self.failed}; "
                f"{rate}; left {left}")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


Work = Callable[[Any, Any], Any]


def run_parallel(jobs: Sequence[tuple[str, Any]], setup: Callable[[], Any], work: Work,
                 parallel: Parallel, *, monitor: Monitor | None = None,
                 stop_on: tuple[type[BaseException], ...] = (),
                 skipped: Callable[[Any], bool] | None = None,
                 calls_of: Callable[[Any], int] | None = None,
                 stop_when: Callable[[], bool] | None = None) -> list[Outcome]:
    """Run `work(state, payload)` for every (key, payload); the outcomes in `jobs` order.

    An episode that raises is an Outcome with its error, and the others go on; one that raises
    one of `stop_on` (a cache-only replay missing an answer) stops the suite once the running
    episodes end, and is raised. `skipped(result)` and `calls_of(result)` tell the monitor which
    episodes were only resumed and how many calls each made. Once `stop_when()` is true
    (a suite's budget is spent) no new episode starts; those left get `ran` False."""
    monitor = monitor or Monitor(total=len(jobs))
    note = _Noter(monitor, skipped, calls_of, stop_when or (lambda: False))
    if parallel.executor == "ray":
        return _run_ray(jobs, setup, work, parallel, note, stop_on)
    state = setup()
    monitor.begin(calls_recorded)
    if parallel.jobs == 1:  # in the calling thread: Ctrl-C reaches the episode itself
        outcomes = []
        for key, payload in jobs:
            if note.stop_when():
                outcomes.append(Outcome(key, ran=False))
                continue
            note.started(key)
            outcome = _attempt(key, lambda p=payload: work(state, p), stop_on)
            note.finished(outcome)
            outcomes.append(outcome)
        return outcomes
    return _run_threads(jobs, state, work, parallel.jobs, note, stop_on)


class _Noter:
    def __init__(self, monitor: Monitor, skipped, calls_of, stop_when):
        self.monitor = monitor
        self.stop_when = stop_when
        self.skipped = skipped or (lambda result: False)
        self.calls_of = calls_of or (lambda result: 0)

    def started(self, key: str) -> None:
        self.monitor.started(key)

    def finished(self, outcome: Outcome) -> None:
        ok = not outcome.failed
        self.monitor.finished(outcome, skipped=ok and self.skipped(outcome.result),
                              calls=self.calls_of(outcome.result) if ok else 0)


def _attempt(key: str, call: Callable[[], Any], stop_on) -> Outcome:
    try:
        return Outcome(key, result=call(), worker=os.getpid())
    except stop_on:
        raise
    except Exception as exc:  # noqa: BLE001 - one broken episode must not lose the suite
        return Outcome(key, error=f"{type(exc).__name__}: {exc}", worker=os.getpid())


def _run_threads(jobs, state, work, n_jobs: int, note: _Noter, stop_on) -> list[Outcome]:
    outcomes: dict[str, Outcome] = {}
    queue = list(jobs)
    stop: BaseException | None = None
    with ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="episode") as pool:
        running: dict[Future, str] = {}

        def submit() -> None:
            key, payload = queue.pop(0)
            note.started(key)
            running[pool.submit(_attempt, key, lambda: work(state, payload), stop_on)] = key

        try:
            while queue and len(running) < n_jobs and not note.stop_when():
                submit()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    key = running.pop(future)
                    try:
                        outcome = future.result()
                    except stop_on as exc:
                        stop, queue = stop or exc, []  # no new episode; the running ones end
                        note.monitor.dropped(key)
                        continue
                    outcomes[key] = outcome
                    note.finished(outcome)
                    if queue and stop is None and not note.stop_when():
                        submit()
        except KeyboardInterrupt:
            queue.clear()
            INTERRUPT.set()  # the running episodes stop too (their result.json: interrupted)
            try:
                wait(running)
            finally:
                INTERRUPT.clear()
            raise
    if stop is not None:
        raise stop
    return [outcomes.get(key) or Outcome(key, ran=False) for key, _ in jobs]


# -- Ray ----------------------------------------------------------------------------------------

class EpisodeWorker:
    """One Ray worker process: builds the suite's state once, then runs episodes, up to --jobs
    at once (a threaded actor)."""

    def __init__(self, setup: Callable[[], Any], work: Work):
        self.work = work
        self.state = setup()

    def ready(self) -> int:
        return os.getpid()

    def run(self, payload: Any) -> tuple[Any, int]:
        return self.work(self.state, payload), os.getpid()

    def calls(self) -> int:
        return calls_recorded()

    def peak_rss_mib(self) -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def import_ray():
    try:
        import ray
    except ImportError:
        raise ExecutorError(f"--executor ray needs Ray, which is not installed: {RAY_INSTALL}") \
            from None
    return ray


@dataclass
class RayPool:
    """Ray started (or joined) for one suite, with its worker actors."""

    ray: Any
    actors: list[Any]
    pids: list[int]
    started_ray: bool
    actor_class: Any
    setup: Callable[[], Any]
    work: Work
    closed: bool = False
    last_calls: int = 0

    def calls(self) -> int:
        """Every worker's calls so far (polled by the progress line; the last count once the
        workers are gone)."""
        if not self.closed:
            refs = [actor.calls.remote() for actor in self.actors]
            ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=2.0)
            if len(ready) == len(refs):  # a worker being restarted: keep the last count
                try:
                    self.last_calls = sum(self.ray.get(ready))
                except Exception as exc:  # noqa: BLE001 - a dead worker; its episodes say more
                    # The progress line keeps the last count; the failure is logged.
                    _log.info("a worker did not answer the progress poll: %s", exc)
        return self.last_calls

    def peak_rss_mib(self) -> list[float]:
        return self.ray.get([actor.peak_rss_mib.remote() for actor in self.actors])

    def replace(self, index: int) -> None:
        """A fresh worker in place of one that died for good."""
        self.actors[index] = self.actor_class.remote(self.setup, self.work)
        self.pids[index] = self.ray.get(self.actors[index].ready.remote())

    def close(self) -> None:
        self.calls()
        self.closed = True
        for actor in self.actors:
            self.ray.kill(actor)
        if self.started_ray:
            self.ray.shutdown()


def start_ray(setup: Callable[[], Any], work: Work, parallel: Parallel) -> RayPool:
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        try:
            if parallel.address:
                ray.init(address=parallel.address, logging_level=logging.WARNING,
                         log_to_driver=False)
            else:  # a local Ray for this run, with a CPU per worker
                ray.init(num_cpus=parallel.workers or os.cpu_count() or 1,
                         include_dashboard=False, logging_level=logging.WARNING,
                         log_to_driver=False)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; one line for the user
            where = parallel.address or "a local Ray"
            raise ExecutorError(f"--executor ray: cannot start or join {where}: {exc}") from exc
    workers = parallel.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    actor_class = ray.remote(num_cpus=1, max_concurrency=parallel.jobs,
                             max_restarts=parallel.retries,
                             max_task_retries=parallel.retries)(EpisodeWorker)
    actors = [actor_class.remote(setup, work) for _ in range(workers)]
    try:
        pids = ray.get([actor.ready.remote() for actor in actors])
    except Exception as exc:  # noqa: BLE001
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
        cause = getattr(exc, "cause", None) or exc
        raise ExecutorError(f"--executor ray: a worker could not set up: "
                            f"{type(cause).__name__}: {str(cause).splitlines()[0]}") from exc
    return RayPool(ray, actors, pids, started, actor_class, setup, work)


def _run_ray(jobs, setup, work, parallel: Parallel, note: _Noter, stop_on) -> list[Outcome]:
    pool = start_ray(setup, work, parallel)
    try:
        note.monitor.begin(pool.calls)
        return _dispatch_ray(pool, jobs, parallel, note, stop_on)
    finally:
        pool.close()


def _dispatch_ray(pool: RayPool, jobs, parallel: Parallel, note: _Noter,
                  stop_on) -> list[Outcome]:
    """Keep --jobs episodes running on each worker until every one has an outcome."""
    ray = pool.ray
    from ray.exceptions import RayActorError, RayTaskError

    queue = list(jobs)
    outcomes: dict[str, Outcome] = {}
    running: dict[Any, tuple[str, int, int]] = {}  # ref -> (key, worker index, its pid then)
    load = [0] * len(pool.actors)
    replacements = len(pool.actors) * (parallel.retries + 1)  # bounded: a worker that always dies
    stop: BaseException | None = None

    def submit(index: int) -> None:
        key, payload = queue.pop(0)
        note.started(key)
        running[pool.actors[index].run.remote(payload)] = (key, index, pool.pids[index])
        load[index] += 1

    def fill() -> None:  # the least loaded worker first: a short suite spreads over all
        while queue and stop is None and not note.stop_when():
            index = min(range(len(pool.actors)), key=lambda i: load[i])
            if load[index] >= parallel.jobs:
                return
            submit(index)

    fill()
    while running:
        ready, _ = ray.wait(list(running), num_returns=1)
        ref = ready[0]
        key, index, pid_then = running.pop(ref)
        load[index] -= 1
        try:
            result, pid = ray.get(ref)
            retried = 0
            if pid != pid_then:  # its worker died and Ray ran it again on a restarted one
                retried, pool.pids[index] = 1, pid
            outcome = Outcome(key, result=result, retried=retried, worker=pid)
        except RayTaskError as exc:  # the episode itself raised
            cause = exc.as_instanceof_cause()
            if isinstance(cause, stop_on):
                stop, queue = stop or cause, []
                note.monitor.dropped(key)
                continue
            inner = getattr(exc, "cause", None) or cause
            outcome = Outcome(key, error=f"{type(inner).__name__}: {inner}")
        except RayActorError as exc:  # its worker died more often than --retries allows
            outcome = Outcome(key, error=f"its worker died {parallel.retries + 1} times "
                                         f"({str(exc).splitlines()[0]})",
                              retried=parallel.retries)
            if replacements > 0 and not any(i == index for _, i, _ in running.values()):
                replacements -= 1
                pool.replace(index)
        outcomes[key] = outcome
        note.finished(outcome)
        fill()
    if stop is not None:
        raise stop
    return [outcomes.get(key) or Outcome(key, ran=False) for key, _ in jobs]
