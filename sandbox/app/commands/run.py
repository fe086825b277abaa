"""`sandbox run SCENARIO`: run one episode into a run directory and summarise it."""

from __future__ import annotations

import argparse

from sandbox import terminal
from sandbox.app.options import (
    HOURS,
    PERSON,
    RESIDENTS,
    SEED,
    Count,
    InputFile,
    Number,
    Reference,
    Text,
)
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.llm import CacheMiss
from sandbox.llm.human import PersonLeft
from sandbox.lock import hold_output
from sandbox.log import CACHE, RunDirectoryExists, load_run
from sandbox.runner import run_episode
from sandbox.summary import print_summary, summarize

from ..human import add_human_options, person_left, person_of
from ..roles import add_role_options, build_town_llm
from .common import (
    add_budget_options,
    add_checkpoint_option,
    add_embedder_option,
    add_llm_options,
    add_schedule_option,
    add_sim_time_option,
    add_whisper_option,
    architecture_ref,
    budgets,
    build_llm,
    output_dir,
    print_event,
    replayed_note,
    run_directory,
    run_stopped,
    say_replaying,
)


def register(sub) -> None:
    from tasks.scenarios import SCENARIOS

    from ..plugins import plugins

    targets = [(found.name, found.run_target) for found in plugins()
               if found.run_target is not None]
    p = sub.add_parser(
        "run", help="run one episode (a scenario, or a benchmark's task template)",
        description="Run one episode of a scenario and write its run directory "
                    "(header.json, events.jsonl, calls.jsonl, llm_cache.jsonl, result.json).",
        epilog="example: sandbox run single_room --model local/smollm2-135m --seed 0 "
               "--out runs/demo")
    p.add_argument("scenario", type=Reference("a scenario or template"),
                   help=f"scenario name ({', '.join(sorted(SCENARIOS))})"
                        + "".join(f", or {t.describe}" for _, t in targets))
    p.add_argument("--seed", type=SEED, default=0,
                   help="episode seed, 0 or more [default: %(default)s]")
    p.add_argument("--out", type=output_dir, help="run directory [default: runs/<scenario>-s<seed>-"
                                            "<timestamp>]")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the events of an existing run directory")
    p.add_argument("--config", type=InputFile(),
                   help="scenario file (YAML) instead of the built-in one")
    p.add_argument("--turns", type=Count(1, 200),  # a single-room file's own bound
                   help="maximum conversation turns (single-room)")
    p.add_argument("--quiet", action="store_true", help="do not print events as they happen")
    _add_town_options(p)
    _add_episode_options(p)
    for name, target in targets:
        try:
            target.add_options(p)
        except argparse.ArgumentError as exc:
            raise SystemExit(f"sandbox: benchmark plug-in {name}: its options of `sandbox run`: "
                             f"{exc}; uninstall one of the two packages") from exc
    add_llm_options(p)
    add_budget_options(p)
    p.set_defaults(func=main)


def _add_town_options(p: argparse.ArgumentParser) -> None:
    """Options of town_day that change its file (the built-in one or --config); they mirror
    tasks.scenarios.town_day.TownChanges."""
    g = p.add_argument_group(
        "town day (town_day only; each changes the file's value)",
        "Switching the performer between GA and GA+TDP is one flag: --performer NAME --arch ga "
        "or --arch ga_tdp. The file's other per-resident architectures and tasks stay.")
    g.add_argument("--world", type=Reference("a world"),
                   help="world name (built-in or imported) or world file with "
                        "residents, its day on its own date (the config's residents and "
                        "tasks of people who do not live there dropped; none left: all "
                        "of its residents); also the world of a task template")
    g.add_argument("--residents", type=RESIDENTS, metavar="N",
                   help="only the first N residents of the world, by name (the performer takes "
                        "the last seat when not among them); the file's architectures and "
                        "tasks of those left out are dropped")
    g.add_argument("--resident", action="append", type=PERSON, metavar="NAME",
                   help="a resident to include (repeat for several), instead of the file's "
                        "list; overrides --residents")
    g.add_argument("--architecture", type=architecture_ref, metavar="ARCH",
                   help="everyone's architecture (the performer gets --arch)")
    g.add_argument("--performer", type=PERSON, metavar="NAME",
                   help="the resident who gets --arch [default: ga_tdp] and --task; added to "
                        "the residents if missing")
    g.add_argument("--task", type=Text("a task"),
                   help="the social task injected into the performer (its "
                        "`currently` and task planner)")
    g.add_argument("--hours", type=Number(0, HOURS, above=True),
                   help="simulated hours the day lasts")


def _add_episode_options(p: argparse.ArgumentParser) -> None:
    """The performer's architecture and the memory of a town episode: town_day's, and those of
    a task template a benchmark runs (`sandbox run` asks each installed benchmark for the
    rest of a template's options)."""
    g = p.add_argument_group("town episode (town_day, or a task template)")
    g.add_argument("--arch", type=architecture_ref, metavar="ARCH",
                   help="the performer's architecture (a template's performer, or "
                   "town_day's --performer): a built-in name (ga, ga_tdp, ga_recency, "
                   "ga_no_reflection) or an architecture YAML file; background residents "
                   "are ga [default: ga_tdp]")
    add_whisper_option(g)
    add_embedder_option(g)
    add_sim_time_option(g)
    add_schedule_option(g)
    add_checkpoint_option(g)
    add_role_options(p.add_argument_group(
        "models by role (town_day or a task template: the evaluated model --model answers "
        "the performer's high-level calls, the background model the rest of the town)"))
    add_human_options(p.add_argument_group(
        "a person plays a resident (town_day or a task template)"))


TOWN_OPTIONS = ("world", "residents", "resident", "architecture", "performer", "task", "hours")


def _town_changes(args):
    """The town_day options given as TownChanges, or None (a UserError when they are given for
    another scenario)."""
    from tasks.scenarios.town_day import TownChanges

    given = [name for name in TOWN_OPTIONS if getattr(args, name) is not None]
    if args.scenario != "town_day":
        if given:
            raise UserError(f"--{given[0]} is an option of town_day, not {args.scenario}")
        if args.whisper:
            raise UserError(f"--whisper plants a memory in a town's resident; {args.scenario} "
                            "has none")
        return None
    if not given and args.arch is None and args.embedder is None and not args.whisper:
        return None
    if args.arch is not None and args.performer is None:
        raise UserError("--arch needs --performer (who gets it); --architecture sets "
                        "everyone's")
    extra = {"performer_architecture": args.arch} if args.arch else {}
    return TownChanges(world=args.world, residents=args.resident, first=args.residents,
                       architecture=args.architecture, performer=args.performer,
                       task=args.task, hours=args.hours, embedder=args.embedder,
                       whispers=args.whisper or [], **extra)


def main(args) -> int:
    """The episode, its command line recorded in its header (`sandbox rerun` repeats it)."""
    from sandbox.runner import COMMAND

    # args.argv comes with its credentials masked (app/cli.py)
    token = COMMAND.set(["sandbox", *(getattr(args, "argv", None) or ["run", args.scenario])])
    try:
        return _run(args)
    finally:
        COMMAND.reset(token)


def _run(args) -> int:
    from tasks.scenarios import SCENARIOS

    console = terminal.console()
    if args.scenario not in SCENARIOS:
        from ..plugins import run_targets

        for target in run_targets():
            if target.owns(args.scenario):
                return target.run(args)
        raise UserError(unknown_scenario(args.scenario, sorted(SCENARIOS), run_targets()))
    changes = _town_changes(args)
    try:
        scenario = SCENARIOS[args.scenario](args.config, max_turns=args.turns,
                                            **({"changes": changes} if changes else {}))
    except (FileFormatError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    person = None
    if args.scenario == "town_day":
        from tasks.town import town_of

        try:
            residents = town_of(scenario).resident_names()
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from exc
        person = person_of(args, residents)  # --human: who a person plays
    elif args.human or args.human_ui:
        raise UserError(f"--human: a person plays a resident of a town; {args.scenario} has "
                        "none (use town_day or a task template)")
    out = hold_output(run_directory(args, args.scenario))  # one writer: refused while another runs
    if args.scenario == "town_day":
        from tasks.town import performer_in, town_of

        llm = build_town_llm(args, args.cache or out / CACHE,
                             args.performer or performer_in(town_of(scenario)), person)
    else:
        if args.background_model or args.performer_routing:
            raise UserError(f"--background-model and --performer-routing give a town's "
                            f"performer and residents their models; {args.scenario} has none")
        llm = build_llm(args, cache_default=out / CACHE)
    console.print(f"[dim]running {args.scenario} with {llm.model_id}, seed {args.seed}, "
                  f"into {out}[/]")
    say_replaying(llm, console)

    def episode_run():
        return run_episode(scenario, llm, seed=args.seed, out_dir=out,
                           overwrite=args.overwrite, max_concurrency=args.max_concurrency,
                           on_event=None if args.quiet else print_event(
                               console, until=scenario.until, run_dir=out),
                           budgets=[budgets(args)[0]], checkpoint_every=args.checkpoint_every)

    try:
        result = person.run(episode_run, out) if person else episode_run()
    except RunDirectoryExists as exc:
        raise UserError(str(exc)) from exc
    except PersonLeft as exc:
        return person_left(exc, out, console)
    except CacheMiss as exc:
        console.print(f"[red]stopped:[/] {exc}\nwhat ran so far is in {out}")
        return 1
    run = load_run(out)
    print_summary(summarize(run), console)
    console.print(f"run directory: {out}  ({result.wall_time_s:.1f} s{replayed_note(run)})")
    return run_stopped(result, console)


def unknown_scenario(name: str, scenarios: list[str], targets) -> str:
    """A scenario no one knows: the nearest scenario names and the benchmarks' item names
    closest to it (their `near`), the scenarios known, and where the benchmarks' items are
    listed."""
    import difflib

    close = difflib.get_close_matches(name, scenarios, n=3)
    for target in targets:
        if target.near is not None:
            close += [n for n in target.near(name) if n not in close]
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    lists = dict.fromkeys(f"`sandbox list {t.listing}`" for t in targets if t.listing)
    more = f", and the names {' and '.join(lists)} lists" if lists else ""
    return f"unknown scenario {name!r}; {hint}known: {', '.join(scenarios)}{more}"
