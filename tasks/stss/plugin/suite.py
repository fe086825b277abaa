"""Running STSS episodes: one template (`run_task`), or a suite that resumes (`run_suite`).

Orchestration (the benchmark's composition root; evaluation.stss only scores logs and
tabulates scores).
A suite directory holds one run directory per episode, `<out>/<template>/<arch>/s<seed>`; an
episode whose result.json says completed and whose score.json exists is skipped, a completed
one without a score (or scored by another window rule) is only scored, anything else is run
again from the start. `<out>/suite.json` records the options that shape an episode (model,
background, window, embedder, prompts, which file each architecture directory stands for): a
resumed suite must ask for the same, or its old episodes would be reused under new labels; it
also lists every episode each run planned, which `sandbox stss-board` accounts for.
The table goes to `<out>/table.json` and `<out>/table.md`.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evaluation.stss import (
    ScoringOptions,
    STSSScore,
    SuiteTable,
    differences_markdown,
    read_score,
    rule_differences,
    table_markdown,
    tables_by_rules,
    write_score,
)
from sandbox.app.roles import TownRoles
from sandbox.app.suites.parallel import Monitor, Outcome, Parallel, run_parallel
from sandbox.app.suites.resume import finished
from sandbox.budget import Budget
from sandbox.events import Event
from sandbox.llm import CacheMiss
from sandbox.log import CACHE, RunResult
from sandbox.outdirs import OutputTaken, claim
from sandbox.runner import COMMAND, run_episode
from sandbox.storage import write_atomic
from tasks.stss import EpisodeWindow, STSSEpisode, instantiate, load_template
from tasks.stss.importer import ImportReport
from worlds import World

from . import SUITE_FILE

# (run directory, the performer) -> the episode's model (a Router when the performer's
# high-level calls go to another model than the town's: sandbox/app/roles.py)
MakeLLM = Callable[[Path, str], object]


class SuiteError(ValueError):
    """A suite that cannot run as asked (options that differ from the recorded ones, two
    architectures or templates that would share a directory)."""


class SuiteOptions(BaseModel):
    """What shapes every episode of a suite, recorded in OUT/suite.json."""

    model_config = ConfigDict(extra="forbid")

    model: str  # the evaluated model (the performer's), an alias or backend/model
    # The rest of the town's model and which of the performer's calls the evaluated model
    # answers (sandbox/app/roles.py); None: one model for the whole town. Not written when
    # None, so a suite.json of one model reads as it always has.
    background_model: str | None = Field(default=None, exclude_if=lambda v: v is None)
    performer_routing: str | None = Field(default=None, exclude_if=lambda v: v is None)
    world: str = "town"  # worlds.world_ref: a suite's episodes all live in one town
    background: int | None = None
    window: EpisodeWindow = Field(default_factory=EpisodeWindow)
    embedder: str | None = None
    prompts: str | None = None
    # Directory name -> the --arch it stands for. New architectures may join a suite later;
    # a directory may not change what it holds.
    architectures: dict[str, str] = Field(default_factory=dict)
    # Every episode a run of the suite planned (<template>/<arch>/s<seed>, `episode_key`),
    # over all its runs: what a board accounts for, an episode never started included.
    episodes: list[str] = Field(default_factory=list)
    # Who `model` and `background_model` are, as the models file resolved them ("alias (model
    # id)", or the model id): what boards and compare name and match a row by, never the
    # string typed. Not written when empty (a suite from before it reads as it did).
    named: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)


OPTION_NAMES = {"model": "--model", "background_model": "--background-model",
                "performer_routing": "--performer-routing", "world": "--world",
                "background": "--background",
                "same_day": "--same-day", "start": "--start", "until": "--until",
                "embedder": "--embedder", "prompts": "--prompts", "architectures": "--arch"}


def _differences(old: SuiteOptions, new: SuiteOptions) -> list[tuple[str, object, object]]:
    """(option, recorded, asked) for each option that differs."""
    was, now = old.model_dump(mode="json"), new.model_dump(mode="json")
    for key in ("same_day", "start", "until"):
        was[key], now[key] = was["window"][key], now["window"][key]
    diffs = [(k, was.get(k), now.get(k)) for k in OPTION_NAMES
             if k != "architectures" and was.get(k) != now.get(k)]
    # An alias typed alike may resolve to another model now (the models file edited): the
    # suite's episodes were run by the one it recorded.
    for key, name in now.get("named", {}).items():
        if key in OPTION_NAMES and was.get("named", {}).get(key, name) != name:
            diffs.append((key, f"{was['named'][key]}", name))
    for name, ref in now["architectures"].items():
        if was["architectures"].get(name, ref) != ref:
            diffs.append(("architectures", f"{name} = {was['architectures'][name]}",
                          f"{name} = {ref}"))
    return diffs


def _show(value: object) -> str:
    if value is None:
        return "the default"
    if isinstance(value, bool):  # --same-day
        return "on" if value else "off"
    return str(value)


def check_options(out: Path, options: SuiteOptions) -> SuiteOptions:
    """What OUT/suite.json will say once this run starts; SuiteError naming the first option
    that differs from those a suite already in `out` was run with. A suite from before
    suite.json existed is trusted."""
    path = out / SUITE_FILE
    try:
        claim(out, SUITE_FILE, "an STSS suite")
    except OutputTaken as exc:
        raise SuiteError(str(exc)) from None
    if not path.exists():
        return options
    recorded = SuiteOptions.model_validate_json(path.read_text(encoding="utf-8"))
    diffs = _differences(recorded, options)
    if diffs:
        key, was, now = diffs[0]
        more = f" (and {len(diffs) - 1} more option(s) differ)" if len(diffs) > 1 else ""
        raise SuiteError(f"{OPTION_NAMES[key]}: asked for {_show(now)}, but the suite in {out} "
                         f"was run with {_show(was)}{more}; use a new --out for these options")
    return options.model_copy(update={
        "architectures": {**recorded.architectures, **options.architectures},
        "episodes": list(dict.fromkeys([*recorded.episodes, *options.episodes]))})


def record_options(out: Path, options: SuiteOptions) -> None:
    """Write OUT/suite.json (after `check_options`, once the model is known to work)."""
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / SUITE_FILE, options.model_dump_json(indent=2))


@dataclass(frozen=True)
class Episode:
    """One cell of a suite: a template, the performer's architecture, a seed."""

    template: Path
    architecture: str
    seed: int
    run_dir: Path


def run_task(template: Path, world: World, make_llm: MakeLLM, *, architecture: str, seed: int,
             out: Path, window: EpisodeWindow | None = None, background: int | None = None,
             embedder: str | None = None, overwrite: bool = False,
             on_event: Callable[[Event], None] | None = None,
             max_concurrency: int | None = None, scoring: ScoringOptions | None = None,
             budgets: list[Budget] | None = None, whispers: list | None = None,
             checkpoint_every: float | None = None) -> tuple[RunResult, STSSScore | None]:
    """Instantiate `template` with `seed`, run the episode into `out`, score it (under our
    rules, no score when a budget stopped it first; none under any rules when no call reached
    a model: its agents said canned lines). `whispers`: tasks.town.Whisper, planted as it
    runs; a checkpoint every `checkpoint_every` simulated seconds (sandbox/checkpoint.py)."""
    task = instantiate(load_template(template, world), seed, world, background=background)
    episode = STSSEpisode(task, architecture, window=window, embedder=embedder,
                          whispers=whispers)
    result = run_episode(episode, make_llm(out, task.performer), seed=seed, out_dir=out,
                         overwrite=overwrite,
                         on_event=on_event, max_concurrency=max_concurrency, budgets=budgets,
                         checkpoint_every=checkpoint_every)
    if result.status == "unavailable":
        return result, None
    if result.status == "budget" and (scoring is None or scoring.rules == "ours"):
        return result, None  # ours scores complete runs only; the reference's warns instead
    return result, write_score(out, scoring)


LIST_TEMPLATES = "`sandbox list templates` lists them"
_GLOB = "*?["


def template_specs(values: list[str] | None) -> list[str]:
    """--templates as given (repeated, each maybe comma-separated) -> one spec each; a value
    that is an existing path is kept whole, commas and all."""
    specs: list[str] = []
    for value in values or []:
        parts = [value] if _exists(value) else value.split(",")
        specs += [part.strip() for part in parts if part.strip()]
    return specs


def _exists(value: str) -> bool:
    """Whether a path exists; a name the system refuses (too long: 30 template names in one
    comma-separated value) is no path."""
    try:
        return Path(value).exists()
    except OSError:
        return False


def _builtin(name: str) -> Path | None:
    from tasks.stss import TEMPLATES_DIR

    path = TEMPLATES_DIR / f"{name}.yaml"
    return path if "/" not in name and path.is_file() else None


def find_templates(specs: list[str]) -> list[Path]:
    """The template files of several specs, in order, each file once: a built-in template's
    name, a glob of such names (`public_*`), a template file, a directory (its *.yaml), or a
    glob of files. SuiteError on a spec that finds nothing, naming the nearest built-in
    names when it looks like a misspelt one."""
    from fnmatch import fnmatch

    from tasks.stss import builtin_templates, nearest_templates

    found: dict[Path, Path] = {}
    for spec in specs:
        path = Path(spec)
        a_name = "/" not in spec and path.suffix not in (".yaml", ".yml")
        if len(spec) > 255:  # longer than any file name the system takes
            raise SuiteError(f"--templates {spec[:60]}...: {len(spec)} characters is no "
                             f"template name or file; {LIST_TEMPLATES}")
        if path.is_dir():
            files = sorted(path.glob("*.yaml"))
            if not files:
                raise SuiteError(f"--templates {spec}: no template files (*.yaml) in it")
        elif any(c in spec for c in _GLOB):
            files = [t for t in builtin_templates() if fnmatch(t.stem, spec)] if a_name else []
            files = files or sorted(Path(p) for p in glob.glob(spec))
            if not files:
                raise SuiteError(f"--templates {spec}: matches no built-in template name and no "
                                 f"file; {LIST_TEMPLATES}")
        elif path.is_file():
            files = [path]
        elif (builtin := _builtin(spec)) is not None:
            files = [builtin]
        else:
            close = nearest_templates(path.stem if not a_name else spec)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            raise SuiteError(f"--templates {spec}: no such template file, and no built-in "
                             f"template of that name; {hint}{LIST_TEMPLATES}")
        for file in files:
            found.setdefault(file.resolve(), file)
    return list(found.values())


def arch_dir(architecture: str) -> str:
    """The directory an architecture's episodes go to: a built-in name, or the file's stem."""
    return Path(architecture).stem


def plan_suite(templates: list[Path], architectures: list[str], seeds: list[int],
               out: Path) -> list[Episode]:
    """Every episode and its run directory; SuiteError when two different templates or
    architectures would share a directory (one's episodes would pass for the other's)."""
    for kind, refs, name in (("template", templates, lambda t: Path(t).stem),
                             ("architecture", architectures, arch_dir)):
        seen: dict[str, object] = {}
        for ref in refs:
            other = seen.setdefault(name(ref), ref)
            if other != ref:
                raise SuiteError(f"{kind}s {other} and {ref} would share the directory "
                                 f"{name(ref)}/: rename one of the files")
    return [Episode(t, arch, seed, out / t.stem / arch_dir(arch) / f"s{seed}")
            for t in templates for arch in architectures for seed in seeds]


@dataclass(frozen=True)
class SuiteRecipe:
    """How to build what every episode of a suite shares (`suite_context`): picklable, so each
    Ray worker process builds its own from it."""

    roles: TownRoles  # the models; cache_path None: each run keeps llm_cache.jsonl
    world: str = "town"  # a name or world file (worlds.load_world)
    prompts: Path | None = None
    window: EpisodeWindow | None = None
    background: int | None = None
    embedder: str | None = None
    # one per rule set asked for (ours, the reference's), the first the suite's own
    scorings: list[ScoringOptions] = field(default_factory=lambda: [ScoringOptions()])
    episode_max_calls: int | None = None  # each episode's own budget
    episode_max_tokens: int | None = None
    # `sandbox run` words making one episode alone, but for its template, architecture, seed
    # and directory (commands.episode_command); empty: episodes record no command
    command: tuple[str, ...] = ()


@dataclass
class SuiteContext:
    """What every episode of a suite shares in one process: the world, one model backend
    (loaded once; its connection limit holds for all the episodes together), the options and
    the budgets (`budget` the suite's, spent by every episode of this process)."""

    world: World
    make_llm: MakeLLM
    window: EpisodeWindow | None = None
    background: int | None = None
    embedder: str | None = None
    scorings: list[ScoringOptions] = field(default_factory=lambda: [ScoringOptions()])
    budget: Budget | None = None
    episode_budget: Budget | None = None
    command: tuple[str, ...] = ()  # SuiteRecipe.command


def suite_context(recipe: SuiteRecipe) -> SuiteContext:
    """Load the world and the model backend once (LLMConfigError when the model cannot work)."""
    from sandbox.prompts import set_prompt_dir
    from worlds import load_world

    if recipe.prompts is not None:
        set_prompt_dir(recipe.prompts)
    roles = recipe.roles
    backends = roles.backends()

    def model_for(run_dir: Path, performer: str):
        return roles.llm(run_dir / CACHE, performer, backends)

    episode_budget = None
    if recipe.episode_max_calls or recipe.episode_max_tokens:
        episode_budget = Budget(recipe.episode_max_calls, recipe.episode_max_tokens,
                                scope="episode")
    return SuiteContext(load_world(recipe.world), model_for, window=recipe.window,
                        background=recipe.background, embedder=recipe.embedder,
                        scorings=recipe.scorings, episode_budget=episode_budget,
                        command=recipe.command)


@dataclass
class EpisodeDone:
    """One episode's outcome: its scores, one per rule set (ours is missing when a budget
    stopped it: ours scores only complete runs; the reference's scores it with a warning),
    whether it was done before, the calls it made, and why a budget stopped it."""

    scores: list[STSSScore]
    skipped: bool
    calls: int = 0
    stopped: str | None = None
    unavailable: str | None = None  # why no call reached a model (run again next time)


def run_suite_episode(context: SuiteContext, episode: Episode) -> EpisodeDone:
    """Run (or skip, or only score) one episode of a suite."""
    if finished(episode.run_dir):
        scores = []
        for scoring in context.scorings:
            score = read_score(episode.run_dir, scoring.rules)
            if score is None or score.options != scoring:  # re-scoring is offline, exact
                score = write_score(episode.run_dir, scoring)
            scores.append(score)
        return EpisodeDone(scores, skipped=True)
    budgets = [b for b in (context.budget,
                           context.episode_budget and context.episode_budget.fresh()) if b]
    # What remaking this episode alone takes, in its header: `sandbox rerun` and `sandbox
    # fork` repeat it (set in the thread or worker that runs it: a ContextVar is per thread).
    command = COMMAND.set([*context.command, template_ref(episode.template), "--arch",
                           episode.architecture, "--seed", str(episode.seed), "--out",
                           str(episode.run_dir)] if context.command else None)
    try:
        result, score = run_task(episode.template, context.world, context.make_llm,
                                 architecture=episode.architecture, seed=episode.seed,
                                 out=episode.run_dir, window=context.window,
                                 background=context.background, embedder=context.embedder,
                                 overwrite=True, scoring=context.scorings[0], budgets=budgets)
    finally:
        COMMAND.reset(command)
    scores = [score] if score is not None else []
    for scoring in context.scorings[1:]:
        if result.status == "completed" or (result.status == "budget"
                                            and scoring.rules == "reference"):
            scores.append(write_score(episode.run_dir, scoring))
    return EpisodeDone(scores, skipped=False, calls=result.llm_calls,
                       stopped=result.error if result.status == "budget" else None,
                       unavailable=result.error if result.status == "unavailable" else None)


def template_ref(template: Path) -> str:
    """How a command names `template`: a built-in one by its name (the same in any
    checkout), any other by its path."""
    return template.stem if _builtin(template.stem) == template else str(template)


def episode_key(episode: Episode) -> str:
    return f"{episode.template.stem}/{arch_dir(episode.architecture)}/s{episode.seed}"


@dataclass
class SuiteRun:
    """What `run_suite` did: the scores in episode order, the episodes that failed or that a
    budget stopped (and why: "stopped: ..." for a budget), every episode's Outcome (one the
    suite's budget left unrun has `ran` False)."""

    scores: list[STSSScore]
    failures: list[tuple[Episode, str]]
    outcomes: list[Outcome]


def run_suite(episodes: list[Episode], setup: Callable[[], SuiteContext], *,
              parallel: Parallel | None = None, monitor: Monitor | None = None,
              budget: Budget | None = None) -> SuiteRun:
    """Run (or skip, or only score) every episode, `parallel.jobs` at once in each process.

    `setup()` builds the shared context once per process (a `functools.partial` of
    `suite_context` for Ray). An episode that fails (its result.json says why) is left out of
    the scores and run again by the next call; the others go on. A cache-only replay that
    misses an answer stops the suite (CacheMiss). `budget` caps the calls and tokens of the
    whole suite (in this process): once spent, no new episode starts and those running stop;
    the context's `episode_budget` caps each episode. An episode a budget stopped is run again
    by the next call."""
    def setup_with_budget() -> SuiteContext:
        context = setup()
        context.budget = budget
        return context

    outcomes = run_parallel([(episode_key(e), e) for e in episodes],
                            setup if budget is None else setup_with_budget, run_suite_episode,
                            parallel or Parallel(), monitor=monitor, stop_on=(CacheMiss,),
                            skipped=lambda done: done.skipped, calls_of=lambda done: done.calls,
                            stop_when=(lambda: budget.stopped) if budget is not None else None)
    failures = []
    for episode, outcome in zip(episodes, outcomes, strict=True):
        if outcome.failed:
            failures.append((episode, outcome.error))
        elif outcome.ran and outcome.result.stopped:
            failures.append((episode, f"stopped: {outcome.result.stopped}"))
        elif outcome.ran and outcome.result.unavailable:
            failures.append((episode, f"unavailable: {outcome.result.unavailable}"))
    return SuiteRun(scores=[s for o in outcomes if o.ran and not o.failed
                            for s in o.result.scores],
                    failures=failures, outcomes=outcomes)


def table_file(rules: str) -> str:
    return "table.json" if rules == "ours" else f"table.{rules}.json"


def planned_episodes(episodes: list[Episode], run: SuiteRun) -> dict[str, str]:
    """Every episode's run directory -> why it may have no score ("" when it ran to the end):
    what a table needs to account for each one."""
    why = {}
    for episode, outcome in zip(episodes, run.outcomes, strict=True):
        if not outcome.ran:
            reason = "not run: the suite's budget was spent before it started"
        elif outcome.failed:
            reason = f"failed: {outcome.error}"
        elif outcome.result.stopped:
            reason = f"stopped by a budget: {outcome.result.stopped}"
        elif outcome.result.unavailable:
            reason = f"unavailable: {outcome.result.unavailable}"
        else:
            reason = ""
        why[str(episode.run_dir)] = reason
    return why


def write_table(scores: list[STSSScore], out: Path, imports: ImportReport | None = None, *,
                rules: list[str] | None = None, planned: dict[str, str] | None = None
                ) -> tuple[list[SuiteTable], str]:
    """One table per rule set (`rules`, else those the scores were made by): OUT/table.json
    (ours), OUT/table.reference.json, and all of them in OUT/table.md with what importing the
    tasks decided; with `planned` (planned_episodes), each accounts for every episode. Returns
    the tables and table.md's text."""
    tables = tables_by_rules(scores, imports, rules=rules, planned=planned)
    out.mkdir(parents=True, exist_ok=True)
    for table in tables:
        write_atomic(out / table_file(table.rules), table.model_dump_json(indent=2))
    parts = [table_markdown(t) for t in tables]
    differences = rule_differences(scores)
    if differences:
        parts.append(differences_markdown(differences))
    markdown = "\n".join(parts)
    write_atomic(out / "table.md", markdown)
    return tables, markdown
