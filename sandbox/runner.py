"""Run one episode of a scenario into a run directory, keeping everything on any failure."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from .budget import Budget, BudgetExhausted
from .engine import Engine
from .events import EpisodeEnded, Event
from .llm import CallLog, CallRecord, backend_settings
from .log import CALLS, EpisodeLog, RunHeader, RunResult


class Scenario(Protocol):
    """What the runner needs of a scenario (single room, a town task, a benchmark pair).

    Optional: `expected_events`, {event kind: what it means when none happened} ("move":
    "nobody moved"): a run without any of one kind ends with that warning in its result."""

    name: str
    start_time: datetime
    world: str | None
    until: float | None  # simulated seconds; None runs until every agent is done

    def config(self) -> dict[str, Any]: ...

    def models(self, default_model: str) -> dict[str, str]: ...

    def setup(self, engine: Engine) -> None: ...


def run_episode(scenario: Scenario, llm, *, seed: int, out_dir: Path | str,
                overwrite: bool = False, on_event: Callable[[Event], None] | None = None,
                max_concurrency: int | None = None,
                extra_header: dict[str, Any] | None = None,
                budgets: list[Budget] | None = None) -> RunResult:
    """Run `scenario` with `llm` as the episode's default model. Always writes result.json.

    A budget that runs out (sandbox.budget) ends the run with status "budget", not an error."""
    out_dir = Path(out_dir)
    header = RunHeader(scenario=scenario.name, seed=seed, start_time=scenario.start_time,
                       models=scenario.models(llm.model_id), backend=backend_settings(llm),
                       world=scenario.world,
                       config={**scenario.config(), **(extra_header or {})})
    log = EpisodeLog(out_dir, header, overwrite=overwrite)
    calls = CallLog(out_dir / CALLS)
    engine = Engine(llm=llm, seed=seed, start_time=scenario.start_time, log=log, calls=calls,
                    max_concurrency=max_concurrency, budgets=budgets)
    if on_event is not None:
        engine.subscribe(on_event)
    happened: Counter[str] = Counter()
    engine.subscribe(lambda event: happened.update((event.kind,)))
    started = time.perf_counter()
    status, error = "completed", None
    try:
        scenario.setup(engine)
        engine.run(until=scenario.until)
        engine.emit(EpisodeEnded(t=engine.now))
    except BudgetExhausted as exc:
        status, error = "budget", str(exc)
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise
    except Exception as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        result = RunResult(status=status, wall_time_s=round(time.perf_counter() - started, 3),
                           sim_time_s=engine.now, events=log.count, llm_calls=len(calls.records),
                           error=error, warnings=nothing_happened(
                               happened, calls.records, getattr(scenario, "expected_events", {})))
        log.finish(result)
        calls.close()
    return result


def nothing_happened(happened: Counter[str], calls: list[CallRecord],
                     expected: dict[str, str]) -> list[str]:
    """Warnings for a run whose numbers cannot be right: an expected kind of event that never
    happened, or model calls none of which the model answered (every one a fallback)."""
    warnings = [f"{meaning} (no '{kind}' event)" for kind, meaning in expected.items()
                if not happened[kind]]
    answered = sum("fallback" not in call.faults for call in calls)
    if calls and not answered:
        warnings.append(f"no model answer: all {len(calls)} LLM calls fell back to a default")
    return warnings
