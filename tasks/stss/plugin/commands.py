"""The STSS action level's commands, built on the app's shared command helpers:

`sandbox stss`: run a suite of STSS social-task episodes and write the Table-4-style table.
`sandbox stss-board DIR...`: the board of one or more suites (evaluation.stss.suite_board).
`sandbox score RUN_DIR...`: score finished STSS runs again, offline, from their logs (a suite
directory: its missing scores, then its board).
`sandbox run <template.yaml|name>`: one STSS episode, then its score (the plug-in's run target:
`add_run_options`, `run_template`).
"""

from __future__ import annotations

import argparse
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console

from sandbox import terminal
from sandbox.app.commands.benchmark import add_board_outputs
from sandbox.app.commands.common import (
    add_budget_options,
    add_embedder_option,
    add_llm_options,
    add_parallel_options,
    add_schedule_option,
    add_sim_time_option,
    architecture_ref,
    budgets,
    output_dir,
    parallel_options,
    print_event,
    replayed_note,
    run_directory,
    run_stopped,
    say_replaying,
    suite_progress,
    use_prompts,
)
from sandbox.app.human import person_left, person_of
from sandbox.app.options import (
    PERSON,
    RESAMPLES,
    SEED,
    Clock,
    Count,
    InputDir,
    InputFile,
    Reference,
    Seeds,
    Words,
)
from sandbox.app.roles import add_role_options, build_town_llm, town_roles
from sandbox.errors import UserError, one_line
from sandbox.files import FileFormatError
from sandbox.llm import CacheMiss, LLMConfigError
from sandbox.llm.human import PersonLeft
from sandbox.lock import hold_output
from sandbox.log import CACHE, RunDirectoryExists, load_run
from sandbox.summary import print_summary, summarize

from . import SUITE_FILE

ARCHITECTURES = ("ga", "ga_tdp")  # the paper's comparison, the default of a suite
PERFORMER_ARCH = "ga_tdp"  # the performer's architecture of one episode (`sandbox run`)


def add_episode_options(g) -> None:
    """What shapes an STSS episode besides the performer (they mirror tasks.stss.EpisodeWindow
    and the instantiation): `sandbox stss`'s and, for a task template, `sandbox run`'s."""
    # the paper's 10-12; a town holds what its world file says (more is refused by the run)
    g.add_argument("--background", type=Count(0, 1_000), metavar="N",
                   help="background residents [default: 10-12, drawn per seed]")
    g.add_argument("--same-day", action="store_true",
                   help="start on the event day instead of the day before (shorter)")
    g.add_argument("--start", type=Clock(), default="06:00", metavar="HH:MM",
                   help="clock time the episode starts [default: %(default)s]")
    g.add_argument("--until", type=Clock(), metavar="HH:MM",
                   help="clock time on the event day it stops [default: the end of the task's "
                        "window, or 21:00 for tasks without a fixed time]")


def add_template_options(p: argparse.ArgumentParser) -> None:
    """Options of a suite's STSS episodes: the architectures compared, and the episode."""
    g = p.add_argument_group("STSS episode")
    g.add_argument("--arch", action="append", type=architecture_ref, dest="archs",
                   metavar="ARCH", help="the performer's architecture: a built-in name "
                   "(ga, ga_tdp, ga_recency, ga_no_reflection) or an architecture YAML "
                   "file; repeat for several [default: ga and ga_tdp]")
    add_episode_options(g)
    add_embedder_option(g)
    add_sim_time_option(g)
    add_schedule_option(g)
    add_role_options(p.add_argument_group(
        "models by role (the STSS protocol: the evaluated model answers the performer's "
        "high-level calls, a background model the rest of the town)"))


def add_run_options(p: argparse.ArgumentParser) -> None:
    """What `sandbox run` adds for a task template (its --arch, --embedder, --world and
    --max-sim-hours are the town's, which `sandbox run` has of its own)."""
    add_episode_options(p.add_argument_group("STSS episode (a task template only)"))


def _window(args):
    from pydantic import ValidationError

    from tasks.stss import EpisodeWindow

    try:
        return EpisodeWindow(same_day=args.same_day, start=args.start, until=args.until)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"--{first['loc'][0]}: {first['msg']}") from exc


def _world(args):
    """The world of the episodes: --world (a name, built-in or imported, or a world file)
    [default: town]."""
    from worlds import load_world

    try:
        return load_world(getattr(args, "world", None) or "town")
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc


def run_template(args) -> int:
    """`sandbox run <template.yaml|name>`: one STSS episode, then its score."""
    from tasks.stss import (
        STSSEpisode,
        instantiate,
        load_template,
        nearest_templates,
        template_path,
    )

    from .suite import run_task

    console = terminal.console()
    args.arch = args.arch or PERFORMER_ARCH
    world = _world(args)
    window = _window(args)
    try:
        path = template_path(args.scenario)
        task = instantiate(load_template(path, world), args.seed, world,
                           background=args.background)
        # the window and the whispers checked first
        episode = STSSEpisode(task, args.arch, window=window, whispers=args.whisper)
    except FileFormatError as exc:
        close = [] if Path(args.scenario).exists() else nearest_templates(Path(args.scenario).stem)
        hint = f"; did you mean the built-in template {' or '.join(close)}?" if close else ""
        raise UserError(f"{exc}{hint}") from exc
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from exc
    warning = window.cut_short(task)
    if warning:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    person = person_of(args, [task.performer, *task.background])  # --human: who a person plays
    out = hold_output(run_directory(args, f"{path.stem}-{Path(args.arch).stem}"))
    # Said first: loading the embedded model (and, once per machine, timing its weights)
    # takes seconds, and a user should see at once what is starting.
    from rich.markup import escape

    def shown(text: str) -> str:  # a template's words are data: no escape or markup runs
        return escape(one_line(text))

    console.print(f"[bold]{shown(task.title)}[/] ({task.type.value}, template "
                  f"{shown(task.template)}, seed {args.seed})\n  performer: "
                  f"{shown(task.performer)} ({shown(args.arch)}); {len(task.background)} "
                  f"background residents: {shown(', '.join(task.background))}\n  goal: "
                  f"{shown(task.goal)}\n  target: {shown(task.criteria)}", highlight=False)
    # Built once, before anything runs (a bad model fails here) and used for the run: building
    # it again would load the local model file twice.
    llm = build_town_llm(args, args.cache or out / CACHE, task.performer, person)
    say_replaying(llm, console)
    show = None if args.quiet else print_event(console, until=episode.until, run_dir=out)

    def episode_run():
        return run_task(
            path, world, lambda _run_dir, _performer: llm, architecture=args.arch,
            seed=args.seed, out=out,
            window=window, background=args.background, embedder=args.embedder,
            overwrite=args.overwrite, on_event=show, max_concurrency=args.max_concurrency,
            budgets=[budgets(args)[0]], whispers=args.whisper,
            checkpoint_every=args.checkpoint_every)

    try:
        result, score = person.run(episode_run, out) if person else episode_run()
    except RunDirectoryExists as exc:
        raise UserError(str(exc)) from exc
    except PersonLeft as exc:
        return person_left(exc, out, console)
    except CacheMiss as exc:
        console.print(f"[red]stopped:[/] {exc}\nwhat ran so far is in {out}")
        return 1
    run = load_run(out)
    print_summary(summarize(run), console)
    if score is None:  # a budget stopped it, or no call reached a model
        return run_stopped(result, console)
    print_score(score, console)
    console.print(f"score.json: {out / 'score.json'}\nrun directory: {out}  "
                  f"({result.wall_time_s:.1f} s{replayed_note(run)})  replay: sandbox replay "
                  f"{out}")
    return 0


def register(sub) -> None:
    """`sandbox score`, `sandbox stss` and `sandbox stss-board`."""
    register_score(sub)
    p = sub.add_parser(
        "stss", help="run a suite of STSS social-task episodes and tabulate the scores",
        description="Run every template x architecture x seed as one episode (a run directory "
                    "each, under OUT/<template>/<arch>/s<seed>), score it from its log, and "
                    "write OUT/table.json and OUT/table.md: mean score per task type, overall "
                    "and the conversation ratio, as in Table 4 of the STSS paper. Finished "
                    "episodes are skipped, so an interrupted suite resumes.",
        epilog="example: sandbox stss --templates public_spring_tasting,help_light_bulbs "
               "--arch ga --arch ga_tdp --seeds 0..2 --model scripted/town --embedder hashing "
               "--jobs 4 --out runs/stss")
    p.add_argument("--templates", action="append", type=Words("template names"),
                   metavar="TEMPLATES",
                   help="built-in template names (`sandbox list templates`) or globs of them "
                        "('public_*'), template YAML files, directories of them, or globs of "
                        "files; several comma-separated or the option repeated; or one public "
                        "STSS task file (.json, see --name-map) [default: the 30 built-in "
                        "templates]")
    p.add_argument("--name-map", type=InputFile(),
                   help="YAML/JSON mapping of a public file's characters and places to ours "
                        "(not needed on the reference town: --world ville)")
    p.add_argument("--strict-names", action="store_true",
                   help="a public file's places must be the world's own names: no near match "
                        "('Hobbs Coffee' for Hobbs Cafe), and a task that cannot be placed "
                        "refuses the whole file instead of failing alone")
    p.add_argument("--draw-times", action="store_true",
                   help="a public file's task starts at a time drawn per seed from its "
                        "time_choices [default: at its published time, the goal's start_time, "
                        "as the reference runs and scores it]")
    p.add_argument("--world", type=Reference("a world"), metavar="NAME_OR_FILE",
                   help="the town the episodes run in: a world name (built-in, or imported "
                        "with `sandbox import-ville`) or a world file with residents "
                        "[default: town]")
    p.add_argument("--seeds", type=Seeds(), default=[0], help="N, A..B or A,B,C "
                                                                  "[default: 0]")
    p.add_argument("--dry-run", action="store_true",
                   help="say what the suite would run (finished episodes skipped), its calls and "
                        "tokens per role and model, wall time and money where the models file "
                        "prices the model; run and write nothing (a run's closing summary "
                        "prints the same estimate beside what its episodes spent)")
    p.add_argument("--out", type=output_dir, required=True,
                   help="suite directory; rerun the same command to resume it (other episode "
                        "options need a new one)")
    p.add_argument("--human", type=PERSON, metavar="NAME",
                   help="refused: a person plays one episode at a time (sandbox run TEMPLATE "
                        "--human NAME)")
    add_scoring_options(p)
    add_template_options(p)
    add_llm_options(p)
    add_budget_options(p, suite=True)
    add_parallel_options(p)
    p.set_defaults(func=main, resumable=True)
    register_board(sub)


def register_board(sub) -> None:
    """`sandbox stss-board DIR...`: the board of one or more suites."""
    b = sub.add_parser(
        "stss-board",  # listed under `sandbox board` (sandbox/app/commands/board.py)
        description="Merge suite directories (written by `sandbox stss --out`) into one board, "
                    "from their score files (no model is called, nothing is scored again): a "
                    "row per configuration (model x architecture; one found in several suites "
                    "is one row, its episodes pooled), the mean per task type, overall and per "
                    "template, each with a seeded 95% bootstrap interval and n (episodes), the "
                    "conversation ratio, and what became of every episode the suites planned "
                    "(scored, unscored by the rules, or without a score and why). --json writes "
                    "the numbers, --plot a PNG of each configuration's overall score with its "
                    "interval.",
        epilog="example: sandbox stss-board runs/stss-smol runs/stss-gpt --plot board.png")
    b.add_argument("dirs", nargs="+", type=InputDir(), metavar="DIR",
                   help="suite directories written by `sandbox stss --out`, or runs a person "
                        "played (`sandbox run TEMPLATE --human NAME`: their own row, human)")
    b.add_argument("--rules", choices=["ours", "reference"], default="ours",
                   help="which score files: ours (score.json) or the STSS authors' scorer's "
                        "(score.reference.json: `sandbox stss --rules reference` or `both`, or "
                        "`sandbox score DIR --rules reference`) [default: %(default)s]")
    b.add_argument("--episodes", action="store_true", help="also list every episode's score")
    b.add_argument("--seed", type=SEED, default=0,
                   help="bootstrap seed [default: %(default)s]")
    b.add_argument("--resamples", type=RESAMPLES, default=1000,
                   help="bootstrap resamples [default: %(default)s]")
    add_board_outputs(b, "draw each configuration's overall score and interval into this PNG")
    b.set_defaults(func=board_main)


def board_main(args) -> int:
    """`sandbox stss-board DIR...`."""
    from evaluation.kit import BoardError
    from evaluation.stss import suite_board
    from sandbox.app.commands.benchmark import write_board

    try:
        report = suite_board(args.dirs, rules=args.rules, seed=args.seed,
                             resamples=args.resamples, episodes=args.episodes)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    write_board(report, args)
    return 0


def _templates(args, console: Console):
    """The template files of the suite, and the public import (None unless --templates is a
    public task file): written to OUT/templates, its failures and warnings printed."""
    from sandbox.files import read_data
    from tasks.stss import TEMPLATES_DIR
    from tasks.stss.importer import import_public_tasks, write_templates

    from .suite import find_templates, template_specs

    specs = template_specs(args.templates) or [str(TEMPLATES_DIR)]
    public = [spec for spec in specs if spec.endswith(".json")]
    if public and len(specs) > 1:
        raise UserError(f"--templates {public[0]}: a public task file is imported alone; give "
                        "it as the only --templates")
    spec = specs[0]
    if public:
        names = read_data(args.name_map) if args.name_map else {}
        if not isinstance(names, dict | None):
            raise UserError(f"--name-map {args.name_map}: expected a mapping of their names to "
                            f"ours (Their Name: Our Name), not a {type(names).__name__}")
        names = {str(k): str(v) for k, v in (names or {}).items()}
        imported = import_public_tasks(spec, _world(args), names,
                                       strict_names=args.strict_names,
                                       draw_times=args.draw_times)
        if not imported.templates:
            raise UserError(f"{spec}: none of its {imported.total} task(s) could be imported: "
                            + "; ".join(map(str, imported.failed)))
        paths = write_templates(imported.templates, args.out / "templates")
        console.print(f"imported {len(paths)} of {imported.total} public task(s) into "
                      f"{args.out / 'templates'}", highlight=False)
        _print_import(imported, console)
        return paths, imported
    try:
        return find_templates(specs), None
    except ValueError as exc:
        raise UserError(str(exc)) from exc


def _print_import(imported, console: Console) -> None:
    """What the import decided on its own and what it could not do, task by task."""
    from rich.markup import escape  # the public text may hold [brackets]

    for failure in imported.failed:
        console.print(f"[red]not imported:[/] {escape(str(failure))}", highlight=False)
    for template in imported.templates:
        for theirs, ours in template.name_mapping.items():
            console.print(escape(f"name mapped: {template.id}: {theirs!r} -> {ours} (a near "
                                 "match; --strict-names refuses it)"), highlight=False)
        for warning in template.import_warnings:
            console.print(f"[yellow]warning:[/] {escape(f'{template.id}: {warning}')}",
                          highlight=False)
        for note in template.import_notes:
            console.print(escape(f"note: {template.id}: {note}"), highlight=False)


def episode_size(task, window, architecture: str = "ga"):
    """An episode's residents and window in simulated hours (cost.EpisodeSize: what an
    episode costs grows with both; the units of the dry run's rates)."""
    from tasks.stss import STSSEpisode

    from .cost import EpisodeSize

    return EpisodeSize(1 + len(task.background),
                       STSSEpisode(task, architecture, window=window).until / 3600, window.start)


def _check_templates(templates, archs, args, window, world, console,
                     sizes: dict | None = None) -> list:
    """Every file and every seed's window, before the first episode runs; a window that stops
    inside an activity's time window is only warned about. Returns the templates; adds each
    template x seed's size (residents and window: cost.EpisodeSize) to `sizes` when given,
    keyed by (template, seed)."""
    from tasks.stss import instantiate, load_template

    loaded = []
    for path in templates:
        try:
            template = load_template(path, world)
            loaded.append(template)
            for seed in args.seeds:  # the time is drawn per seed
                task = instantiate(template, seed, world, background=args.background)
                if sizes is not None:
                    sizes[(path, seed)] = episode_size(task, window, archs[0])
                warning = window.cut_short(task)
                if warning:
                    console.print(f"[yellow]warning:[/] {path.stem} s{seed}: {warning}",
                                  highlight=False)
        except FileFormatError as exc:
            raise UserError(str(exc)) from exc
        except ValueError as exc:
            raise UserError(f"{path}: {exc}") from exc
    return loaded


# The suite's options that shape each episode, as `sandbox run TEMPLATE` takes them (True:
# followed by a value); a suite's cap on each episode is that run's own cap.
EPISODE_OPTIONS = {"--world": True, "--embedder": True, "--max-sim-hours": True,
                   "--background-model": True, "--performer-routing": True,
                   "--background": True, "--same-day": False, "--start": True, "--until": True,
                   "--model": True, "--models": True, "--base-url": True,
                   "--json-dialect": True, "--max-concurrency": True, "--prompts": True}
RENAMED = {"--episode-max-calls": "--max-calls", "--episode-max-tokens": "--max-tokens"}


def episode_command(argv: list[str] | None) -> tuple[str, ...]:
    """The words of `sandbox run` that make one of the suite's episodes alone, but for its
    template, architecture, seed and directory (run_suite_episode adds them): recorded in
    each episode's header, so `sandbox rerun` and `sandbox fork` can remake it. Empty when
    the suite's own words are not known (called from code, not a command line)."""
    if argv is None:
        return ()
    words: list[str] = ["sandbox", "run"]
    it = iter(argv[1:])  # argv[0] is the command's name
    for word in it:
        flag, eq, value = word.partition("=")
        if flag in RENAMED:
            words += [RENAMED[flag], value if eq else next(it, "")]
        elif flag in EPISODE_OPTIONS and not EPISODE_OPTIONS[flag]:
            words.append(flag)
        elif flag in EPISODE_OPTIONS:
            words += [flag, value if eq else next(it, "")]
    # The suite writes no checkpoints; remade alone, the episode writes none either.
    return (*words, "--checkpoint-every", "off")


LONG_S = 600.0  # from here a suite is said to take long


def say_estimate(console, args, episodes, sizes: dict) -> float | None:
    """Before a suite starts: how long its episodes not yet finished will take when its
    evaluated or background model is the embedded one (an endpoint's speed is not known here),
    said as a warning past ten minutes with how to make it shorter; the estimate in seconds,
    or None. `sizes`: (template, seed) -> an episode's cost.EpisodeSize."""
    from sandbox.app.suites.resume import finished

    from .cost import EMBEDDED_S_PER_RESIDENT_HOUR

    models = [args.model, getattr(args, "background_model", None)]
    embedded = next((m for m in models if m and m.startswith("local/")), None)
    left = [e for e in episodes if not finished(e.run_dir)]
    if embedded is None or not left:
        return None
    hours = sum(sizes[(e.template, e.seed)].resident_hours for e in left)
    # The embedded model answers one call at a time whatever --jobs: jobs do not divide it.
    estimate = hours * EMBEDDED_S_PER_RESIDENT_HOUR
    line = (f"{len(left)} episode(s) on the embedded model {embedded}: about "
            f"{_duration(estimate)} ({hours / len(left):.0f} simulated resident-hours an "
            f"episode, about {EMBEDDED_S_PER_RESIDENT_HOUR:g} s each on 2 cores)")
    if estimate >= LONG_S:
        console.print(f"[yellow]this will take long:[/] {line}; an endpoint (--model "
                      "openai/..., --base-url) or fewer, shorter episodes (--templates, "
                      "--seeds, --same-day --start 15:00 --background 2) is quicker",
                      highlight=False, soft_wrap=True)
    else:
        console.print(f"[dim]{line}[/]", highlight=False, soft_wrap=True)
    return estimate


def checked_options(args, archs, world, window, episodes):
    """What OUT/suite.json will say, checked as the run checks it (an unknown model alias, an
    --out holding another kind of output or a suite of other options: a UserError or
    ValueError), by the run and its dry run alike."""
    from sandbox.llm import model_name
    from worlds import world_ref

    from .suite import SuiteOptions, arch_dir, check_options, episode_key

    roles = town_roles(args)
    named = {"model": model_name(roles.evaluated.model, roles.evaluated.endpoint)}
    if roles.background is not None:
        named["background_model"] = model_name(roles.background.model,
                                               roles.background.endpoint)
    return check_options(args.out, SuiteOptions(
        named=named,
        model=args.model, background_model=roles.background and args.background_model,
        performer_routing=roles.routing if roles.routed else None,
        world=world_ref(world), background=args.background, window=window,
        embedder=args.embedder, prompts=str(args.prompts) if args.prompts else None,
        architectures={arch_dir(a): a for a in archs},
        episodes=[episode_key(e) for e in episodes]))


def dry_run(console, args, archs, world, window) -> int:
    """`sandbox stss --dry-run`: the episodes the suite would run (finished ones skipped),
    their calls and tokens per role and model, wall time and money, from this suite's finished
    episodes or the rates kept with the package (cost.estimate). Writes nothing."""
    from sandbox.app.suites.resume import finished

    from . import cost
    from .suite import plan_suite

    if any(str(t).endswith(".json") for t in args.templates or []):
        raise UserError("--dry-run: importing a public task file writes OUT/templates; run "
                        "the import once, or give the templates as YAML files")
    try:
        templates, _ = _templates(args, console)
        sizes: dict = {}
        _check_templates(templates, archs, args, window, world, console, sizes)
        episodes = plan_suite(templates, archs, args.seeds, args.out)
        # what the run refuses, the dry run refuses: a dry run says what the run would do
        checked_options(args, archs, world, window, episodes)
    except (FileFormatError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    done = [e for e in episodes if finished(e.run_dir)]
    left = [e for e in episodes if e not in done]
    estimate = cost.estimate(args, cost.basis(done, sizes), left, len(done), sizes)
    terminal.print_markdown(estimate.markdown())
    return 0


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return f"{seconds:.0f} s"
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def _recipe(args, window, scorings):
    """What each process builds once for the suite (a Ray worker builds its own)."""
    from .suite import SuiteRecipe

    return SuiteRecipe(roles=town_roles(args, args.cache),
                       command=episode_command(getattr(args, "argv", None)),
                       world=getattr(args, "world", None) or "town", prompts=args.prompts,
                       window=window, background=args.background, embedder=args.embedder,
                       scorings=scorings, episode_max_calls=args.episode_max_calls,
                       episode_max_tokens=args.episode_max_tokens)


@contextmanager
def _removed_on_error(out: Path):
    """Remove `out` if the suite stops with a user error and `out` did not exist before."""
    fresh = not out.exists()
    try:
        yield
    except UserError:
        if fresh:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _setup(args, recipe, parallel):
    """The suite's setup: built here and now for this process (a bad model fails before
    anything is recorded or run; the model file is loaded once for every episode), or a
    recipe each Ray worker builds from."""
    from functools import partial

    from .suite import suite_context

    if parallel.executor == "ray":
        if args.prompts is not None and not args.prompts.is_dir():
            raise UserError(f"--prompts {args.prompts}: not a directory")
        if args.max_calls or args.max_tokens:
            raise UserError("--max-calls and --max-tokens cap a suite within one process; with "
                            "--executor ray use --episode-max-calls or --episode-max-tokens")
        return partial(suite_context, recipe)
    use_prompts(args)
    # Loading a model (the embedded one times its weight formats on a machine's first run)
    # takes a while: said, so the command is not silent before its first progress line.
    terminal.console().print(f"[dim]loading {args.model} and the world...[/]", highlight=False)
    try:
        context = suite_context(recipe)
    except LLMConfigError as exc:
        raise UserError(str(exc)) from exc
    return lambda: context


def main(args) -> int:
    from rich.markup import escape

    if args.human is not None:
        raise UserError(f"--human {args.human!r}: a person plays one episode at a time, not a "
                        "suite: sandbox run TEMPLATE --human NAME --out DIR (its score.json's "
                        "model is 'human')")

    from sandbox.app.suites.estimate import against
    from sandbox.app.suites.parallel import ExecutorError
    from sandbox.app.suites.resume import finished
    from tasks.stss.importer import import_report

    from . import cost
    from .suite import (
        plan_suite,
        planned_episodes,
        record_options,
        run_suite,
        table_file,
        write_table,
    )

    console = terminal.console()
    parallel = parallel_options(args)
    world = _world(args)
    window = _window(args)
    archs = list(dict.fromkeys(args.archs or ARCHITECTURES))
    if getattr(args, "dry_run", False):
        return dry_run(console, args, archs, world, window)
    # An imported task file is written to OUT/templates before the model is built: a suite
    # that stops before anything is recorded leaves no half-made --out behind.
    with _removed_on_error(args.out):
        hold_output(args.out)  # another command writing into OUT is refused before anything runs
        try:
            templates, imported = _templates(args, console)
        except (FileFormatError, ValueError) as exc:
            raise UserError(str(exc)) from exc
        sizes: dict = {}
        imports = import_report(_check_templates(templates, archs, args, window, world, console,
                                                 sizes), imported)
        try:
            episodes = plan_suite(templates, archs, args.seeds, args.out)
            options = checked_options(args, archs, world, window, episodes)
        except ValueError as exc:
            raise UserError(str(exc)) from exc
        say_estimate(console, args, episodes, sizes)
        done = [e for e in episodes if finished(e.run_dir)]
        basis = cost.basis(done, sizes)  # taken now: what the estimate of a dry run is made of
        setup = _setup(args, _recipe(args, window, scoring_options(args)), parallel)
        record_options(args.out, options)  # only now: a model that fails to build records nothing
    suite_budget, _ = budgets(args)
    started = time.perf_counter()
    with suite_progress(console, len(episodes), "episodes") as monitor:
        try:
            run = run_suite(episodes, setup, parallel=parallel, monitor=monitor,
                            budget=suite_budget if suite_budget.capped else None)
        except CacheMiss as exc:
            console.print(f"[red]stopped:[/] {exc}")
            return 1
        except ExecutorError as exc:
            raise UserError(str(exc)) from exc
    took = time.perf_counter() - started  # what the estimate's wall time is held against
    tables, markdown = write_table(run.scores, args.out, imports,
                                   rules=[o.rules for o in scoring_options(args)],
                                   planned=planned_episodes(episodes, run))
    # no wrapping: markdown; escaped: the import's lines quote public names, [brackets] too
    console.print(escape(markdown), highlight=False, soft_wrap=True)
    retried = sum(o.retried for o in run.outcomes)
    console.print(f"{len(episodes)} episodes ({monitor.skipped} already done"
                  f"{f', {retried} run again after their worker died' if retried else ''}); "
                  f"table: {args.out / 'table.md'}, "
                  f"{', '.join(str(args.out / table_file(t.rules)) for t in tables)}")
    # Every episode it started, finished or not: what they spent is what the run cost.
    ran = [e for e, o in zip(episodes, run.outcomes, strict=True) if o.ran and e not in done]
    terminal.print_markdown(against(cost.estimate(args, basis, ran, len(done), sizes),
                                    cost.actual(args, ran, sizes),
                                    stopped=sum(e in ran for e, _ in run.failures),
                                    wall_s=took))
    for episode, error in run.failures:  # on stderr, where a script looks for why it failed
        kind = next((k for k in ("stopped", "unavailable") if error.startswith(f"{k}: ")),
                    "failed")  # a budget's stop, a run no model answered, a failure
        terminal.say_stopped(f"{kind}: {episode.run_dir}: {error.removeprefix(f'{kind}: ')}")
    if suite_budget.stopped:
        console.print("the suite's budget is spent: the episodes left were not run; run the "
                      "same command with a higher --max-calls or --max-tokens to go on")
    if run.failures:
        where = "our table" if args.rules == "both" else "the table"
        also = "; the reference's scores the stopped ones, with a warning" \
            if args.rules != "ours" else ""
        terminal.say_stopped(f"{len(run.failures)} episode(s) failed or stopped and are not "
                             f"in {where}{also}; run the same command again to retry them")
    if imported is not None and imported.failed:  # said again at the end, where it is read
        failed = ", ".join(f"[{f.index}] ({f.id})" for f in imported.failed)
        console.print(f"[red]{len(imported.failed)} of {imported.total} public task(s) were not "
                      f"imported[/] and did not run: {escape(failed)} (the reasons are above "
                      "and in table.md)", highlight=False)
    return 1 if run.failures or (imported is not None and imported.failed) else 0


def register_score(sub) -> None:
    p = sub.add_parser(
        "score", help="re-score finished STSS runs from their logs (no model needed)",
        description="Read each run directory's header and events, apply the STSS rules of its "
                    "task type, print the score and write score.json (ours) or "
                    "score.reference.json (the STSS authors' scorer's rules) with the evidence: "
                    "which agent, which event, which rule counted or rejected it. Given a suite "
                    "directory (sandbox stss --out), score its finished episodes whose score is "
                    "missing or was made with other options, then print every episode's score "
                    "and the suite's board (as `sandbox stss-board DIR --episodes`).",
        epilog="example: sandbox score runs/demo; sandbox score runs/stss --rules reference")
    p.add_argument("runs", nargs="+", type=InputDir(), metavar="RUN_DIR",
                   help="a run directory, or a suite directory (sandbox stss --out)")
    p.add_argument("--json", action="store_true", help="print score.json instead")
    # lines printed per run: more than a run's events is of no use
    p.add_argument("--evidence", type=Count(0, 100_000), default=8, metavar="N",
                   help="evidence lines to print per run [default: %(default)s]")
    add_scoring_options(p)
    p.set_defaults(func=score_main)


def score_main(args) -> int:
    """`sandbox score RUN_DIR...`: score finished STSS runs again, offline, from their logs."""
    from evaluation.stss import ScoreError, write_score
    from sandbox.log import RunFormatError

    console = terminal.console()
    scorings = scoring_options(args)
    failed = 0
    for run_dir in args.runs:
        if (Path(run_dir) / SUITE_FILE).is_file():
            failed += _score_suite(Path(run_dir), args, scorings, console)
            continue
        if Path(run_dir).is_dir():  # (a missing one is said by write_score)
            hold_output(run_dir)  # score.json is written beside the run: not while it runs
        for options in scorings:
            try:
                score = write_score(run_dir, options)
            except (RunFormatError, ScoreError) as exc:
                raise UserError(str(exc)) from exc
            if args.json:
                print(score.model_dump_json(indent=2))
                continue
            console.print(f"[bold]{run_dir}[/]: {score.template}, performer {score.performer} "
                          f"({score.architecture}), seed {score.seed}; written to "
                          f"{Path(run_dir) / options.file}", highlight=False)
            print_score(score, console, evidence=args.evidence)
    return 1 if failed else 0


def score_suite(run_dirs: list[Path], scorings: list) -> tuple[int, list[tuple[Path, str]]]:
    """Score every finished episode whose score under each rule set is missing, does not read
    or was made with other options, as a resumed suite does (offline, from the logs; the others
    keep theirs), and, by the reference's rules, one a budget stopped, as a suite does when it
    stops. Returns how many score files were written, and the episodes that failed to."""
    from evaluation.stss import ScoreError, read_score, write_score
    from sandbox.log import RunFormatError, run_outcome

    written, failures = 0, []
    for run_dir in run_dirs:
        outcome = run_outcome(run_dir)
        stopped = outcome.state == "failed" and outcome.reason.startswith("budget: ")
        for scoring in scorings:
            if not (outcome.finished or stopped and scoring.rules == "reference"):
                continue
            try:
                score = read_score(run_dir, scoring.rules)
            except ValueError:
                score = None  # a score file that does not read is written again
            if score is not None and score.options == scoring:
                continue
            try:
                write_score(run_dir, scoring)
            except (ScoreError, RunFormatError) as exc:  # said; the other episodes go on
                failures.append((run_dir, str(exc)))
                continue
            written += 1
    return written, failures


def _score_suite(suite_dir: Path, args, scorings: list, console: Console) -> int:
    """`sandbox score SUITE`: its missing scores written, then its board with every episode's
    score, per rule set. Returns how many episodes failed to score."""
    import json

    from evaluation.kit import BoardError
    from evaluation.stss import read_suite, suite_board

    hold_output(suite_dir)  # score files are written beside the runs: not while the suite runs
    try:
        suite = read_suite(suite_dir)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    written, failures = score_suite([e.run_dir for e in suite.episodes], scorings)
    for options in scorings:
        report = suite_board([suite_dir], rules=options.rules, episodes=True)
        if args.json:
            print(json.dumps(report.data, indent=2))
        else:
            terminal.print_markdown(report.markdown)
    if not args.json:
        console.print(f"{suite_dir}: a suite of {len(suite.episodes)} planned episode(s); "
                      f"{written} score file(s) written (episodes without a score of these rules "
                      "and options; the others keep theirs; its table.md is not written "
                      "again)", highlight=False, soft_wrap=True)
    for run_dir, error in failures:
        console.print(f"[red]not scored:[/] {run_dir}: {error}", highlight=False,
                      soft_wrap=True)
    return len(failures)


def add_scoring_options(p: argparse.ArgumentParser) -> None:
    """How STSS runs are scored: which rule set, and the options of each."""
    g = p.add_argument_group("scoring (evaluation/README.md: the two rule sets, rule by rule)")
    g.add_argument("--rules", choices=["ours", "reference", "both"], default="ours",
                   help="ours: the paper's definitions as we read them (the place reached, "
                        "dates kept); reference: as the STSS authors' public scorer decides "
                        "(score.reference.json); both: each, in its own file and table "
                        "[default: %(default)s]")
    g.add_argument("--window-rule", choices=["overlap", "start"], default="overlap",
                   help="our rules: overlap: an activity going on at any moment of the time "
                        "window counts; start: it must start inside the window "
                        "[default: %(default)s]")
    # the reference reads every 10 s; a step of more than a day would read nothing
    g.add_argument("--sec-per-step", type=Count(1, 86_400), default=60, metavar="S",
                   help="the reference rules: read the run every S seconds, as the reference "
                        "reads its runs' steps [default: %(default)s]")


def scoring_options(args) -> list:
    """The ScoringOptions the scoring arguments ask for, ours first."""
    from evaluation.stss import ScoringOptions

    rules = ["ours", "reference"] if args.rules == "both" else [args.rules]
    return [ScoringOptions(rules=r, window=args.window_rule, sec_per_step=args.sec_per_step)
            for r in rules]


def print_score(score, console: Console, *, evidence: int = 8) -> None:
    """An STSS score, its rule and the evidence that counted (`sandbox run <template>`,
    `sandbox score`)."""
    rules = "" if score.rules == "ours" else f", {score.rules} rules"
    if score.score is None:
        console.print(f"[bold]unscored[/] ({score.type.value}{rules}): {score.unscored}")
    else:
        console.print(f"[bold]score {score.score:g}[/]  ({score.type.value}{rules}: "
                      f"{score.rule})")
    for warning in score.warnings:
        console.print(f"  [yellow]warning:[/] {warning}: this score does not measure the agents")
    if score.participants:
        console.print(f"  counted: {', '.join(score.participants)}")
    if score.conversation_ratio is not None:
        console.print(f"  conversation ratio {score.conversation_ratio:g} "
                      f"(talked with {len(score.talked_with)} before the activity)")
    shown = [e for e in score.evidence if e.verdict == "counted"][:evidence]
    for verdict in ("rejected", "note"):  # then why others did not count
        shown += [e for e in score.evidence if e.verdict == verdict][:evidence - len(shown)]
    for e in shown:
        where = f" @ {e.location}" if e.location else ""
        what = f" '{e.action}'{where} {e.start}" if e.action else ""
        console.print(f"  [dim]{e.verdict:8}[/] {e.agent}:{what} -- {e.reason}", highlight=False)
