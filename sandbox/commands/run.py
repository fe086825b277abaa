"""`sandbox run SCENARIO`: run one episode into a run directory and summarise it."""

from __future__ import annotations

from pathlib import Path

from sandbox import terminal
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.llm import CacheMiss
from sandbox.log import CACHE, RunDirectoryExists, load_run
from sandbox.runner import run_episode
from sandbox.summary import print_summary, summarize

from .common import add_llm_options, build_llm, non_negative_int, print_event, run_directory


def register(sub) -> None:
    from sandbox.commands.stss import add_template_options
    from tasks.scenarios import SCENARIOS

    p = sub.add_parser(
        "run", help="run one episode (a scenario, or an STSS task template)",
        description="Run one episode of a scenario and write its run directory "
                    "(header.json, events.jsonl, calls.jsonl, llm_cache.jsonl, result.json).",
        epilog="example: sandbox run single_room --model local/smollm2-135m --seed 0 "
               "--out runs/demo")
    p.add_argument("scenario", help=f"scenario name ({', '.join(sorted(SCENARIOS))}), or an "
                                    "STSS task template: a .yaml file or a built-in template "
                                    "name (tasks/stss/templates); a template run ends with "
                                    "its score")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="episode seed, 0 or more [default: %(default)s]")
    p.add_argument("--out", type=Path, help="run directory [default: runs/<scenario>-s<seed>-"
                                            "<timestamp>]")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the events of an existing run directory")
    p.add_argument("--config", type=Path, help="scenario file (YAML) instead of the built-in one")
    p.add_argument("--turns", type=int, help="maximum conversation turns (single-room)")
    p.add_argument("--quiet", action="store_true", help="do not print events as they happen")
    add_template_options(p)
    add_llm_options(p)
    p.set_defaults(func=main)


def main(args) -> int:
    from tasks.scenarios import SCENARIOS

    console = terminal.console()
    if args.scenario not in SCENARIOS:
        from sandbox.commands.stss import run_template
        from tasks.stss import is_template_ref

        if is_template_ref(args.scenario):
            return run_template(args)
        raise UserError(f"unknown scenario {args.scenario!r}; known: "
                        f"{', '.join(sorted(SCENARIOS))}")
    try:
        scenario = SCENARIOS[args.scenario](args.config, max_turns=args.turns)
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc
    out = run_directory(args, args.scenario)
    llm = build_llm(args, cache_default=out / CACHE)
    console.print(f"[dim]running {args.scenario} with {llm.model_id}, seed {args.seed}, "
                  f"into {out}[/]")
    try:
        result = run_episode(scenario, llm, seed=args.seed, out_dir=out,
                             overwrite=args.overwrite, max_concurrency=args.max_concurrency,
                             on_event=None if args.quiet else print_event(console))
    except RunDirectoryExists as exc:
        raise UserError(str(exc)) from exc
    except CacheMiss as exc:
        console.print(f"[red]stopped:[/] {exc}\nwhat ran so far is in {out}")
        return 1
    print_summary(summarize(load_run(out)), console)
    console.print(f"run directory: {out}  ({result.wall_time_s:.1f} s)")
    return 0
