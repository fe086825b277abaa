"""Running a single-room benchmark: every selected item is a dialogue episode in its own run
directory, judged by every judge model, with everything finished kept and skipped.

    OUT/<name>.json          the manifest: who played which role, which items, judges, options
    OUT/runs/<item id>/      a standard run directory (header.json, events.jsonl, calls.jsonl,
                             llm_cache.jsonl, result.json) plus judgments/<judge>__<model>.json

A `Benchmark` (sandbox/app/plugins.py) is a benchmark's declaration: its items, its roles and
dialogue (a tasks.kit.DialogueScenario), its judges and board. This module is the same for
every benchmark: resume, the manifest check, the judges' accounting (evaluation.kit.judging).

A directory holds one configuration: a second run into it must play the same items the same
way, or it stops before running anything (`BenchmarkMismatch`); judges may be added and --every
may change (a quick run grows into the full set). A judge option (how the judges are asked, e.g.
a judge format) may change only with --rejudge, which asks every judge again that
way, so a directory's judgments are never a mix of two ways of asking. A finished item is not
run again and a saved judgment is not asked again; an item whose run was cut off (killed, its
result.json gone, its header unreadable, or its events cut since: sandbox.log.run_outcome) is
run again from the start, its answers coming from the run's cache. A saved judgment that no
longer fits its dialogue (stale) or does not read is asked again. A new judge calls no role of
the dialogue.

A run holds OUT's lock (sandbox/lock.py): a second command writing into OUT is refused. An
item whose calls none reached a model (status unavailable) is not judged and is run again by
the next run; a judgment whose call never reached a model is saved with status unavailable and
asked again. Budgets cap the calls and tokens of the whole run (`budget`, in this process) and
of each item (`episode_max_calls`, `episode_max_tokens`), judges included; an item a budget
stopped is run (or judged) on by the next run, its answers coming from its cache.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from evaluation.kit import (
    Ledger,
    Plot,
    manifest_data,
    read_bench_dir,
    read_dialogue,
    role_usage,
    test_doubles,
    usage_table,
)
from evaluation.kit.judging import JudgeTally, Panel, judge_run
from evaluation.kit.rows import identity, pool_rows, role_identity
from sandbox.budget import Budget, BudgetExhausted
from sandbox.files import FileFormatError
from sandbox.llm import (
    CacheMiss,
    LLMSettings,
    ModelsFile,
    endpoints_of,
    make_backend,
    make_llm,
    model_name,
    resolve,
    shown_role,
)
from sandbox.llm.roles import RoleLLM
from sandbox.lock import hold
from sandbox.log import CACHE, JUDGMENTS
from sandbox.outdirs import OutputTaken, claim
from sandbox.redact import redact_url
from sandbox.runner import run_episode
from sandbox.storage import write_atomic
from tasks.kit import Cast, ItemSet, Sampling

from ..plugins import Benchmark, BoardReport
from .parallel import Monitor, Parallel, run_parallel
from .resume import episode_seed, finished

RUNS = "runs"


class Manifest(BaseModel):
    """OUT/<name>.json: what a benchmark directory holds. One configuration per directory."""

    benchmark: str
    label: str
    roles: dict[str, str]  # role -> model
    judges: list[str]
    # Each judge as typed -> who it is ("alias (model id)", or the model id): what its
    # judgments are saved and looked up under, so two aliases of one model are two judges.
    judge_names: dict[str, str] = Field(default_factory=dict)
    # What each role (by role) and each judge (as typed) resolved to, where the models file or
    # an endpoint stands behind the name: {"model", "alias", "base_url"} (no credential). Boards
    # pool, and this directory's later runs are checked, by it (evaluation/kit/rows.py
    # `identity`), never by the string typed.
    resolved: dict[str, dict[str, str | None]] = Field(default_factory=dict)
    resolved_judges: dict[str, dict[str, str | None]] = Field(default_factory=dict)
    sampling: dict[str, Sampling]  # every role, and "judge"
    items: str  # where the items came from ("" for the built-in set)
    items_digest: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    judge_options: dict[str, Any] = Field(default_factory=dict)  # how the judges were asked
    every: int = 1
    selected: list[str] = Field(default_factory=list)  # the item ids the latest run selected
    seed: int = 0
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))

    def written(self) -> str:
        """The manifest's JSON; `judge_names`, `resolved` and `resolved_judges` only when
        there is something in them (a manifest of bare backend/model names on no endpoint
        reads as it always has)."""
        empty = {name for name in ("judge_names", "resolved", "resolved_judges")
                 if not getattr(self, name)}
        return self.model_dump_json(indent=2, exclude=empty or None)


class BenchmarkMismatch(Exception):
    """The directory already holds another configuration."""


def read_manifest(path: Path) -> Manifest:
    """OUT/<name>.json read back; BenchmarkMismatch naming the file when it is not a manifest
    (a board's JSON saved under its name, a damaged file): never a traceback, never written
    over."""
    try:
        data = manifest_data(path)
    except FileFormatError as exc:
        raise BenchmarkMismatch(str(exc)) from None
    except ValueError as exc:
        raise BenchmarkMismatch(f"{path}: not a benchmark manifest (not JSON: {exc})") from None
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise BenchmarkMismatch(f"{path}: not a benchmark manifest (at {where}: "
                                f"{first['msg']}); use another --out") from None


def open_manifest(bench: Benchmark, out: Path, wanted: Manifest, rejudge: bool = False,
                  write: bool = True) -> Manifest:
    """The directory's manifest, created or checked against what this run wants (`write`
    False: checked only, for a dry run, which refuses what the run refuses).

    What plays the dialogues (the roles' models and sampling, the items, the options) must
    match: run directories are keyed by item only, so a second configuration would silently
    mix with the first. Judges may be added, and --every may change: a quick run grows into a
    full one (finished items are kept) and the board counts the items the latest run chose.
    A judge option may change only with `rejudge` (every judgment is then asked again)."""
    path = out / bench.manifest_file
    try:
        claim(out, bench.manifest_file, f"a {bench.name} benchmark")
    except OutputTaken as exc:
        raise BenchmarkMismatch(str(exc)) from None
    if not path.is_file():
        if write:
            out.mkdir(parents=True, exist_ok=True)
            write_atomic(path, wanted.written())
        return wanted
    have = read_manifest(path)
    use_another = "use another --out for another configuration"
    for role in bench.roles:
        # by what each resolved to (alias A and its model id on A's endpoint are one
        # model; an alias now naming another model is not); a manifest from before it was
        # recorded, by the string typed
        was = role_identity(have.model_dump(), role.name)
        now = role_identity(wanted.model_dump(), role.name)
        as_before = role.name not in have.resolved and \
            have.roles.get(role.name) == wanted.roles[role.name]
        if was != now and not as_before:
            raise BenchmarkMismatch(f"{out} holds a benchmark with {role.name} {was!r}, not "
                                    f"{now!r}; {use_another}")
    defaults = bench.defaults()
    for key, now in wanted.options.items():
        was = have.options.get(key, defaults.get(key))
        if was != now:
            raise BenchmarkMismatch(f"{out} holds a benchmark with {key} {was!r}, not {now!r}; "
                                    f"{use_another}")
    # Without a recorded digest, the items file's path is all there is to compare.
    same_items = have.items_digest == wanted.items_digest if have.items_digest \
        else have.items == wanted.items
    if not same_items:
        what = bench.items.flag
        shown = f"{what} {have.items!r} as they were (the items have changed since)" \
            if have.items == wanted.items else f"{what} {have.items!r}, not {wanted.items!r}"
        raise BenchmarkMismatch(f"{out} holds a benchmark with {shown}; {use_another}")
    for role in bench.roles:
        if have.sampling.get(role.name) != wanted.sampling[role.name]:
            raise BenchmarkMismatch(f"{out} holds a benchmark with other {role.name} sampling "
                                    f"({have.sampling.get(role.name)}); use another --out")
    judged = bench.judging.settings(have.judge_options)
    for key, now in wanted.judge_options.items():
        if judged.get(key) != now and not rejudge:
            flag = f"--{key.replace('_', '-')}"
            raise BenchmarkMismatch(f"{out} was judged with {flag} {judged.get(key)}, not {now}; "
                                    f"add --rejudge to ask every judge again that way (no "
                                    f"{bench.under_test} is asked again), or use another --out")
    merged = have.model_copy(update={
        "judges": have.judges + [j for j in wanted.judges if j not in have.judges],
        "judge_names": {**have.judge_names, **wanted.judge_names},
        "resolved": {**wanted.resolved, **have.resolved},
        "resolved_judges": {**have.resolved_judges, **wanted.resolved_judges},
        "label": wanted.label, "items_digest": wanted.items_digest, "every": wanted.every,
        "selected": wanted.selected, "options": {**have.options, **wanted.options},
        "judge_options": wanted.judge_options,
        "sampling": {**have.sampling, "judge": wanted.sampling["judge"]}})
    if write:
        write_atomic(path, merged.written())
    return merged


class ModelPool:
    """One backend per distinct model (a local model is loaded once, whatever its roles), and
    one LLM stack per (model, cache file), so roles that share a model share its cache."""

    def __init__(self, settings: LLMSettings, models: ModelsFile | None = None):
        self.settings = settings  # base_url, dialect, cache mode, ...; `model` is ignored
        self.models = models or ModelsFile()  # the aliases a role's model may be named by
        self._backends: dict[str, object] = {}
        self._stacks: dict[tuple[str, Path | None], object] = {}
        self._lock = threading.RLock()  # items played side by side (--jobs) share the pool

    def settings_for(self, model: str, cache_path: Path | None) -> LLMSettings:
        """The settings that reach `model` (an alias of the models file, with its own endpoint,
        key variable and limits, or backend/model on --base-url); LLMConfigError otherwise."""
        return resolve(model, self.models, self.settings).model_copy(
            update={"cache_path": cache_path})

    def name(self, model: str) -> str:
        """Who `model` (as typed) is: "alias (model id)" for an alias, else the model id."""
        settings = self.settings_for(model, None)
        return model_name(settings.model, settings.endpoint)

    def resolved(self, model: str) -> dict[str, str | None] | None:
        """What `model` (as typed) resolved to, as a manifest records it: its model id, alias
        and endpoint URL (no credential); None for a bare name no endpoint stands behind (a
        scripted or local model, an openai model on the default endpoint), which is itself."""
        settings = self.settings_for(model, None)
        url = settings.base_url if settings.model.startswith("openai/") else None
        if settings.endpoint is None and url is None:
            return None
        return {"model": settings.model, "alias": settings.endpoint,
                "base_url": redact_url(url) if url else None}

    def backend(self, model: str):
        with self._lock:
            if model not in self._backends:
                self._backends[model] = make_backend(self.settings_for(model, None))
            return self._backends[model]

    def llm(self, model: str, cache_path: Path | None):
        key = (model, cache_path)
        with self._lock:
            if key not in self._stacks:
                self._stacks[key] = make_llm(self.settings_for(model, cache_path),
                                             backend=self.backend(model))
            return self._stacks[key]


@dataclass(frozen=True)
class Configuration:
    """What a benchmark directory holds: who plays each role and how, who judges and how, and
    which items (one configuration per directory; see `open_manifest`)."""

    models: dict[str, str]  # role -> model
    sampling: dict[str, Sampling]  # role -> sampling
    judges: Sequence[str]  # the judge models
    judge_sampling: Sampling | None = None  # [default: the benchmark's]
    label: str | None = None  # the row's name on the board [default: the model under test]
    every: int = 1  # keep about one of K items
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)  # the benchmark's options
    judge_options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Limits:
    """What a run may spend: `budget` caps the whole run in this process (not with Ray: each
    worker would spend its own), the episode caps each item, judges included."""

    budget: Budget | None = None
    episode_max_calls: int | None = None
    episode_max_tokens: int | None = None


@dataclass
class BenchmarkReport:
    """What one `run_benchmark` call did."""

    items: int = 0
    runs_made: int = 0
    runs_skipped: int = 0
    judged: JudgeTally = field(default_factory=JudgeTally)
    wall_time_s: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (item id, error)
    # Items left unfinished on purpose, (item id, why): "unavailable: ..." (no call of the
    # dialogue reached a model) or "budget: ..." (a cap was reached); the next run goes on.
    stopped: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0  # LLM calls of the dialogues (the judges' are in `judged`)

    @property
    def all_calls(self) -> int:
        return self.calls + self.judged.calls

    def add(self, other: BenchmarkReport) -> None:
        """Count in what another report (one item's) did."""
        for name in ("items", "runs_made", "runs_skipped", "calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("made", "skipped", "fallbacks", "unavailable", "calls"):
            setattr(self.judged, name, getattr(self.judged, name) + getattr(other.judged, name))
        self.failures += other.failures
        self.stopped += other.stopped


Progress = Callable[[str, str], None]  # (item id, what is happening now)


@dataclass
class Session:
    """What every item of one `run_benchmark` call shares in one process (a Ray worker opens
    its own, with its own pool of backends: `worker_session`)."""

    bench: Benchmark
    out: Path
    pool: ModelPool
    config: Configuration  # complete: defaults filled in by `run_benchmark`
    rejudge: bool
    limits: Limits  # the episode caps are plain numbers: a Ray worker gets them pickled
    note: Progress | None = None
    # The `sandbox ...` words of the run, kept in each item's header: what remakes the item
    command: tuple[str, ...] = ()

    def budgets(self) -> list[Budget]:
        """The budgets one item spends: the run's and a fresh one of its own."""
        item = Budget(self.limits.episode_max_calls, self.limits.episode_max_tokens,
                      scope="item")
        return [b for b in (self.limits.budget, item) if b is not None and b.capped]


def worker_session(settings: LLMSettings, models: ModelsFile, **fields) -> Session:
    """A Session with a pool of its own (for a Ray worker process)."""
    return Session(pool=ModelPool(settings, models), **fields)


def run_item(session: Session, selected: tuple[str, Any]) -> BenchmarkReport:
    """Run one item's dialogue unless finished, then ask the judges not yet heard; what was
    done, as a report of one item. Raises what went wrong (the run directory keeps what was
    written; result.json says why)."""
    item_id, item = selected
    run_dir = session.out / RUNS / item_id
    # Held for the dialogue and its judges (already held by this process unless a Ray worker
    # plays the item; the command holds OUT, so nothing above is checked).
    with hold(run_dir, check_above=False):
        return _run_item(session, item_id, item, run_dir)


def remake_item(bench: Benchmark, run: Path, out: Path, selected: tuple[str, Any],
                pool: ModelPool, config: Configuration, *, limits: Limits = Limits(),
                command: Sequence[str] = ()) -> BenchmarkReport:
    """One item of a benchmark run (RUN, an item's run directory) made again into OUT (RUN
    itself, or a new directory holding a copy of RUN's cache), finished or not: its dialogue
    and every judge, each answer from OUT's cache when it holds it (`sandbox rerun ITEM`).
    Its judges are named as RUN's benchmark directory recorded them (its judgments' names);
    its header records `command`, the benchmark run that made the item."""
    config = _complete(bench, config, pool)
    home = run.parent.parent  # BENCH/runs/ITEM
    config = replace(config, judges=recorded_judges(bench, home, config.judges, pool))
    session = Session(bench, home, pool, config, rejudge=True, limits=limits,
                      command=tuple(command))
    with hold(out):  # refused while the benchmark run that holds RUN's directory goes on
        return _run_item(session, *selected, out, again=True)


def _run_item(session: Session, item_id: str, item: Any, run_dir: Path, *,
              again: bool = False) -> BenchmarkReport:
    bench, config, report = session.bench, session.config, BenchmarkReport(items=1)
    cache = run_dir / CACHE
    note = session.note or (lambda item, what: None)
    budgets = session.budgets()
    if finished(run_dir) and not again:
        report.runs_skipped += 1
    else:
        note(item_id, "dialogue")
        shutil.rmtree(run_dir / JUDGMENTS, ignore_errors=True)  # of another run
        # Each role's calls recorded under its role (calls.jsonl: role, model, endpoint).
        llms = {role: RoleLLM(session.pool.llm(model, cache), role)
                for role, model in config.models.items()}
        scenario = bench.scenario(item, item_id, Cast(config.models, config.sampling, llms),
                                  config.options)
        # What each role resolved to, where a models file or an endpoint stands behind its
        # name (the header's config.roles, as a town's: `sandbox log` names each role by it).
        roles = {role: shown_role(session.pool.settings_for(model, None))
                 for role, model in config.models.items()
                 if session.pool.resolved(model) is not None}
        # Every role's endpoint, not the model under test's alone (the one the runner is
        # given): what a failure of the interrogator names, what a rerun rebuilds from.
        endpoints = {name: record for llm in llms.values()
                     for name, record in endpoints_of(llm).items()}
        result = run_episode(scenario, llms[bench.under_test],
                             seed=episode_seed(config.seed, item_id), out_dir=run_dir,
                             overwrite=True, budgets=budgets,
                             extra_header={bench.items.header_key: item_id,
                                           "label": config.label,
                                           **({"roles": roles} if roles else {}),
                                           **({"endpoints": endpoints} if endpoints else {}),
                                           **({"benchmark_command": list(session.command)}
                                              if session.command else {})})
        report.runs_made += 1
        report.calls += result.llm_calls
        if result.status in ("unavailable", "budget"):  # canned lines or half a dialogue:
            report.stopped.append((item_id, f"{result.status}: {result.error}"))  # not judged
            return report
    panel = Panel(config.judges, lambda model: RoleLLM(session.pool.llm(model, cache), "judge"),
                  config.judge_sampling)
    try:
        judge_run(run_dir, read_dialogue(run_dir, bench.name, bench.items.header_key),
                  bench.judging.specs(config.judge_options), panel, rejudge=session.rejudge,
                  budgets=budgets, note=lambda what: note(item_id, what), tally=report.judged)
    except BudgetExhausted as exc:
        report.stopped.append((item_id, f"budget: {exc}"))
    return report


def run_benchmark(bench: Benchmark, out: Path | str, items: ItemSet, pool: ModelPool,
                  config: Configuration, *, rejudge: bool = False,
                  parallel: Parallel | None = None, limits: Limits = Limits(),
                  monitor: Monitor | None = None,
                  on_progress: Progress | None = None,
                  command: list[str] | None = None) -> BenchmarkReport:
    """Run and judge every selected item that is not done yet, `parallel.jobs` at once in each
    process (their calls share the pool's backends and so the endpoints' limits). One broken
    item does not lose the others: it is in `failures` and the next run tries it again. A
    cache-only replay that misses an answer stops the run (CacheMiss). `on_progress(item,
    what)` hears each step of the items run in this process; once `limits.budget` is spent no
    new item starts. `command`: the `sandbox ...` words that made the run, recorded in every
    item's header (`benchmark_command`: `sandbox rerun` says what remakes the item)."""
    parallel = parallel or Parallel()
    budget = limits.budget
    if budget is not None and budget.capped and parallel.executor == "ray":
        raise ValueError("a run's --max-calls and --max-tokens hold within one process; with "
                         "--executor ray cap each item (--episode-max-calls, "
                         "--episode-max-tokens)")
    out = Path(out)
    with hold(out):
        return _run_benchmark(bench, out, items, pool, config, rejudge, parallel, limits,
                              monitor, on_progress, tuple(command or ()))


def _complete(bench: Benchmark, config: Configuration, pool: ModelPool) -> Configuration:
    """The configuration with the benchmark's defaults filled in; its label the model under
    test as named everywhere ("alias (model id)" for an alias)."""
    return Configuration(
        models=dict(config.models), sampling=dict(config.sampling), judges=list(config.judges),
        judge_sampling=config.judge_sampling or bench.judging.sampling,
        label=config.label or pool.name(config.models[bench.under_test]), every=config.every,
        seed=config.seed, options={**bench.defaults(), **config.options},
        judge_options=bench.judging.settings(config.judge_options))


def wanted_manifest(bench: Benchmark, items: ItemSet, config: Configuration,
                    pool: ModelPool) -> Manifest:
    """The manifest a run of `config` over `items` wants its directory to hold (its judges
    as `pool` names them)."""
    config = _complete(bench, config, pool)
    names = {judge: pool.name(judge) for judge in config.judges}
    return Manifest(
        benchmark=bench.name, label=config.label, roles=config.models,
        judges=list(config.judges), judge_names={j: n for j, n in names.items() if n != j},
        resolved={role: found for role, model in config.models.items()
                  if (found := pool.resolved(model)) is not None},
        resolved_judges={judge: found for judge in config.judges
                         if (found := pool.resolved(judge)) is not None},
        sampling={**config.sampling, "judge": config.judge_sampling},
        items=items.source, items_digest=items.digest, options=config.options,
        judge_options=config.judge_options, every=config.every, seed=config.seed,
        selected=[item_id for item_id, _ in items.select(config.every)])


def recorded_judges(bench: Benchmark, out: Path, judges: Sequence[str], pool: ModelPool
                    ) -> list[str]:
    """`judges` with each one the directory's manifest already records under another name
    for the same model on the same endpoint (an alias, and its model id typed on the alias's
    URL) named as recorded, said in one line: one judge, its judgments saved and found under
    one name, never asked again as a second judge. Two aliases stay two judges."""
    path = out / bench.manifest_file
    if not path.is_file():
        return list(judges)
    have = read_manifest(path)
    known = {identity(found, judge): judge for judge, found in have.resolved_judges.items()}
    named = []
    for judge in judges:
        found = pool.resolved(judge)
        same = known.get(identity(found, judge)) if found is not None else None
        if same is None or same == judge or (found["alias"] and
                                             have.resolved_judges[same]["alias"]):
            named.append(judge)
            continue
        print(f"judge {judge}: the same model at the same endpoint as {same} "
              f"({have.judge_names.get(same, same)}), this directory's judge: its judgments "
              "are kept under that name", file=sys.stderr, flush=True)
        named.append(same)
    return list(dict.fromkeys(named))


def _run_benchmark(bench, out, items, pool, config, rejudge, parallel, limits, monitor,
                   on_progress, command) -> BenchmarkReport:
    started = time.perf_counter()
    config = _complete(bench, config, pool)
    config = replace(config, judges=recorded_judges(bench, out, config.judges, pool))
    selected = items.select(config.every)
    open_manifest(bench, out, wanted_manifest(bench, items, config, pool), rejudge)
    budget = limits.budget
    if parallel.executor == "ray":  # the run's budget stays in this process
        shared = dict(bench=bench, out=out, config=config, rejudge=rejudge,
                      limits=Limits(None, limits.episode_max_calls, limits.episode_max_tokens),
                      command=command)
        setup = partial(worker_session, pool.settings, pool.models, **shared)
    else:
        session = Session(bench, out, pool, config, rejudge, limits, note=on_progress,
                          command=command)
        setup = lambda: session  # noqa: E731 - the pool is built already
    spent = (lambda: budget.stopped) if budget is not None and budget.capped else None
    outcomes = run_parallel([(item_id, (item_id, item)) for item_id, item in selected],
                            setup, run_item, parallel, monitor=monitor, stop_on=(CacheMiss,),
                            skipped=lambda r: r.all_calls == 0, calls_of=lambda r: r.all_calls,
                            stop_when=spent)
    report = BenchmarkReport()
    for outcome in outcomes:
        if not outcome.ran:  # the run's budget was spent before it started
            report.items += 1
            report.stopped.append((outcome.key, "budget: not started, the suite's budget is "
                                                 "spent"))
        elif outcome.failed:
            report.items += 1
            report.failures.append((outcome.key, outcome.error))
        else:
            report.add(outcome.result)
        if on_progress is not None:
            on_progress(outcome.key, "done")
    report.wall_time_s = time.perf_counter() - started
    return report


def board_report(bench: Benchmark, dirs: Sequence[Path | str], **kwargs) -> BoardReport:
    """The benchmark's board over `dirs` (its table, data and plot), then the calls and tokens
    of every role, judges included, of every configuration (from the runs' calls.jsonl)."""
    report = bench.board.build(dirs, **kwargs)
    found = [read_bench_dir(path, bench.manifest_file, f"sandbox {bench.name}") for path in dirs]
    rows = pool_rows(found, bench.board.pooled, kwargs.get("judges"))  # as the board's rows
    uncounted: list[str] = []
    usage = {row.label: role_usage([r for f in row.benches for r in f.runs],
                                   bench.roles_by_tag(), uncounted) for row in rows}
    markdown = report.markdown + "\nCalls and tokens per role:\n\n" + \
        "\n".join(usage_table(usage, uncounted)) + "\n"
    doubles = test_doubles([m for f in found for m in [*(f.manifest.get("roles") or {}).values(),
                                                         *f.judges]])
    notes = board_notes(report.data)
    data = {**report.data, "usage": {label: {role: u.model_dump() for role, u in roles.items()}
                                     for label, roles in usage.items()},
            "usage_uncounted": uncounted, "notes": notes, "test_double": doubles}
    plot = report.plot
    if isinstance(plot, Plot):  # a plot travels without its board: it carries both
        plot = replace(plot, notes=[*plot.notes, *notes], test_double=doubles)
    return BoardReport(markdown=markdown, data=data, plot=plot)


def board_notes(data: dict[str, Any]) -> list[str]:
    """What a board says beside its numbers, one line each: its warnings, and each
    configuration whose selection is not all finished and judged (the accounting's line)."""
    notes = [f"Warning: {w}" for w in data.get("warnings") or [] if isinstance(w, str)]
    found = data.get("accounting")
    ledgers = dict(found) if isinstance(found, dict) else {}
    for row in data.get("rows") or []:
        if isinstance(row, dict) and isinstance(row.get("accounting"), dict):
            ledgers.setdefault(str(row.get("label")), row["accounting"])
    for label, counts in ledgers.items():
        if not isinstance(counts, dict):
            continue
        if (note := Ledger.from_data(label, counts).note()) is not None:
            notes.append(note)
    return notes
