"""What several `sandbox` subcommands share: the model options and the model stack they build,
the seed type, the run directory rule, the performer's and the memory's options of a town
episode, the live event printer and the end of a run a budget stopped.

They live here, not in one command's module, so a command imports another command's helpers
from one place and no package outside the command line needs a command module.
"""

from __future__ import annotations

import argparse
import math
import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from rich.console import Console

from sandbox.app.options import (
    CALLS,
    CONCURRENCY,
    HOURS,
    JOBS,
    RETRIES,
    TEMPERATURE,
    TOKENS,
    TOP_P,
    WORKERS,
    Address,
    CacheFile,
    InputDir,
    InputFile,
    Label,
    Model,
    Number,
    OutputDir,
    OutputFile,
    Reference,
    Url,
    declared,
)
from sandbox.errors import UserError
from sandbox.events import Event, Utterance
from sandbox.files import FileFormatError
from sandbox.llm import CacheMiss, LLMConfigError, LLMSettings, make_llm
from sandbox.outdirs import OutputTaken, claim, claim_own, claim_run, refuse_inputs
from sandbox.prompts import set_prompt_dir


def intermixed(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`parser` taking its positionals before, between and after its options (`RUN --agent A
    "question"`): plain argparse takes positionals only up to the first option."""

    class Intermixed(type(parser)):
        def parse_known_args(self, args=None, namespace=None):
            if getattr(self, "_intermixing", False):  # called again from inside
                return super().parse_known_args(args, namespace)
            self._intermixing = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._intermixing = False

    parser.__class__ = Intermixed
    return parser


# The option types (sandbox/app/options.py) the commands use most, by their old names.
output_dir = OutputDir()
output_file = OutputFile()
label_text = Label()
non_negative_float = TEMPERATURE
probability = TOP_P


def add_budget_options(p: argparse.ArgumentParser, *, suite: bool = False,
                       episode: str = "episode", what: str = "") -> None:
    """--max-calls and --max-tokens (sandbox.budget): for one episode, or for a whole suite
    with --episode-max-calls and --episode-max-tokens for each of its episodes (`episode`
    names one, `what` says what it holds: a benchmark's item is a dialogue and its judges)."""
    scope = (f"this command (all its {episode}s" + (f", each {what})" if what else ")")
             if suite else "the episode")
    g = p.add_argument_group(
        "budget", f"Caps on the LLM calls and tokens (prompt + completion) of {scope}. An "
        "answer replayed from the cache counts too, so a capped run stops at the same point "
        "every time. Reaching a cap stops cleanly: result.json says status \"budget\", "
        "everything written is kept, and the same command with a higher cap goes on (the "
        "answers given so far come from the cache).")
    g.add_argument("--max-calls", type=CALLS, metavar="N", help=f"calls of {scope}")
    g.add_argument("--max-tokens", type=TOKENS, metavar="N", help=f"tokens of {scope}")
    if suite:
        g.add_argument("--episode-max-calls", type=CALLS, metavar="N",
                       help=f"calls of each {episode}" + (f" ({what})" if what else ""))
        g.add_argument("--episode-max-tokens", type=TOKENS, metavar="N",
                       help=f"tokens of each {episode}" + (f" ({what})" if what else ""))


def add_sim_time_option(g) -> None:
    """--max-sim-hours (sandbox.engine.max_sim_hours): the CLI sets $SANDBOX_MAX_SIM_HOURS
    from it for the command (and the Ray workers it starts)."""
    g.add_argument("--max-sim-hours", type=Number(0, HOURS, above=True), metavar="H",
                   help="the longest episode allowed, in simulated hours: a template's "
                        "duration_minutes, a window or a town day asking for more is refused "
                        "before anything runs [default: $SANDBOX_MAX_SIM_HOURS, else 72]")


def add_schedule_option(g) -> None:
    """--schedule (sandbox.engine): the CLI sets $SANDBOX_SCHEDULE from it for the command."""
    g.add_argument("--schedule", choices=["ahead", "lockstep"],
                   help="how residents' steps wait for each other: ahead (each goes on as far "
                        "as nobody could reach it, calls of different moments in flight "
                        "together) or lockstep (one simulated instant at a time); the same "
                        "files either way [default: $SANDBOX_SCHEDULE, else ahead]")


DEFAULT_CHECKPOINT_EVERY = "1h"


@declared("duration")
def checkpoint_interval(text: str) -> float:
    """--checkpoint-every: a simulated duration (30m, 2h), or 0 / off for none."""
    from sandbox.simtime import TimeSpecError, parse_duration

    if text.strip().lower() in ("0", "off", "none"):
        return 0.0
    try:
        seconds = parse_duration(text)
    except TimeSpecError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 0 / off for no checkpoints)") from None
    # Checkpoints are named by their whole second; more often than a minute is of no use.
    if seconds < 60 or seconds != int(seconds) or seconds > HOURS * 3600:
        raise argparse.ArgumentTypeError(f"{text!r}: give whole seconds, from a minute to "
                                         f"{HOURS:g} h (10m, 1h), or 0 / off for no "
                                         "checkpoints")
    return seconds


def add_checkpoint_option(g) -> None:
    g.add_argument("--checkpoint-every", type=checkpoint_interval, metavar="DURATION",
                   default=checkpoint_interval(DEFAULT_CHECKPOINT_EVERY),
                   help="write a checkpoint of the whole town into RUN/checkpoints every this "
                        "much simulated time (30m, 2h; 0 or off: none), so that `sandbox fork` "
                        "and `sandbox rerun` start from the last one before their time "
                        f"instead of replaying the run from its start "
                        f"[default: {DEFAULT_CHECKPOINT_EVERY}]")


@declared("reference")
def architecture_ref(text: str) -> str:
    """--arch: a built-in architecture name or the path of an architecture YAML file."""
    from agents.architecture import load_architecture

    Reference("an architecture")(text)  # a FIFO or a directory refused before it is opened
    try:
        load_architecture(text)
    except FileFormatError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


@declared("whisper")
def whisper_spec(text: str):
    """--whisper: `NAME@HH:MM: text` as a tasks.town.Whisper (its resident and time are
    checked against the episode before it runs)."""
    from tasks.town import Whisper

    Label("a whisper", most=5_000)(text)
    try:
        return Whisper.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_whisper_option(g) -> None:
    """--whisper, repeatable: memories planted in a town episode's residents as it runs."""
    g.add_argument("--whisper", action="append", type=whisper_spec, metavar="'NAME@HH:MM: TEXT'",
                   help="plant TEXT in NAME's memory at that simulated time, as a thought NAME "
                        "believes it had (importance 8; logged as `whispered`); HH:MM is the "
                        "first such time after the start, or give 'YYYY-MM-DD HH:MM' or +1h30m; "
                        "repeat for several")


def add_embedder_option(g) -> None:
    """--embedder: the memory embedder of every agent of a town episode."""
    g.add_argument("--embedder", choices=["minilm", "minilm-torch", "hashing"],
                   help="memory embedder for every agent [default: the architecture's, minilm]; "
                        "minilm-torch is the same model on sentence-transformers (the "
                        "reference minilm is checked against, about 10 s more to load); "
                        "hashing is a fast stand-in for scripted runs")


def budgets(args):
    """(the budget of --max-calls/--max-tokens, the per-episode one or None)."""
    from sandbox.budget import Budget

    episode = None
    if getattr(args, "episode_max_calls", None) or getattr(args, "episode_max_tokens", None):
        episode = Budget(args.episode_max_calls, args.episode_max_tokens, scope="episode")
    scope = "suite" if hasattr(args, "episode_max_calls") else "episode"
    return Budget(args.max_calls, args.max_tokens, scope=scope), episode


def add_llm_options(p: argparse.ArgumentParser, default_model: str = "local/smollm2-135m"):
    """Options every command that calls a model shares (they mirror LLMSettings)."""
    g = p.add_argument_group("model")
    g.add_argument("--model", type=Model(), default=default_model,
                   help="an alias of the models file (--models), or backend/model: "
                        "local/smollm2-135m (embedded, offline), openai/<model> (any "
                        "OpenAI-compatible endpoint, at --base-url), scripted/default "
                        "(deterministic test double) [default: %(default)s]")
    g.add_argument("--cache", type=CacheFile(),
                   help="LLM answer cache file [default: llm_cache.jsonl in the run directory]")
    add_model_access_options(g)


def add_model_access_options(g) -> None:
    """How to reach the models and their caches, whatever the models are (a command with one
    --model, or a benchmark with a model per role)."""
    g.add_argument("--models", type=InputFile(), metavar="FILE",
                   help="models file (YAML): aliases naming a model, its endpoint, the "
                        "variable holding its key, its concurrency and timeout; every option "
                        "that takes a model takes an alias (`sandbox list models`) "
                        "[default: $SANDBOX_MODELS, else ~/.config/social-sandbox/models.yaml]")
    g.add_argument("--base-url", type=Url(),
                   help="OpenAI-compatible endpoint of a bare openai/<model> [default: "
                        "$OPENAI_BASE_URL or OpenAI]; the key is read from $OPENAI_API_KEY (an "
                        "alias names its own)")
    g.add_argument("--json-dialect", choices=["json_schema", "json_object", "text"],
                   help="how the endpoint takes a JSON schema: json_schema (OpenAI, vLLM), "
                        "json_object (llama.cpp server) or text (the schema in the prompt) "
                        "[default: asked of the server once, before its first call]")
    g.add_argument("--max-concurrency", type=CONCURRENCY,
                   help="LLM calls in flight at once [default: what the backend allows]")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--cache-only", action="store_true",
                      help="replay from the cache; a call not in it stops the run")
    mode.add_argument("--no-cache", action="store_true", help="do not read or write a cache")
    g.add_argument("--prompts", type=InputDir(),
                   help="directory of prompt templates that override the built-in ones")


def models_file(args):
    """The models file of the command (--models, $SANDBOX_MODELS or the default one), read
    once; a UserError naming the file, alias, field and line when it is malformed."""
    from sandbox.llm import load_models_file

    cached = getattr(args, "_models_file", None)
    if cached is None:
        try:
            cached = load_models_file(getattr(args, "models", None))
        except FileFormatError as exc:
            raise UserError(str(exc)) from exc
        args._models_file = cached
    return cached


def access_settings(args) -> LLMSettings:
    """The settings every model of the command starts from: --base-url, --json-dialect,
    --max-concurrency and the cache mode (a models file's alias brings its own endpoint)."""
    mode = "replay" if args.cache_only else "off" if args.no_cache else "record"
    return LLMSettings(base_url=args.base_url, json_dialect=args.json_dialect,
                       max_concurrency=args.max_concurrency, cache_mode=mode)


def resolve_model(args, ref: str, cache_path: Path | None = None) -> LLMSettings:
    """The settings of one model reference of the command (an alias or backend/model); a
    UserError naming the nearest aliases when it is neither."""
    from sandbox.llm import resolve

    try:
        settings = resolve(ref, models_file(args), access_settings(args))
    except LLMConfigError as exc:
        raise UserError(str(exc)) from exc
    return settings.model_copy(update={"cache_path": cache_path})


def llm_settings(args, cache_default: Path | None) -> LLMSettings:
    return resolve_model(args, args.model, args.cache or cache_default)


def use_prompts(args) -> None:
    """Point the prompt loader at --prompts (a UserError when it is not a directory)."""
    from sandbox.app.prompt_dirs import check_prompt_dir

    if args.prompts is not None:
        if not args.prompts.is_dir():
            raise UserError(f"--prompts {args.prompts}: not a directory")
        try:
            check_prompt_dir(args.prompts, "--prompts")
        except ValueError as exc:
            raise UserError(str(exc)) from exc
        set_prompt_dir(args.prompts)


def build_backend(args):
    """The bare backend for the command's options (a UserError when it cannot work), for
    commands that wrap one backend in a stack per run: loading it is the slow part."""
    from sandbox.llm import make_backend  # looked up when called (tests count the loads)

    use_prompts(args)
    try:
        return make_backend(llm_settings(args, None))
    except LLMConfigError as exc:
        raise UserError(str(exc)) from exc


def build_llm(args, cache_default: Path | None, backend=None):
    """The model stack for the command's options (around `backend` when given, from
    `build_backend`); a UserError when it cannot work."""
    if backend is None:
        use_prompts(args)
    try:
        return make_llm(llm_settings(args, cache_default), backend=backend)
    except (LLMConfigError, CacheMiss) as exc:
        raise UserError(str(exc)) from exc


def run_directory(args, stem: str) -> Path:
    """--out, or runs/<stem>-s<seed>-<timestamp>; an existing run needs --overwrite."""
    out = args.out or Path("runs") / (f"{stem}-s{args.seed}-"
                                      f"{datetime.now().strftime('%Y%m%d-%H%M%S')}")
    if (out / "events.jsonl").exists() and not args.overwrite:
        raise UserError(f"{out} already holds a run; choose another --out or pass --overwrite")
    claim_run_directory(out)
    return out


def claim_run_directory(out: Path) -> None:
    """UserError unless a run may be written into `out`: --overwrite replaces a run, never a
    suite, a benchmark or the user's own files (checked before anything is written)."""
    try:
        claim(out, "header.json", "a run directory")
        claim_run(out)
    except OutputTaken as exc:
        raise UserError(str(exc)) from None


# The arguments in which a command names what it writes (every other path is read).
OUTPUTS = frozenset({"out", "json", "markdown", "plot", "export", "gif", "render", "cache",
                     "inspect"})


def command_inputs(args) -> list[Path]:
    """The files and directories a command reads: every existing path among its parsed
    arguments (those of a Path type) but its outputs (OUTPUTS)."""
    found = []
    for name, value in vars(args).items():
        if name in OUTPUTS or name.startswith("_"):
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, Path) and item.exists():
                found.append(item)
    return found


def claim_outputs(args, *outputs: Path | None, what: str = "an output") -> None:
    """UserError when an output a command was given is one of its inputs or inside one
    (outdirs.refuse_inputs): checked before anything is written or locked."""
    inputs = command_inputs(args)
    for output in outputs:
        if output is not None:
            try:
                refuse_inputs(output, inputs, what)
            except OutputTaken as exc:
                raise UserError(str(exc)) from None


def claim_directory(out: Path, ours, what: str) -> None:
    """UserError unless directory `out` is new, empty or holds only what `what` writes there
    (`ours`, a pattern of names): a directory of the user's own files is never written into."""
    try:
        claim_own(out, ours, what)
    except OutputTaken as exc:
        raise UserError(str(exc)) from None


def say_replaying(llm, console) -> int:
    """Before an episode: when its answer cache already holds answers (the same --out again
    with --overwrite, as a second `make demo` is), say that the calls asked before are answered
    from it and how to have the model answer afresh. A run that replays is seconds where the
    first took a minute, and nothing else tells a user timing it. Returns the answers held."""
    from sandbox.llm.cache import caches_in

    held = 0
    for cache in caches_in(llm):
        if cache.mode == "record" and len(cache):
            held += len(cache)
            console.print(f"[yellow]replaying:[/] {cache.path} holds {len(cache)} answers of an "
                          f"earlier run: calls asked then are answered from it, not by the "
                          f"model (replayed, so much faster). To run the model afresh: "
                          f"--no-cache, or delete {cache.path}", highlight=False,
                          soft_wrap=True)
    return held


def replayed_note(run) -> str:
    """", N of M calls replayed from the cache" for a run (sandbox.log.load_run) whose calls
    were answered from its cache in part or whole, else ""."""
    calls = run.calls
    cached = sum(1 for call in calls if call.cached)
    return f", {cached} of {len(calls)} calls replayed from the cache" if cached else ""


def run_stopped(result, console) -> int:
    """0, or 1 with one line saying what to do when a budget stopped the run or calls never
    reached a model (status unavailable: not finished; said on stderr, where a script looks
    for why a command failed)."""
    from sandbox.terminal import say_stopped

    if result.status == "budget":
        say_stopped(f"stopped: {result.error}; run the same command with --overwrite and a "
                    "higher cap to go on (the answers so far come from the cache)")
        return 1
    if result.status == "unavailable":
        # A run's directory holds a run: the same command goes on over it with --overwrite.
        why = (result.error or "").replace("then run the same command",
                                           "then run the same command with --overwrite", 1)
        say_stopped(f"unavailable: {why}")
        return 1
    return 0


def print_event(console: Console, *, until: float | None = None, run_dir: Path | None = None,
                every_s: float = 15.0):
    """Print utterances as they are said, and a progress line at the first event (the clock
    has started: the first model calls are on their way, and a new user sees so within
    seconds, not after them), each simulated hour and at least every `every_s` seconds of wall
    time (a town day on the embedded model runs for minutes with long quiet stretches): the
    simulated time done (of `until`, the episode's end), the LLM calls so far (the lines of
    `run_dir`'s calls.jsonl), the wall time and, once some simulated time has passed, the time
    left at the pace so far."""
    started = time.perf_counter()
    shown = {"hour": 0, "at": -math.inf}

    def calls() -> str:
        path = (run_dir / "calls.jsonl") if run_dir is not None else None
        if path is None or not path.is_file():
            return ""
        with path.open("rb") as fh:
            return f", {sum(1 for _ in fh)} calls"

    def progress(t: float, now: float) -> str:
        wall = now - started
        done = f"{t / 3600:.1f}" + (f" of {until / 3600:.1f}" if until else "")
        left = ""
        if until and t > 0 and until > t:
            left = f", about {_duration(wall / t * (until - t))} left"
        return f"[dim]... {done} simulated h{calls()}, {wall:.0f} s wall{left}[/]"

    def show(event: Event) -> None:
        now = time.perf_counter()
        hour = int(event.t // 3600)
        if hour > shown["hour"] or now - shown["at"] >= every_s:
            shown["hour"], shown["at"] = max(hour, shown["hour"]), now
            console.print(progress(event.t, now), highlight=False)
        if isinstance(event, Utterance):
            end = "  [dim](ends)[/]" if event.ends else ""
            console.print(f"[bold cyan]{event.agent}[/]: {event.text}{end}", highlight=False)

    return show


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def add_parallel_options(p: argparse.ArgumentParser) -> None:
    """How a suite's episodes run side by side (they mirror suites.parallel.Parallel)."""
    g = p.add_argument_group("running episodes side by side")
    g.add_argument("--jobs", type=JOBS, default=1, metavar="N",
                   help="episodes at once in each process; their LLM calls share "
                        "--max-concurrency (the embedded model answers as many calls at "
                        "once as it has lanes, SANDBOX_LLM_LANES, whatever N) "
                        "[default: %(default)s]")
    g.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local: this process; ray: Ray worker processes, --jobs episodes at "
                        "once in each, on a local Ray or the cluster at --address "
                        "(pip install '.[ray]') [default: %(default)s]")
    g.add_argument("--address", type=Address(), metavar="HOST:PORT",
                   help="Ray cluster to join (ray://... or HOST:PORT) [default: start a local "
                        "Ray for the run]; OUT must be on a filesystem every node sees")
    g.add_argument("--workers", type=WORKERS, metavar="W",
                   help="Ray worker processes, each with its own model backend and its own "
                        "--max-concurrency [default: the cluster's CPUs]")
    g.add_argument("--retries", type=RETRIES, default=2, metavar="R",
                   help="times an episode runs again after its Ray worker died "
                        "[default: %(default)s]")


def parallel_options(args):
    """The Parallel of --jobs, --executor, --address, --workers, --retries (UserError when
    they cannot work)."""
    from sandbox.app.suites.parallel import Parallel

    if args.executor == "local" and (args.address or args.workers):
        raise UserError(f"--{'address' if args.address else 'workers'} needs --executor ray")
    if args.retries < 0:
        raise UserError(f"--retries {args.retries}: must be 0 or more")
    if args.executor == "ray" and (getattr(args, "max_calls", None)
                                   or getattr(args, "max_tokens", None)):
        raise UserError("--max-calls and --max-tokens cap a run within one process; with "
                        "--executor ray use --episode-max-calls or --episode-max-tokens")
    if args.executor == "ray":  # known before a suite writes anything, not when it starts
        from sandbox.app.suites.parallel import ExecutorError, import_ray

        try:
            import_ray()
        except ExecutorError as exc:
            raise UserError(str(exc)) from None
    try:
        return Parallel(jobs=args.jobs, executor=args.executor, address=args.address,
                        workers=args.workers, retries=args.retries)
    except ValueError as exc:
        raise UserError(str(exc)) from exc


@contextmanager
def suite_progress(console: Console, total: int, description: str, transient: bool = False):
    """A progress bar for a suite fed by a Monitor (yielded): episodes done, running and
    failed, LLM calls per second, time left. Piped into a log, a line per finished episode."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    from sandbox.app.suites.parallel import Monitor

    class Status(ProgressColumn):
        max_refresh = 0.5

        def render(self, task) -> Text:
            return Text(monitor.summary(), style="dim")

    finished = 0
    monitor = Monitor(total=total)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), Status())
    with Progress(*columns, console=console, transient=transient) as progress:
        bar = progress.add_task(description, total=total)

        def changed(m: Monitor) -> None:
            nonlocal finished
            progress.update(bar, completed=m.done + m.failed)
            if not console.is_terminal and m.done + m.failed > finished:
                console.print(f"{description}: {m.done + m.failed}/{total}, {m.summary()}",
                              highlight=False)
            finished = m.done + m.failed

        monitor.on_change = changed
        if not console.is_terminal:  # piped into a log: started, said at once, not at the
            console.print(f"{description}: 0/{total}, started", highlight=False)  # first end
        yield monitor
