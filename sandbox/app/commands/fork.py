"""`sandbox fork RUN --at TIME --out NEW`: a new run that is RUN up to TIME and goes on from
there, maybe with an agent's architecture swapped or a memory whispered.

By deterministic replay: RUN's recorded command (as `sandbox rerun` reads it) runs again into
NEW from a copy of RUN's cache, cache-only, to TIME; there the episode pauses (every event due
at TIME has run, no call is in flight), NEW's events so far are checked to be RUN's, byte for
byte, the changes are made, and the episode goes on with the model answering what the cache
does not hold. NEW's header records the chain under `config.forks` (sandbox/app/rerunning.py).
A fork that changes nothing continues exactly as RUN did (the same cache answers the same
calls). From RUN's last checkpoint before TIME when it wrote any (`--checkpoint-every`,
sandbox/checkpoint.py): its events and calls up to there are copied, and only the rest of the
way to TIME is replayed; from the start when it has none, when the checkpoint cannot be
restored, or when the replay from it does not go on as RUN did (said on the console).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import timedelta
from pathlib import Path

from sandbox import terminal
from sandbox.app.options import InputDir, Moment, declared
from sandbox.checkpoint import Checkpoint
from sandbox.errors import UserError, one_line
from sandbox.files import FileFormatError, input_lines, json_line, read_text
from sandbox.llm import caches_in
from sandbox.lock import hold_output
from sandbox.log import CACHE, EVENTS, RESULT, RunFormatError, RunResult, read_header
from sandbox.simtime import MOMENTS, TimeSpecError, clock_text, parse_time

from ..rerunning import (
    Fork,
    comparable_config,
    copy_cache,
    first_difference,
    fork_chain,
    fork_pauses,
    from_checkpoint,
    recorded_command,
    recorded_forks,
    run_recorded,
    same_config,
)
from .common import (
    add_schedule_option,
    add_whisper_option,
    architecture_ref,
    claim_run_directory,
    output_dir,
)


class ForkError(UserError):
    """The replay did not reach RUN's state at the fork point."""


@declared("assignment")
def agent_arch(text: str) -> tuple[str, str]:
    """--agent-arch NAME=ARCH, the architecture checked (the name against the run later)."""
    name, sep, arch = text.partition("=")
    if not sep or not name.strip() or not arch.strip() or name != one_line(name):
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME=ARCH, e.g. "
                                         "'Kenji Mori=ga_no_reflection'")
    return name.strip(), architecture_ref(arch.strip())


def register(sub) -> None:
    p = sub.add_parser(
        "fork", help="a new run that is RUN up to a time and goes on from there, changed",
        description="Make NEW: RUN up to TIME, restored from RUN's last checkpoint before "
                    "TIME (`sandbox run --checkpoint-every`) and the rest of the way RUN's "
                    "recorded command replayed from RUN's cache (no model call; NEW's events "
                    "so far checked to be RUN's), then the "
                    "changes (an agent's architecture swapped, its modules' state carried "
                    "where the new modules take it; memories whispered), then the episode "
                    "goes on, the model answering what the cache does not hold. RUN is not "
                    "changed. With no change, NEW goes on exactly as RUN did. NEW's header "
                    "records its parent, TIME, the changes and what became of the modules; "
                    "`sandbox rerun NEW` makes it again.",
        epilog="example: sandbox fork runs/day --at 10:00 --agent-arch 'Kenji Mori="
               "ga_no_reflection' --out runs/day-no-reflection")
    p.add_argument("run", type=InputDir(), metavar="RUN",
                   help="a run directory written by `sandbox run`")
    p.add_argument("--at", required=True, type=Moment(), metavar="TIME",
                   help=f"the fork point: {MOMENTS}; everything due then happens as in RUN "
                        "before the changes")
    p.add_argument("--out", type=output_dir, required=True, metavar="NEW",
                   help="the new run directory")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--arch", type=architecture_ref, metavar="ARCH",
                     help="the performer's new architecture (the one resident given a task)")
    who.add_argument("--agent-arch", type=agent_arch, action="append", metavar="NAME=ARCH",
                     help="NAME's new architecture: a built-in name or a YAML file; repeat "
                          "for several agents")
    add_whisper_option(p)
    add_schedule_option(p)
    p.add_argument("--cache-only", action="store_true",
                   help="after TIME too, answer only from the cache; a call not in it stops")
    p.add_argument("--from-start", action="store_true",
                   help="replay RUN from its start, not from its last checkpoint before TIME")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    console = terminal.console()
    # absolute: the replay runs from the directory its command was typed in (run_recorded)
    run = args.run = args.run.absolute()
    args.out = args.out.absolute()
    try:
        header = read_header(run)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    command = recorded_command(run)
    if command[:2] != ["sandbox", "run"]:
        raise UserError(f"{run}: recorded command {' '.join(command[:2])!r} is not a "
                        "`sandbox run`")
    at, end = _fork_point(args.at, run, header)
    # the parent absolute, as the recorded command's paths are (app/recorded.py): a replay
    # beside it, a rerun of the fork, find it from any directory
    fork = Fork(parent=os.path.abspath(run), at=at, time=clock_text(header.start_time, at),
                architectures=_architectures(args, header),
                whispers=_whispers(args.whisper or [], header, at, end),
                command=["sandbox", *(getattr(args, "argv", None) or [])])  # masked (app/cli.py)
    if not (run / CACHE).is_file():
        raise UserError(f"{run}: no {CACHE} to replay its answers from (run with --no-cache, "
                        "or --cache elsewhere), so its state at the fork point cannot be made "
                        "again")
    # Claimed before the cache is copied: a directory of the user's own files is refused with
    # nothing written into it.
    claim_run_directory(args.out)
    out = hold_output(args.out)
    copy_cache(run, out)
    chain = [f for f in fork_chain(header, run) if f.at <= at] + [fork]
    reached: dict = {}

    def before(index: int, engine, scenario) -> None:
        if index == len(chain) - 1:
            _check_replay(engine, run, header.config, at)
            reached.update(events=engine.log.count, calls=len(engine.calls.records),
                           cached=sum(c.cached for c in engine.calls.records),
                           copied=engine.restored.get("calls", 0),
                           wall=time.perf_counter() - started)

    def after(index: int, engine, scenario) -> None:
        if index != len(chain) - 1:
            return
        for cache in caches_in(engine.llm):  # one per role's model
            if not args.cache_only:
                cache.mode = "record"  # from here on the model answers what the cache lacks
        restored = engine.restored
        console.print(f"[bold]fork point {fork.time}[/]: "
                      + (f"{restored['events']} events and {restored['calls']} calls copied "
                         f"from {run}'s checkpoint at "
                         f"{clock_text(header.start_time, restored['t'])}, then "
                         if restored else "")
                      + f"replayed {reached['events'] - restored.get('events', 0)} events "
                      f"and {reached['calls'] - restored.get('calls', 0)} calls "
                      f"({reached['cached'] - restored.get('cached', 0)} from {run}'s cache) "
                      f"in {reached['wall']:.1f} s", highlight=False)
        for name, arch in fork.architectures.items():
            console.print(f"  {name} -> {arch}: {_modules_said(engine, name)}",
                          highlight=False)
        for whisper in fork.whispers:
            console.print(f"  whisper {str(whisper)!r}", highlight=False)

    def attempt(start: Checkpoint | None) -> int:
        reached.clear()
        return run_recorded(command, out, cache_only=True,
                            pauses=fork_pauses(chain, before=before, after=after),
                            recorded=recorded_forks(chain), start=start,
                            directory=header.config.get("command_dir"))

    code = (attempt(None) if args.from_start
            else from_checkpoint(run, at, attempt, also=(ForkError,)))
    if not reached:
        raise ForkError(f"the replay stopped before the fork point {fork.time}: {run}'s cache "
                        "does not hold every answer it was given before then (see above); "
                        f"what ran is in {out}")
    _say_after(console, out, reached)
    return code


def _fork_point(text: str, run: Path, header) -> tuple[float, float]:
    """The fork point in seconds since the start, and RUN's end; a UserError when TIME is not
    a time or lies outside RUN (a fork at its very end has nothing to go on with)."""
    try:
        at = parse_time(text, header.start_time)
    except TimeSpecError as exc:
        raise UserError(f"--at {exc}") from exc
    end = _end_of(run)
    if not 0 <= at < end:
        when = header.start_time + timedelta(seconds=at)
        raise UserError(f"--at {text} ({when:%Y-%m-%d %H:%M}): outside {run}, which runs from "
                        f"{clock_text(header.start_time, 0)} to "
                        f"{clock_text(header.start_time, end)} (started "
                        f"{header.start_time:%Y-%m-%d %H:%M})")
    return at, end


def _end_of(run: Path) -> float:
    """Up to when RUN holds every event: where result.json says it stopped, else (killed) the
    time of its last event (that instant may be cut short, so a fork must come before it)."""
    try:
        return RunResult.model_validate(json_line(read_text(run / RESULT))).sim_time_s
    except (OSError, ValueError, FileFormatError):
        last = 0.0  # no result.json that reads (a killed run): its events say how far it got
    if (run / EVENTS).exists():
        try:  # guarded: a FIFO given as events.jsonl is refused, not read for ever
            for _, line in input_lines(run / EVENTS):
                try:
                    last = max(last, float(json_line(line)["t"]))
                except (ValueError, KeyError, TypeError):
                    continue
        except FileFormatError as exc:
            raise UserError(str(exc)) from None
    return last


def _nearest(name: str, names: list[str]) -> str:
    import difflib

    near = difflib.get_close_matches(name, names, n=2, cutoff=0.5)
    return f"; did you mean {' or '.join(near)}?" if near else ""


def _architectures(args, header) -> dict[str, str]:
    """{agent: architecture} of --arch (the performer) or --agent-arch: the names checked
    against RUN's residents, each architecture built with RUN's parameter changes."""
    from pydantic import ValidationError

    from sandbox.files import FileFormatError
    from tasks.town import performer_of, recorded_town

    if args.arch is None and not args.agent_arch:
        return {}
    try:
        town = recorded_town(header.config)
    except ValueError as exc:
        raise UserError(f"{args.run}: {exc}") from None
    if town is None:
        raise UserError(f"{args.run}: a {header.scenario} run has no town residents whose "
                        "architecture could change")
    names = list(header.models)
    if args.arch is not None:
        performer = performer_of(header.config)
        if performer is None:
            raise UserError(f"--arch: {args.run} has no single performer (no resident, or "
                            "several, given a task); name the agent with --agent-arch "
                            "NAME=ARCH")
        chosen = {performer: args.arch}
    else:
        chosen = {}
        for name, arch in args.agent_arch:
            if name not in names:
                raise UserError(f"--agent-arch {name}={arch}: no agent {name!r} in {args.run}"
                                f"{_nearest(name, names)} (agents: {', '.join(names)})")
            chosen[name] = arch
    for name, arch in chosen.items():
        try:
            town.architecture(arch)
        except (KeyError, ValidationError, FileFormatError) as exc:
            reason = exc.args[0] if isinstance(exc, KeyError) else str(exc)
            raise UserError(f"{name}'s architecture {arch} does not take {args.run}'s "
                            f"parameter changes: {reason}") from exc
    return chosen


def _whispers(whispers, header, at: float, end: float):
    """The fork's whispers, each checked: a resident of RUN, at or after the fork point and
    before RUN's end."""
    from tasks.town import whisper_time

    for whisper in whispers:
        try:
            whisper_time(whisper, list(header.models), header.start_time, end, not_before=at)
        except ValueError as exc:
            raise UserError(f"--whisper {str(whisper)!r}: {exc}") from None
    return list(whispers)


def _check_replay(engine, run: Path, config: dict, at: float) -> None:
    """NEW's config and events so far are RUN's, byte for byte, and RUN logged nothing more up
    to the fork point: else a ForkError (the code, or a file the command reads, changed)."""
    ours = comparable_config(engine.log.header.config)
    theirs = comparable_config(config)
    if not same_config(ours, theirs):
        raise ForkError(f"the replay's scenario is not {run}'s: config."
                        f"{first_difference(ours, theirs)} differs (a file the recorded "
                        "command reads changed since?)")
    count = engine.log.count
    with (engine.log.dir / EVENTS).open("rb") as fh:
        mine = [fh.readline() for _ in range(count)]
    with (run / EVENTS).open("rb") as fh:
        original = [fh.readline() for _ in range(count + 1)]
    for number, (a, b) in enumerate(zip(mine, original, strict=False), start=1):
        if a != b:
            raise ForkError(f"the replay differs from {run} at event {number} (its "
                            f"events.jsonl line {number}), before the fork point: the code or "
                            "a file the recorded command reads changed since it ran, so its "
                            "state there cannot be made again")
    following = original[count] if len(original) > count else b""
    try:
        more = bool(following.strip()) and float(json.loads(following)["t"]) <= at
    except (ValueError, KeyError, TypeError):
        more = True
    if more:
        raise ForkError(f"the replay logged {count} events up to the fork point, {run} more "
                        f"(event {count + 1} onwards): the code or a file the recorded command "
                        "reads changed since it ran")


def _modules_said(engine, name: str) -> str:
    """What became of an agent's modules, from the header the pause just recorded."""
    fork = engine.log.header.config["forks"][-1]
    modules = fork["modules"].get(name, {})
    carried = [slot for slot, why in modules.items() if not why]
    fresh = [f"{slot} ({why})" for slot, why in modules.items() if why]
    return "; ".join(filter(None, [f"carried {', '.join(carried)}" if carried else "",
                                   f"fresh {', '.join(fresh)}" if fresh else ""]))


def _say_after(console, out: Path, reached: dict) -> None:
    """The prefix and the rest of the fork, in calls."""
    calls = [json.loads(line) for line in (out / "calls.jsonl").open(encoding="utf-8")
             if line.strip()] if (out / "calls.jsonl").is_file() else []
    after = calls[reached["calls"]:]
    live = sum(not c.get("cached") for c in after)
    copied = reached.get("copied", 0)
    console.print(f"fork: {reached['calls']} calls before the fork point ("
                  + (f"{copied} copied from the checkpoint, " if copied else "")
                  + f"{reached['calls'] - copied} replayed), {len(after)} after it ({live} "
                  f"answered by the model, {len(after) - live} from the cache)",
                  highlight=False)
