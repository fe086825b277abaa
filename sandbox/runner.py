"""Run one episode of a scenario into a run directory, keeping everything on any failure.

How a run ended is its result.json `status`: completed, failed, interrupted, budget (a cap was
reached), or unavailable: calls were made and none of them reached a model (the endpoint
refused every one, e.g. a dead key answering 401, or could not be reached). An unavailable run
is not finished: a suite runs it again, and the command says so and exits non-zero. A run whose
share of calls that fell back to a default (no usable answer, for whatever reason) is above
$SANDBOX_DEGRADED_ABOVE (default 0.5) is `degraded` in result.json, with the share in
`fallback_fraction`: its numbers rest mostly on canned answers, and boards mark it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from . import checkpoint
from .budget import Budget, BudgetExhausted
from .engine import Engine
from .env import env_number
from .events import EpisodeEnded, Event
from .llm import CallLog, CallRecord, backend_settings, endpoints_of
from .llm.human import PersonLeft
from .lock import hold
from .log import CALLS, EpisodeLog, RunFormatError, RunHeader, RunResult, read_prompts
from .redact import redact
from .simtime import check_sim_time

PERSON_LEFT = "the person left"  # how result.json's error begins when PersonLeft stopped a run
DEGRADED_ABOVE_ENV = "SANDBOX_DEGRADED_ABOVE"
DEFAULT_DEGRADED_ABOVE = 0.5


def degraded_above() -> float:
    """The share of fallen-back calls above which a run is degraded: $SANDBOX_DEGRADED_ABOVE,
    else 0.5 (ValueError when the variable is not a number from 0 to 1)."""
    return env_number(DEGRADED_ABOVE_ENV, DEFAULT_DEGRADED_ABOVE, lambda v: 0 <= v <= 1,
                      "a share from 0 to 1")


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


# The command line of a one-episode command (`sandbox run ...`), set by it while it runs:
# recorded in the run's header (config.command) so `sandbox rerun RUN` can repeat it. A town
# suite (a benchmark's) sets it per episode to the `sandbox run` making that episode alone.
COMMAND: ContextVar[list[str] | None] = ContextVar("command", default=None)


class Pause(NamedTuple):
    """Stop the episode at simulated second `at`, once everything due then has run and no call
    is in flight, call `act(engine, scenario)`, and go on: how `sandbox fork` changes a replayed
    run at its fork point. Stopping and going on changes nothing by itself: the same events
    follow in the same order as in a run that never stopped."""

    at: float
    act: Callable[[Engine, Any], None]


# Set around a one-episode command, like COMMAND: where its episode pauses (`Pause`), and what
# its header's config records besides the scenario's (a fork's parent, time and changes).
PAUSES: ContextVar[tuple[Pause, ...]] = ContextVar("pauses", default=())
RECORDED: ContextVar[dict[str, Any] | None] = ContextVar("recorded", default=None)
# Set around a one-episode command by `sandbox fork` and `sandbox rerun`: the checkpoint its
# episode starts from (sandbox/checkpoint.py, read already: a run restored in place has it in
# memory before its log empties the directory), its pauses before it already made.
RESTORE: ContextVar[checkpoint.Checkpoint | None] = ContextVar("restore", default=None)
# Set around a one-episode command by `sandbox rerun`: called with the new header's config
# before anything is written; raises when the scenario is not the one the run recorded.
CHECK_CONFIG: ContextVar[Callable[[dict[str, Any]], None] | None] = ContextVar(
    "check_config", default=None)


def run_episode(scenario: Scenario, llm, *, seed: int, out_dir: Path | str,
                overwrite: bool = False, on_event: Callable[[Event], None] | None = None,
                max_concurrency: int | None = None,
                extra_header: dict[str, Any] | None = None,
                budgets: list[Budget] | None = None,
                checkpoint_every: float | None = None) -> RunResult:
    """Run `scenario` with `llm` as the episode's default model. Always writes result.json.

    `checkpoint_every` simulated seconds (None or 0: never) it writes a checkpoint
    (sandbox/checkpoint.py) if the scenario can make one; a run under RESTORE starts from
    that checkpoint instead of the beginning (NotResumable when it belongs to another
    episode).

    A budget that runs out (sandbox.budget) ends the run with status "budget", not an error.
    The run holds its directory's lock (sandbox.lock) while it writes; a scenario longer than
    the longest episode allowed is refused before anything is written (SimTimeTooLong)."""
    check_sim_time(scenario.until, f"the {scenario.name} episode")
    degraded_above()  # a bad $SANDBOX_DEGRADED_ABOVE fails here, not after the run
    out_dir = Path(out_dir)
    with hold(out_dir, check_above=False):
        return _run(scenario, llm, seed=seed, out_dir=out_dir, overwrite=overwrite,
                    on_event=on_event, max_concurrency=max_concurrency,
                    extra_header=extra_header, budgets=budgets,
                    checkpoint_every=checkpoint_every or None)


def _run(scenario: Scenario, llm, *, seed: int, out_dir: Path, overwrite: bool, on_event,
         max_concurrency: int | None, extra_header: dict[str, Any] | None,
         budgets: list[Budget] | None, checkpoint_every: float | None) -> RunResult:
    restored = RESTORE.get()
    start = restored.t if restored is not None else 0.0
    models = scenario.models(llm.model_id)
    roles = getattr(llm, "recorded", None)  # a Router: each agent's role's model
    if roles is not None:
        models = {agent: llm.model_of(agent) for agent in models}
    # Who answers over HTTP, as the models file resolved (a run that travels says what it
    # reached, not only the alias typed): also what a failure names. A caller whose scenario
    # holds other roles' models of its own (a benchmark's cast) gives theirs in extra_header.
    endpoints = {**(extra_header or {}).get("endpoints", {}), **endpoints_of(llm)}
    header = RunHeader(scenario=scenario.name, seed=seed, start_time=scenario.start_time,
                       models=models, backend=backend_settings(llm),
                       world=scenario.world,
                       config={**scenario.config(), **(extra_header or {}),
                               **({"roles": roles} if roles else {}),
                               **({"endpoints": endpoints} if endpoints else {}),
                               # and the directory it was typed in: a file it names as
                               # typed (a template, a world) is found there by `rerun`
                               **({"command": COMMAND.get(), "command_dir": os.getcwd()}
                                  if COMMAND.get() else {}),
                               **(RECORDED.get() or {})})
    check = CHECK_CONFIG.get()
    if check is not None:
        check(header.config)
    # The prompts of the calls a restored run carries over, read before a run restored in place
    # replaces its own files.
    prompts = _prompts_before(restored.path.parent.parent, len(restored.calls)) \
        if restored is not None else []
    log = EpisodeLog(out_dir, header, overwrite=overwrite)
    calls = CallLog(out_dir / CALLS)
    engine = Engine(llm=llm, seed=seed, start_time=scenario.start_time, log=log, calls=calls,
                    max_concurrency=max_concurrency, budgets=budgets,
                    now=restored.now if restored is not None else 0.0)
    happened: Counter[str] = Counter()
    if restored is not None:
        _carry_over(restored, out_dir, engine, happened, prompts)
    elif overwrite:
        shutil.rmtree(out_dir / checkpoint.CHECKPOINTS, ignore_errors=True)  # another run's
    if on_event is not None:
        engine.subscribe(on_event)
    engine.subscribe(lambda event: happened.update((event.kind,)))
    started = time.perf_counter()
    status, error = "completed", None
    written, skipped = 0, []
    config = checkpoint.config_digest(scenario.config()) if checkpoint_every else ""
    try:
        if restored is not None:
            checkpoint.restore(engine, scenario, restored, seed)
        else:
            scenario.setup(engine)
        for at, pause in _stops(scenario, start, checkpoint_every):
            engine.run(until=at)
            if pause is not None:
                pause.act(engine, scenario)
                continue
            if any("unavailable" in call.faults for call in calls.records):
                # What the agents did since rests on canned answers: a rerun restored from here
                # would keep them (and the unavailable calls it carries) for good. It restores
                # from the last checkpoint before the endpoint failed instead.
                skipped.append(f"{at:g} s: a call before it never reached a model")
                continue
            try:  # before a pause at the same instant: a restore makes that pause again
                state = checkpoint.take(engine, scenario, at, log, calls, seed, config)
            except checkpoint.NotResumable as exc:
                skipped.append(f"{at:g} s: {exc}")
                continue
            checkpoint.write(out_dir, state)
            written += 1
        engine.run(until=scenario.until)
        engine.emit(EpisodeEnded(t=engine.now))
    except BudgetExhausted as exc:
        status, error = "budget", str(exc)
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise
    except PersonLeft as exc:  # a person playing a resident left: kept, to go on from
        status, error = "interrupted", f"{PERSON_LEFT}: {exc}"
        raise
    except Exception as exc:
        status, error = "failed", redact(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        result = RunResult(status=status, wall_time_s=round(time.perf_counter() - started, 3),
                           sim_time_s=engine.now, events=log.count, llm_calls=len(calls.records),
                           error=error, warnings=nothing_happened(
                               happened, calls.records, getattr(scenario, "expected_events", {}))
                           + overtaken(engine),
                           **fallback_counts(calls.records), checkpoints=written,
                           checkpoints_skipped=skipped,
                           restored_from=restored.t if restored is not None else None,
                           **schedule_figures(engine, calls.records))
        why = unreached(calls.records, endpoints) if status == "completed" else None
        if why is not None:  # not finished: the suite runs it again
            result.status, result.error = "unavailable", why
        log.finish(result)
        calls.close()
    return result


def schedule_figures(engine: Engine, records) -> dict[str, Any]:
    """How a town's run was scheduled, for result.json: none for a run without residents (a
    single room: one process, nothing to run ahead)."""
    if not engine.residents():
        return {}
    return {"schedule": engine.schedule, "sends": engine.rounds,
            "peak_in_flight": engine.peak_in_flight}


def overtaken(engine: Engine) -> list[str]:
    """A warning when running ahead let a step pass a moment someone could still reach."""
    if not engine.overtaken:
        return []
    return [f"running ahead let {len(engine.overtaken)} step(s) pass a moment a resident "
            f"could still reach (first: {engine.overtaken[0]}): this run may differ from "
            "the same run in lockstep; run it again with --schedule lockstep"]


def _carry_over(restored: checkpoint.Checkpoint, out_dir: Path, engine: Engine,
                happened: Counter[str], prompts: list[str]) -> None:
    """A run restored from a checkpoint begins with its run's events and calls up to it (and
    its checkpoints up to it), counted as this run's: in the events that happened, in the
    budgets, in what a fork says it copied (`engine.restored`)."""
    log, calls = engine.log, engine.calls
    checkpoint.keep_until(restored.path.parent.parent, out_dir, restored.t)
    log.carry(restored.events)
    calls.carry(restored.calls, prompts)
    happened.update(json.loads(line).get("kind") for line in restored.events)
    engine.restored = {"t": restored.t, "events": log.count, "calls": len(calls.records),
                       "cached": sum(c.cached for c in calls.records)}
    for budget in engine.budgets:  # what the calls before the checkpoint spent
        budget.calls += len(calls.records)
        budget.spend_tokens(sum(c.prompt_tokens + c.completion_tokens for c in calls.records))


def _prompts_before(run: Path, calls: int) -> list[str]:
    """prompts.jsonl's lines of `run`'s first `calls` calls (a line that does not read is left
    out; a run from before prompts were kept has none, and so does one whose prompts.jsonl
    cannot be read: a FIFO, a directory; said, the calls' prompts are then not carried over)."""
    try:
        prompts, _ = read_prompts(run)
    except RunFormatError as exc:
        print(f"the prompts of the calls copied are not carried over: {exc}", file=sys.stderr)
        return []
    return [prompts[seq].model_dump_json() + "\n" for seq in sorted(prompts) if seq < calls]


def _stops(scenario: Scenario, start: float, every: float | None
           ) -> list[tuple[float, Pause | None]]:
    """Where the episode stops on its way, in time order: at each pause from `start` on (a
    checkpoint at `start` was taken before the pauses there), and every `every` seconds after
    `start` for a checkpoint (None), before a pause at the same instant."""
    end = math.inf if scenario.until is None else scenario.until
    stops: list[tuple[float, int, Pause | None]] = [
        (p.at, 1, p) for p in PAUSES.get() if start <= p.at <= end]
    if every and math.isfinite(end):
        n = math.floor(start / every) + 1
        while n * every < end:
            stops.append((n * every, 0, None))
            n += 1
    return [(at, pause) for at, _, pause in sorted(stops, key=lambda s: (s[0], s[1]))]


def fallback_counts(calls: list[CallRecord]) -> dict[str, Any]:
    """RunResult's fallbacks, unavailable_calls, fallback_fraction and degraded."""
    fallbacks = sum("fallback" in call.faults for call in calls)
    fraction = round(fallbacks / len(calls), 4) if calls else 0.0
    return {"fallbacks": fallbacks,
            "unavailable_calls": sum("unavailable" in call.faults for call in calls),
            "fallback_fraction": fraction, "degraded": fraction > degraded_above()}


def unreached(calls: list[CallRecord], endpoints: dict[str, dict] | None = None
              ) -> str | None:
    """Why the run is not finished when calls never reached a model: none did, none of one
    role's did (a run whose roles are answered by different endpoints, one of them dead: its
    numbers rest on that role's canned answers), or some did not (an endpoint that failed
    during the run); else None. Each names the role, the model ("alias (model id)"), its
    endpoint's URL (`endpoints`, the header's), the first call lost and what to do."""
    lost = [call for call in calls if "unavailable" in call.faults]
    if not lost:
        return None
    by_who: dict[tuple[str, str], list[CallRecord]] = {}
    for call in calls:
        by_who.setdefault((call.role or "", _who(call)), []).append(call)
    parts = []
    for (role, who), mine in by_who.items():
        failed = [call for call in mine if "unavailable" in call.faults]
        if not failed:
            continue
        url = (endpoints or {}).get(who, {}).get("base_url")
        seen = _faults_seen(failed)
        first = failed[0]
        asked = ", ".join(x for x in (first.tag, first.agent) if x)
        parts.append(f"{f'the {role} role: ' if role else ''}{who}"
                     f"{f' at {url}' if url else ''}, {len(failed)} of {len(mine)} calls"
                     f"{f' ({seen})' if seen else ''}, from call {first.seq} ({asked}) on")
    if len(lost) == len(calls):
        what = f"no LLM call reached a model: {'; '.join(parts)}"
    else:
        what = f"{len(lost)} of {len(calls)} LLM calls never reached a model: {'; '.join(parts)}"
    return (f"{what}; check or restart that endpoint (its URL, the model name and the key), "
            "then run the same command (the answers given so far come from the cache)")


def _who(call: CallRecord) -> str:
    from .llm import model_name

    return model_name(call.model, call.endpoint)


def _faults_seen(calls: list[CallRecord]) -> str:
    """What went wrong in calls that never reached a model, the four most frequent kinds
    ("rejected_401 12, timeout 3"), without the faults every such call has."""
    kinds = Counter(f for call in calls for f in call.faults
                    if f not in ("unavailable", "fallback", "reasked"))
    return ", ".join(f"{kind} {n}" for kind, n in kinds.most_common(4))


def nothing_happened(happened: Counter[str], calls: list[CallRecord],
                     expected: dict[str, str]) -> list[str]:
    """Warnings for a run whose numbers cannot be right: an expected kind of event that never
    happened, or model calls none of which the model answered (every one a fallback)."""
    warnings = [f"{meaning} (no '{kind}' event)" for kind, meaning in expected.items()
                if not happened[kind]]
    answered = sum("fallback" not in call.faults for call in calls)
    if calls and not answered:
        warnings.append(f"no model answer: all {len(calls)} LLM calls fell back to a default")
    warnings += too_long(calls)
    return warnings


def too_long(calls: list[CallRecord]) -> list[str]:
    """A warning per model that refused calls as longer than it takes: how many (they fell back
    to their defaults; asking again would not help), the first, and the server's reason."""
    refused: dict[str, list[CallRecord]] = {}
    for call in calls:
        if call.refused is not None:
            refused.setdefault(_who(call), []).append(call)
    out = []
    for who, mine in refused.items():
        first = mine[0]
        asked = ", ".join(x for x in (first.tag, first.agent) if x)
        out.append(f"too long for {who}: {len(mine)} call(s) longer than the model takes fell "
                   f"back to their defaults, from call {first.seq} ({asked}): "
                   f"{first.refused}; use a model (or start its server) with a longer "
                   "context window")
    return out
