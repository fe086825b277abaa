"""Running a run's recorded command again (`sandbox rerun`, `sandbox fork`): the words a
one-episode `sandbox run` records in its header (`config.command`), and the changes a fork
makes at its fork point, applied by pausing the replayed episode there (`sandbox.runner.Pause`).

A run that wrote checkpoints (sandbox/checkpoint.py) is run again from its last one before
the time that matters (a fork's point; a resume's end) instead of from its start: its events
and calls up to the checkpoint are copied, not replayed.

A fork's header records its chain of forks under `config.forks`, oldest first, the last its
own: each one's parent, time, changes and what became of each changed agent's modules. A rerun
of a fork applies them again at the same instants; a fork of a fork applies those at or before
its own fork point first.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.app.options import names_file as _names_file
from sandbox.checkpoint import Checkpoint, NotResumable, listed, read
from sandbox.errors import UserError
from sandbox.log import CACHE, HEADER, RunFormatError, RunHeader, read_header
from sandbox.runner import CHECK_CONFIG, PAUSES, RECORDED, RESTORE, Pause
from tasks.town import Whisper, town_of

# Options of the recorded command that a rerun or a fork decides itself: where it writes and
# how it uses the cache. (flag, takes a value)
DECIDED = {"--out": True, "--overwrite": False, "--cache": True, "--cache-only": False,
           "--no-cache": False}


def recorded_command(run: Path) -> list[str]:
    """The recorded `sandbox ...` words, or a UserError saying why there are none; its models
    file where the run found it, whatever directory the command is run from (`travelled`)."""
    try:
        header = read_header(run)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    return travelled(_words(header, run), header)


def benchmark_command(header: RunHeader) -> list[str] | None:
    """The command of the benchmark run that made this run, when it is a benchmark item's
    dialogue (it records no `sandbox run` of its own), else None."""
    command = header.config.get("command")
    made_by = header.config.get("benchmark_command")
    if (not command or not isinstance(command, list)) and isinstance(made_by, list):
        return [str(word) for word in made_by]
    return None


def _words(header: RunHeader, run: Path) -> list[str]:
    command = header.config.get("command")
    made_by = benchmark_command(header)
    if made_by is not None:
        # A benchmark's dialogue: `sandbox rerun` remakes it by its benchmark's command
        # (commands/benchmark.py, rerun_item); it has no town to fork.
        raise UserError(f"{run}: a dialogue of the benchmark run `{' '.join(made_by)}`, "
                        "which has no town to fork; `sandbox rerun` makes it again")
    if not command or not isinstance(command, list):
        raise UserError(f"{run}: its header records no command (written before suites' "
                        "episodes and benchmarks' dialogues recorded theirs); run the command "
                        "that made it again instead: it resumes")
    return [str(word) for word in command]


MODELS_FLAG = "--models"


def travelled(words: list[str], header: RunHeader) -> list[str]:
    """`words` with the models file the run resolved: the absolute path its header recorded
    (config.endpoints) in place of the one typed (relative to wherever the run was made);
    when that file is gone (a run directory given to a colleague), one rebuilt from what the
    header recorded of each alias (model, URL, key variable, dialect), said in one line."""
    endpoints = (header.config.get("endpoints") or {}).values()
    recorded = next((e.get("models_file") for e in endpoints
                     if isinstance(e, dict) and e.get("models_file")), None)
    if recorded is None or not any(w == MODELS_FLAG or w.startswith(f"{MODELS_FLAG}=")
                                   for w in words):
        return words
    path = recorded if Path(recorded).is_file() else _rebuilt(endpoints, recorded)
    out, skip = [], False
    for word in words:
        if skip:
            out.append(path)
            skip = False
        elif word == MODELS_FLAG:
            out.append(word)
            skip = True
        elif word.startswith(f"{MODELS_FLAG}="):
            out.append(f"{MODELS_FLAG}={path}")
        else:
            out.append(word)
    return out


def _rebuilt(endpoints: Iterable[dict], recorded: str) -> str:
    """A models file made from a header's endpoints (removed when the command ends)."""
    import atexit
    import sys
    import tempfile

    import yaml

    aliases = {e["alias"]: {k: v for k, v in (("model", e.get("model")),
                                              ("base_url", e.get("base_url")),
                                              ("key_env", e.get("key_env")),
                                              ("json_dialect", e.get("json_dialect")))
                            if v is not None}
               for e in endpoints if isinstance(e, dict) and e.get("alias")}
    folder = Path(tempfile.mkdtemp(prefix="sandbox-models-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "models.yaml"
    path.write_text(yaml.safe_dump(aliases, sort_keys=True), encoding="utf-8")
    # a warning, where a script's `2>` finds it: stdout keeps the run's own output
    print(f"models file: {recorded} is gone; using the aliases the run's header recorded "
          f"({', '.join(sorted(aliases))})", file=sys.stderr, flush=True)
    return str(path)


def without_decided(words: list[str]) -> list[str]:
    """The command's words without the options the rerun decides (`--out X`, `--out=X`, ...)."""
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        flag = word.split("=", 1)[0]
        if flag in DECIDED:
            skip = DECIDED[flag] and "=" not in word
            continue
        kept.append(word)
    return kept


class Fork(BaseModel):
    """One fork of a chain, as its header records it (`config.forks`)."""

    model_config = ConfigDict(extra="forbid")

    parent: str  # the run directory it was forked from
    at: float = Field(ge=0)  # the fork point, in simulated seconds since the start
    time: str  # the same as a clock time
    architectures: dict[str, str] = Field(default_factory=dict)  # agent -> architecture
    whispers: list[Whisper] = Field(default_factory=list)  # planted at or after the fork point
    # What became of each changed agent's modules, known at the fork point: agent -> slot ->
    # "" (its state carried over) or why it started fresh.
    modules: dict[str, dict[str, str]] = Field(default_factory=dict)
    command: list[str] = Field(default_factory=list)  # the `sandbox fork ...` that made it


def fork_chain(header: RunHeader, where: Path | str) -> list[Fork]:
    """The forks a run's header records (none for a run that is not a fork)."""
    raw = header.config.get("forks") or []
    try:
        return [Fork.model_validate(entry) for entry in raw]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"{where}: its header's config.forks does not read "
                        f"({'.'.join(map(str, first['loc']))}: {first['msg']})") from exc


def apply_fork(fork: Fork, engine, scenario) -> dict[str, dict[str, str]]:
    """Make a fork's changes in a running episode paused at its fork point: swap agents'
    architectures (state carried where the new modules take it) and schedule its whispers.
    Returns what became of each changed agent's modules (Fork.modules)."""
    if not fork.architectures and not fork.whispers:
        return {}
    town = town_of(scenario)
    if town is None:
        raise UserError(f"a {scenario.name} episode has no town residents to change")
    modules = {name: town.change_architecture(engine, name, arch)
               for name, arch in fork.architectures.items()}
    for whisper in fork.whispers:
        town.whisper(engine, whisper, whisper.seconds(town.start_time))
    return modules


Hook = Callable[[int, Any, Any], None]  # (index in the chain, engine, scenario)


def fork_pauses(chain: list[Fork], *, before: Hook | None = None, after: Hook | None = None
                ) -> tuple[Pause, ...]:
    """A pause per fork of `chain` that makes its changes and records what became of the
    modules in the header (the whole chain, under config.forks); `before` and `after` are
    called around that at each pause (a fork checks its replay before, goes live after)."""
    chain = list(chain)

    def act_for(index: int):
        def act(engine, scenario) -> None:
            if before is not None:
                before(index, engine, scenario)
            chain[index] = chain[index].model_copy(
                update={"modules": apply_fork(chain[index], engine, scenario)})
            if engine.log is not None:
                engine.log.record(forks=[f.model_dump(mode="json") for f in chain])
            if after is not None:
                after(index, engine, scenario)
        return act

    return tuple(Pause(fork.at, act_for(i)) for i, fork in enumerate(chain))


def recorded_forks(chain: Iterable[Fork]) -> dict[str, Any]:
    """What the header of a run made with `chain` records from the start (RECORDED)."""
    return {"forks": [f.model_dump(mode="json") for f in chain]}


def copy_cache(run: Path, out: Path) -> bool:
    """Start OUT (a new directory: a UserError if it holds a run) with RUN's cache; whether
    RUN had one. RUN is not changed."""
    if (out / HEADER).exists():
        raise UserError(f"--out {out}: holds a run already; give a new directory")
    out.mkdir(parents=True, exist_ok=True)
    if (run / CACHE).is_file():
        shutil.copyfile(run / CACHE, out / CACHE)
        return True
    return False


def comparable_config(config: dict) -> dict:
    """A header's config without what differs between a run and its replay for no reason:
    the command and where it was typed, the forks, where architecture files were read from,
    how its endpoints were
    reached (a cache-only replay asks no server its dialect; a rebuilt models file is
    elsewhere), and empty entries (a field added since RUN ran, at its empty default, changes
    nothing)."""
    out = {}
    for key, value in config.items():
        if key in ("command", "command_dir", "forks", "source", "endpoints") \
                or value in (None, [], {}):
            continue
        out[key] = comparable_config(value) if isinstance(value, dict) else value
    return out


def same_config(a: Any, b: Any) -> bool:
    """Two comparable configs alike, a file named by a relative path in one and by the
    absolute path the recorded command now gives it (app/recorded.py) in the other counted
    the same: a run made before commands recorded absolute paths, or whose config keeps the
    path as typed, is remade by its recorded command with the path absolute."""
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():  # a key may be such a path too (an architecture's)
            match = key if key in b else next((k for k in b if same_config(key, k)), None)
            if match is None or not same_config(value, b[match]):
                return False
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_config(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, str) and isinstance(b, str) and a != b:
        return _same_path(a, b) or _same_path(b, a)
    return a == b


def _same_path(relative: str, absolute: str) -> bool:
    """`absolute` is `relative` (a path naming a file, as typed) from some directory."""
    if os.path.isabs(relative) or not os.path.isabs(absolute) or not _names_file(relative):
        return False
    parts = Path(os.path.normpath(relative)).parts
    return ".." not in parts and Path(absolute).parts[-len(parts):] == parts


def first_difference(a, b, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if not same_config(a.get(key), b.get(key)):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}".lstrip("."))
    return path or "(top level)"


def same_scenario(run: Path, recorded: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """The runner's CHECK_CONFIG for a rerun of `run`: the rerun's scenario must be the one
    `run` recorded (an architecture file edited since, a world file changed: its agents would
    not be the ones that ran), or the rerun is refused before anything is written."""
    theirs = comparable_config(recorded)

    def check(config: dict[str, Any]) -> None:
        ours = comparable_config(config)
        if not same_config(ours, theirs):
            keys, was, now = _difference(theirs, ours)
            raise UserError(f"{run} cannot be made again as it ran: config."
                            f"{'.'.join(map(str, keys))} differs now ({_short(was)} when it "
                            f"ran, {_short(now)} now): a file the recorded command reads (an "
                            "architecture, a world, a template) changed since; put it back, "
                            "or run the command anew")

    return check


def _difference(a: Any, b: Any, keys: tuple = ()) -> tuple[tuple, Any, Any]:
    """The first place two configs differ: its keys, and the two values there."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if not same_config(a.get(key), b.get(key)):
                return _difference(a.get(key), b.get(key), (*keys, key))
    return keys, a, b


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def parsed(argv: list[str]):
    """A recorded command's words parsed by this version's command line (an option it no
    longer has: a UserError saying so)."""
    from sandbox.app.cli import build_parser, parse_command

    return parse_command(build_parser(), argv, "the recorded command does not parse now: ")


def run_recorded(command: list[str], out: Path, *, cache_only: bool,
                 pauses: tuple[Pause, ...] = (), recorded: dict[str, Any] | None = None,
                 start: Checkpoint | None = None,
                 check: Callable[[dict[str, Any]], None] | None = None,
                 directory: str | None = None) -> int:
    """Run the recorded `sandbox run ...` words again into OUT (over it: --overwrite), from
    OUT's cache, pausing at `pauses` and recording `recorded` in its header; from the
    checkpoint `start` (its pauses before it already made) when given, else from the start.
    `directory`: the one the command was typed in (its header's `command_dir`): run from
    there while it exists, so a file the command names as typed (a template, a world, an
    architecture: the run's config and events name it so) is the same file, found from
    anywhere."""
    from rich.markup import escape

    from sandbox import terminal

    argv = [*without_decided(command[1:]), "--out", str(Path(out).absolute()), "--overwrite",
            *(["--cache-only"] if cache_only else [])]
    shown = escape(f"sandbox {' '.join(argv)}")  # a recorded word may hold [brackets]
    terminal.console().print(f"[dim]{shown}[/]", highlight=False, soft_wrap=True)
    here = os.getcwd()
    typed_in = directory if directory and os.path.isdir(directory) else None
    paused, extra, restore = PAUSES.set(pauses), RECORDED.set(recorded), RESTORE.set(start)
    checked = CHECK_CONFIG.set(check)
    try:
        if typed_in is not None:
            os.chdir(typed_in)
        try:
            again = parsed(argv)
        except UserError as exc:
            if directory and typed_in is None:  # what it names as typed was found there
                raise UserError(f"{exc} (the command was typed in {directory}, which is not "
                                "there now: run it from a directory that holds those files)"
                                ) from exc
            raise
        return again.func(again)
    finally:
        os.chdir(here)
        PAUSES.reset(paused)
        RECORDED.reset(extra)
        RESTORE.reset(restore)
        CHECK_CONFIG.reset(checked)


def from_checkpoint(run: Path, at: float, attempt: Callable[[Checkpoint | None], int], *,
                    also: tuple[type[Exception], ...] = ()) -> int:
    """`attempt(checkpoint)` from RUN's last checkpoint at or before `at` that can be read
    (sandbox/checkpoint.py: those that cannot are said and passed over); when there is none,
    or it cannot be restored (NotResumable, or one of `also`: what the caller raises when the
    restored run does not go on as RUN did), `attempt(None)`: from the start, said too."""
    from rich.markup import escape

    from sandbox import terminal
    from sandbox.simtime import clock_text

    console = terminal.console()
    start_time = read_header(run).start_time
    found = listed(run)
    for t, path in reversed([(t, p) for t, p in found if t <= at]):
        when = clock_text(start_time, t)
        try:
            start = read(path)
            console.print(f"[dim]from {run}'s checkpoint at {when}[/]", highlight=False)
            return attempt(start)
        except (NotResumable, *also) as exc:
            console.print(f"[yellow]the checkpoint at {when} cannot be used[/] "
                          f"({escape(str(exc))})", highlight=False)
    if found:
        console.print(f"running {run}'s command from its start instead", highlight=False)
    return attempt(None)
