"""Running a single-room benchmark: every selected item is a dialogue episode in its own run
directory, judged by every judge model, with everything finished kept and skipped.

    OUT/<name>.json          the manifest: who played which role, which items, judges, options
    OUT/runs/<item id>/      a standard run directory (header.json, events.jsonl, calls.jsonl,
                             llm_cache.jsonl, result.json) plus judgments/<judge>__<model>.json

A `Benchmark` ties a benchmark's parts together: its items (tasks.<name>), its roles and dialogue
policy (a tasks.kit.DialogueScenario), its judges and board (evaluation.<name>). This module is
the same for every benchmark: resume, the manifest check, the judges' accounting.

A directory holds one configuration: a second run into it must play the same items the same
way, or it stops before running anything (`BenchmarkMismatch`); judges may be added and --every
may change (a quick run grows into the full set). A judge option (how the judges are asked, e.g.
SimulBench's --judge-format) may change only with --rejudge, which asks every judge again that
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

import json
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evaluation.kit import (
    JudgeSpec,
    Plot,
    judgment_problem,
    manifest_data,
    read_bench_dir,
    read_dialogue,
    role_usage,
    usage_table,
)
from evaluation.kit import judge_dialogue as ask_judge
from sandbox.budget import Budget, BudgetExhausted
from sandbox.errors import one_line
from sandbox.judgments import load_judgments, save_judgment, settle_status
from sandbox.llm import AccountingLLM, CacheMiss, CallLog, LLMSettings, make_backend, make_llm
from sandbox.lock import hold
from sandbox.log import CACHE, CALLS, JUDGMENTS
from sandbox.outdirs import OutputTaken, claim
from sandbox.runner import run_episode
from sandbox.storage import write_atomic
from tasks.kit import Cast, DialogueScenario, ItemSet, Role, Sampling

from .parallel import Monitor, Parallel, run_parallel
from .resume import episode_seed, finished

RUNS = "runs"


@dataclass
class BoardReport:
    """What a benchmark's board says of its directories: the table (Markdown, with its notes),
    the same as JSON-able data, and the plot's points."""

    markdown: str
    data: dict[str, Any]
    plot: Plot

    def __post_init__(self) -> None:
        # Labels, model and item ids are a user's text: each line shows its control characters
        # as escapes, so a label cannot repaint the terminal or break the Markdown.
        object.__setattr__(self, "markdown", "\n".join(
            one_line(line) for line in self.markdown.split("\n")))


@dataclass(frozen=True)
class JudgeOption:
    """A choice in how a benchmark's judges are asked (not what the dialogues are): recorded in
    the manifest; changing it in a directory needs --rejudge."""

    default: str
    choices: tuple[str, ...]
    help: str


@dataclass
class Benchmark:
    """A single-room benchmark, as the kit runs it and its commands offer it.

    name          `sandbox NAME`, `sandbox NAME-board`, the manifest OUT/NAME.json
    roles         the dialogue's parts; `under_test` is the one whose model labels the row
    load_items    (path or None for the built-in set, options) -> ItemSet
    scenario      (item, item id, cast, options) -> the item's DialogueScenario
    judges        the benchmark's judges (each is asked of every --judge model)
    board         (benchmark directories, judges filter, seed, resamples, options) -> report
    options       benchmark options that shape the dialogues (recorded; must not change)
    judge_options how the judges are asked (name -> JudgeOption); `judges_for` then gives the
                  judges for the chosen values (default: `judges` whatever they are)
    """

    name: str
    title: str
    roles: list[Role]
    under_test: str
    load_items: Callable[[Path | None, dict[str, Any]], ItemSet]
    scenario: Callable[[Any, str, Cast, dict[str, Any]], DialogueScenario]
    judges: list[JudgeSpec]
    judge_sampling: Sampling
    board: Callable[..., BoardReport]
    item_key: str = "item"  # the header field that holds the item id
    items_option: str = "items"  # --items, or the benchmark's own word (--settings)
    items_help: str = "the items: our YAML or a public file"
    options: dict[str, Any] = field(default_factory=dict)  # name -> default
    option_help: dict[str, str] = field(default_factory=dict)
    board_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # flag -> argparse
    noun: str = "dialogues"  # what one run is called in messages ("conversations")
    item_noun: str = "items"  # what one item is called ("pairs")
    judge_options: dict[str, JudgeOption] = field(default_factory=dict)
    judges_for: Callable[[dict[str, Any]], list[JudgeSpec]] | None = None

    def judge_settings(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Every judge option's value: `given`, else its default."""
        return {name: (given or {}).get(name, option.default)
                for name, option in self.judge_options.items()}

    def judge_specs(self, judge_options: dict[str, Any] | None = None) -> list[JudgeSpec]:
        """The judges asked with these judge options."""
        if self.judges_for is None:
            return self.judges
        return self.judges_for(self.judge_settings(judge_options))

    @property
    def manifest_file(self) -> str:
        return f"{self.name}.json"

    def role(self, name: str) -> Role:
        return next(r for r in self.roles if r.name == name)

    def roles_by_tag(self) -> dict[str, str]:
        """Which role each call tag belongs to (judges' calls count as 'judge')."""
        return {**{r.tag: r.name for r in self.roles}, **{j.tag: "judge" for j in self.judges}}


class Manifest(BaseModel):
    """OUT/<name>.json: what a benchmark directory holds. One configuration per directory."""

    benchmark: str
    label: str
    roles: dict[str, str]  # role -> model
    judges: list[str]
    sampling: dict[str, Sampling]  # every role, and "judge"
    items: str  # where the items came from ("" for the built-in set)
    items_digest: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    judge_options: dict[str, Any] = Field(default_factory=dict)  # how the judges were asked
    every: int = 1
    selected: list[str] = Field(default_factory=list)  # the item ids the latest run selected
    seed: int = 0
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))


class BenchmarkMismatch(Exception):
    """The directory already holds another configuration."""


def read_manifest(path: Path) -> Manifest:
    return Manifest.model_validate(manifest_data(path))


def open_manifest(bench: Benchmark, out: Path, wanted: Manifest, rejudge: bool = False
                  ) -> Manifest:
    """The directory's manifest, created or checked against what this run wants.

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
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(path, wanted.model_dump_json(indent=2))
        return wanted
    have = read_manifest(path)
    use_another = "use another --out for another configuration"
    for role in bench.roles:
        was, now = have.roles.get(role.name), wanted.roles[role.name]
        if was != now:
            raise BenchmarkMismatch(f"{out} holds a benchmark with {role.name} {was!r}, not "
                                    f"{now!r}; {use_another}")
    for key, now in wanted.options.items():
        was = have.options.get(key, bench.options.get(key))
        if was != now:
            raise BenchmarkMismatch(f"{out} holds a benchmark with {key} {was!r}, not {now!r}; "
                                    f"{use_another}")
    # Without a recorded digest, the items file's path is all there is to compare.
    same_items = have.items_digest == wanted.items_digest if have.items_digest \
        else have.items == wanted.items
    if not same_items:
        what = bench.items_option
        shown = f"{what} {have.items!r} as they were (the items have changed since)" \
            if have.items == wanted.items else f"{what} {have.items!r}, not {wanted.items!r}"
        raise BenchmarkMismatch(f"{out} holds a benchmark with {shown}; {use_another}")
    for role in bench.roles:
        if have.sampling.get(role.name) != wanted.sampling[role.name]:
            raise BenchmarkMismatch(f"{out} holds a benchmark with other {role.name} sampling "
                                    f"({have.sampling.get(role.name)}); use another --out")
    judged = bench.judge_settings(have.judge_options)
    for key, now in wanted.judge_options.items():
        if judged.get(key) != now and not rejudge:
            flag = f"--{key.replace('_', '-')}"
            raise BenchmarkMismatch(f"{out} was judged with {flag} {judged.get(key)}, not {now}; "
                                    f"add --rejudge to ask every judge again that way (no "
                                    f"{bench.under_test} is asked again), or use another --out")
    merged = have.model_copy(update={
        "judges": have.judges + [j for j in wanted.judges if j not in have.judges],
        "label": wanted.label, "items_digest": wanted.items_digest, "every": wanted.every,
        "selected": wanted.selected, "options": {**have.options, **wanted.options},
        "judge_options": wanted.judge_options,
        "sampling": {**have.sampling, "judge": wanted.sampling["judge"]}})
    write_atomic(path, merged.model_dump_json(indent=2))
    return merged


class ModelPool:
    """One backend per distinct model (a local model is loaded once, whatever its roles), and
    one LLM stack per (model, cache file), so roles that share a model share its cache."""

    def __init__(self, settings: LLMSettings):
        self.settings = settings  # base_url, dialect, cache mode, ...; `model` is ignored
        self._backends: dict[str, object] = {}
        self._stacks: dict[tuple[str, Path | None], object] = {}
        self._lock = threading.RLock()  # items played side by side (--jobs) share the pool

    def settings_for(self, model: str, cache_path: Path | None) -> LLMSettings:
        return self.settings.model_copy(update={"model": model, "cache_path": cache_path})

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


@dataclass
class BenchmarkReport:
    """What one `run_benchmark` call did."""

    items: int = 0
    runs_made: int = 0
    runs_skipped: int = 0
    judgments_made: int = 0
    judgments_skipped: int = 0
    judge_fallbacks: int = 0
    judge_unavailable: int = 0  # judgments whose call never reached a model (asked again)
    wall_time_s: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (item id, error)
    # Items left unfinished on purpose, (item id, why): "unavailable: ..." (no call of the
    # dialogue reached a model) or "budget: ..." (a cap was reached); the next run goes on.
    stopped: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0  # LLM calls made, judges' included

    def add(self, other: BenchmarkReport) -> None:
        """Count in what another report (one item's) did."""
        for name in ("items", "runs_made", "runs_skipped", "judgments_made",
                     "judgments_skipped", "judge_fallbacks", "judge_unavailable", "calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures += other.failures
        self.stopped += other.stopped


Progress = Callable[[str, str], None]  # (item id, what is happening now)


@dataclass
class ItemPlay:
    """What every item of one `run_benchmark` call shares in one process (a Ray worker builds
    its own, with its own pool of backends: `item_play`)."""

    bench: Benchmark
    out: Path
    pool: ModelPool
    models: dict[str, str]
    sampling: dict[str, Sampling]
    judges: Sequence[str]
    judge_sampling: Sampling
    specs: list[JudgeSpec]
    label: str
    seed: int
    options: dict[str, Any]
    rejudge: bool
    note: Progress | None = None
    # Each item's caps (plain numbers: a Ray worker gets them pickled), and the run's budget
    # (in this process only: each Ray worker would spend its own).
    episode_max_calls: int | None = None
    episode_max_tokens: int | None = None
    budget: Budget | None = None

    def budgets(self) -> list[Budget]:
        """The budgets one item spends: the run's and a fresh one of its own."""
        item = Budget(self.episode_max_calls, self.episode_max_tokens, scope="item")
        return [b for b in (self.budget, item) if b is not None and b.capped]


def item_play(settings: LLMSettings, **fields) -> ItemPlay:
    """An ItemPlay with a pool of its own (for a Ray worker process)."""
    return ItemPlay(pool=ModelPool(settings), **fields)


def play_item(play: ItemPlay, selected: tuple[str, Any]) -> BenchmarkReport:
    """Run one item's dialogue unless finished, then ask the judges not yet heard; what was
    done, as a report of one item. Raises what went wrong (the run directory keeps what was
    written; result.json says why)."""
    item_id, item = selected
    run_dir = play.out / RUNS / item_id
    # Held for the dialogue and its judges (already held by this process unless a Ray worker
    # plays the item; the command holds OUT, so nothing above is checked).
    with hold(run_dir, check_above=False):
        return _play(play, item_id, item, run_dir)


def _play(play: ItemPlay, item_id: str, item: Any, run_dir: Path) -> BenchmarkReport:
    bench, report = play.bench, BenchmarkReport(items=1)
    cache = run_dir / CACHE
    note = play.note or (lambda item, what: None)
    budgets = play.budgets()
    if finished(run_dir):
        report.runs_skipped += 1
    else:
        note(item_id, "dialogue")
        shutil.rmtree(run_dir / JUDGMENTS, ignore_errors=True)  # of another run
        llms = {role: play.pool.llm(model, cache) for role, model in play.models.items()}
        scenario = bench.scenario(item, item_id, Cast(play.models, play.sampling, llms),
                                  play.options)
        result = run_episode(scenario, llms[bench.under_test],
                             seed=episode_seed(play.seed, item_id), out_dir=run_dir,
                             overwrite=True, budgets=budgets,
                             extra_header={bench.item_key: item_id, "label": play.label})
        report.runs_made += 1
        report.calls += result.llm_calls
        if result.status in ("unavailable", "budget"):  # canned lines or half a dialogue:
            report.stopped.append((item_id, f"{result.status}: {result.error}"))  # not judged
            return report
    try:
        _judge(bench, play.specs, run_dir, play.judges, play.judge_sampling, play.pool, cache,
               play.rejudge, report, lambda what: note(item_id, what), budgets)
    except BudgetExhausted as exc:
        report.stopped.append((item_id, f"budget: {exc}"))
    return report


def run_benchmark(bench: Benchmark, out: Path | str, items: ItemSet, pool: ModelPool, *,
                  models: dict[str, str], sampling: dict[str, Sampling], judges: Sequence[str],
                  judge_sampling: Sampling | None = None, label: str | None = None,
                  every: int = 1, seed: int = 0, options: dict[str, Any] | None = None,
                  rejudge: bool = False, judge_options: dict[str, Any] | None = None,
                  on_progress: Progress | None = None, parallel: Parallel | None = None,
                  monitor: Monitor | None = None, budget: Budget | None = None,
                  episode_max_calls: int | None = None,
                  episode_max_tokens: int | None = None) -> BenchmarkReport:
    """Run and judge every selected item that is not done yet, `parallel.jobs` at once in each
    process (their calls share the pool's backends and so the endpoints' limits). One broken
    item does not lose the others: it is in `failures` and the next run tries it again. A
    cache-only replay that misses an answer stops the run (CacheMiss). `on_progress(item,
    what)` hears each step of the items run in this process. `budget` caps the whole run in
    this process (not with Ray: each worker would spend its own), `episode_max_calls` and
    `episode_max_tokens` each item; once `budget` is spent no new item starts."""
    if budget is not None and budget.capped and (parallel or Parallel()).executor == "ray":
        raise ValueError("a run's --max-calls and --max-tokens hold within one process; with "
                         "--executor ray cap each item (--episode-max-calls, "
                         "--episode-max-tokens)")
    out = Path(out)
    with hold(out):
        return _run_benchmark(bench, out, items, pool, models=models, sampling=sampling,
                              judges=judges, judge_sampling=judge_sampling, label=label,
                              every=every, seed=seed, options=options, rejudge=rejudge,
                              judge_options=judge_options, on_progress=on_progress,
                              parallel=parallel, monitor=monitor, budget=budget,
                              episode_max_calls=episode_max_calls,
                              episode_max_tokens=episode_max_tokens)


def _run_benchmark(bench: Benchmark, out: Path, items: ItemSet, pool: ModelPool, *, models,
                   sampling, judges, judge_sampling, label, every, seed, options, rejudge,
                   judge_options, on_progress, parallel, monitor, budget, episode_max_calls,
                   episode_max_tokens) -> BenchmarkReport:
    started = time.perf_counter()
    parallel = parallel or Parallel()
    options = {**bench.options, **(options or {})}
    judge_sampling = judge_sampling or bench.judge_sampling
    label = label or models[bench.under_test]
    selected = items.select(every)
    judge_options = bench.judge_settings(judge_options)
    specs = bench.judge_specs(judge_options)
    open_manifest(bench, out, Manifest(
        benchmark=bench.name, label=label, roles=dict(models), judges=list(judges),
        sampling={**sampling, "judge": judge_sampling}, items=items.source,
        items_digest=items.digest, options=options, judge_options=judge_options, every=every,
        seed=seed, selected=[item_id for item_id, _ in selected]), rejudge)
    shared = dict(bench=bench, out=out, models=dict(models), sampling=dict(sampling),
                  judges=list(judges), judge_sampling=judge_sampling, specs=specs, label=label,
                  seed=seed, options=options, rejudge=rejudge,
                  episode_max_calls=episode_max_calls, episode_max_tokens=episode_max_tokens)
    if parallel.executor == "ray":
        setup = partial(item_play, pool.settings, **shared)
    else:
        play = ItemPlay(pool=pool, note=on_progress, budget=budget, **shared)
        setup = lambda: play  # noqa: E731 - the pool is built already
    spent = (lambda: budget.stopped) if budget is not None and budget.capped else None
    outcomes = run_parallel([(item_id, (item_id, item)) for item_id, item in selected],
                            setup, play_item, parallel, monitor=monitor, stop_on=(CacheMiss,),
                            skipped=lambda r: r.calls == 0, calls_of=lambda r: r.calls,
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


def _judge(bench: Benchmark, specs: list[JudgeSpec], run_dir: Path, judges: Sequence[str],
           sampling: Sampling,
           pool: ModelPool, cache: Path, rejudge: bool, report: BenchmarkReport,
           note: Callable[[str], None], budgets: Sequence[Budget] = ()) -> None:
    """Every judge of the benchmark, asked of every judge model not yet heard (a judgment
    saved as unavailable was not heard); each call goes to the run's calls.jsonl like the
    dialogue's own, and counts against `budgets` (BudgetExhausted before a call past one)."""
    dialogue = read_dialogue(run_dir, bench.name, bench.item_key)
    calls: CallLog | None = None
    unsaved = Counter() if rejudge else _unsaved_judge_calls(run_dir, specs)
    try:
        for spec in specs:
            if spec.applies is not None and not spec.applies(dialogue):
                continue  # nothing of this judge's kind in this dialogue
            # A saved judgment is kept only while it fits the dialogue beside it: a stale
            # one (the events changed, or it judges other turns) or an unreadable file is
            # asked again, and the new judgment takes its file; so is one whose call never
            # reached a model (unavailable: no verdict at all).
            have = {j.model for j in load_judgments(run_dir, spec.name)
                    if j.status != "unavailable" and judgment_problem(spec, j, dialogue) is None}
            for judge in judges:
                judge_llm = pool.llm(judge, cache)
                if judge_llm.model_id in have and not rejudge:
                    report.judgments_skipped += 1
                    continue
                for budget in budgets:  # in order, before the call: a capped run is repeatable
                    budget.reserve(1)
                note(f"judge {judge}" if len(specs) == 1 else f"{spec.name} {judge}")
                calls = calls or CallLog(run_dir / CALLS)
                asked = (spec.tag, f"judge:{judge_llm.model_id}")
                if unsaved[asked]:
                    # A kill came after this call was recorded and before its judgment was
                    # saved: that record stands for the call asked again now (from the
                    # cache), so it is not recorded twice.
                    unsaved[asked] -= 1
                    judgment = ask_judge(spec, dialogue, judge_llm, sampling)
                else:
                    judgment = ask_judge(spec, dialogue, AccountingLLM(judge_llm, calls),
                                         sampling)
                judgment = settle_status(judgment)
                for budget in budgets:
                    budget.spend_tokens(judgment.prompt_tokens + judgment.completion_tokens)
                save_judgment(run_dir, judgment)
                report.judgments_made += 1
                report.judge_fallbacks += judgment.status == "fallback"
                report.judge_unavailable += judgment.status == "unavailable"
    finally:
        if calls is not None:
            report.calls += len(calls.records)
            calls.close()


def _unsaved_judge_calls(run_dir: Path, specs: list[JudgeSpec]) -> Counter:
    """(tag, judge agent) -> judge calls in the run's calls.jsonl with no saved judgment (one
    judgment is one call, tagged with its judge's tag and `judge:<model>`)."""
    tags = {spec.name: spec.tag for spec in specs}
    recorded: Counter = Counter()
    path = run_dir / CALLS
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        try:
            record = json.loads(line)
            if str(record.get("agent") or "").startswith("judge:"):
                recorded[(record["tag"], record["agent"])] += 1
        except (ValueError, KeyError, AttributeError):
            continue  # a torn or foreign line counts for nothing
    for judgment in load_judgments(run_dir):
        recorded[(tags.get(judgment.judge), f"judge:{judgment.model}")] -= 1
    return Counter({key: n for key, n in recorded.items() if n > 0})


def board(bench: Benchmark, dirs: Sequence[Path | str], **kwargs) -> BoardReport:
    """The benchmark's board over `dirs` (its table, data and plot), then the calls and tokens
    of every role, judges included, of every configuration (from the runs' calls.jsonl)."""
    report = bench.board(dirs, **kwargs)
    found = [read_bench_dir(path, bench.manifest_file, f"sandbox {bench.name}") for path in dirs]
    labels = [f.label for f in found]
    usage = {(f.label if labels.count(f.label) == 1 else f"{f.label} ({f.path.name})"):
             role_usage(f.runs, bench.roles_by_tag()) for f in found}
    markdown = report.markdown + "\nCalls and tokens per role:\n\n" + \
        "\n".join(usage_table(usage)) + "\n"
    data = {**report.data, "usage": {label: {role: u.model_dump() for role, u in roles.items()}
                                     for label, roles in usage.items()}}
    return BoardReport(markdown=markdown, data=data, plot=report.plot)
