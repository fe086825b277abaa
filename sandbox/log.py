"""The episode log: a run directory that is the only interface between simulation and the rest.

    runs/<name>/
      header.json    format version, code version, scenario config, seed, model ids, start time
      events.jsonl   typed events, one per line, appended and flushed as they happen
      calls.jsonl    accounting of every LLM call (wall-clock facts; see sandbox.llm.accounting)
      llm_cache.jsonl  the answers, for cache-only replay (unless --cache points elsewhere)
      result.json    how the run ended: status, wall time, error (written last)

`EpisodeLog` writes it; `load_run` reads it back into typed events. A truncated or corrupt line
(or result.json) is reported in `Run.problems`, never fatal: a killed run keeps everything up to
the kill.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_serializer

from .events import Event, event_type
from .files import MAX_LOG_BYTES, FileFormatError, input_lines, json_line, read_text
from .llm.accounting import PROMPTS, CallRecord, PromptRecord
from .storage import open_append, write_atomic

FORMAT_VERSION = 1
HEADER = "header.json"
EVENTS = "events.jsonl"
CALLS = "calls.jsonl"
CACHE = "llm_cache.jsonl"
RESULT = "result.json"
# Written after the run by evaluations (a score, a benchmark's judgments/<judge>.json).
SCORE = "score.json"
SCORES = "score*.json"  # a score and those of other rules beside it (score.<rules>.json)
JUDGMENTS = "judgments"


@functools.cache  # asked by every run's header: one `git` process per process, not per run
def code_version() -> str:
    """The package version and the checkout's commit, as found when the process first asks:
    a commit made while it runs is not the code it imported."""
    from . import __version__

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5, cwd=Path(__file__).parent)
        if rev.returncode == 0 and rev.stdout.strip():
            return f"{__version__}+g{rev.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):  # no git here: the package version alone
        return __version__
    return __version__


class RunHeader(BaseModel):
    format_version: int = FORMAT_VERSION
    code_version: str = Field(default_factory=code_version)
    scenario: str
    seed: int
    start_time: datetime  # the simulated datetime of t = 0
    models: dict[str, str]  # role or agent -> model id
    # The episode model's backend settings that shape answers (sandbox.llm.backend_settings)
    backend: dict[str, Any] = Field(default_factory=dict)
    world: str | None = None  # world name or file, for viewers
    config: dict[str, Any] = Field(default_factory=dict)
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))

    def model_names(self) -> dict[str, str]:
        """`models` as every place a person reads names them: each role or agent with its
        model as "alias (model id)" where the run recorded what a role resolved to
        (config.roles: a benchmark item's by role; a town's evaluated and background models,
        the performer's purposes split between them said as both, "a (x) + b (y)"), else its
        model id. `models` itself keeps model ids: what old runs hold, and what fork,
        interview, a replay's scene and the run fingerprints read (sandbox/README.md)."""
        roles = self.config.get("roles")
        roles = roles if isinstance(roles, dict) else {}
        named = {str(role): who for role, who in roles.items() if isinstance(who, dict)
                 and isinstance(who.get("name"), str) and isinstance(who.get("model"), str)}
        split = roles.get("purposes") if isinstance(roles.get("purposes"), dict) else {}
        out = {}
        for who, model in self.models.items():
            by_role = split.get(who)
            if isinstance(by_role, dict) and len(by_role) > 1:
                both = [named[r]["name"] for r in by_role if r in named]
                out[who] = " + ".join(dict.fromkeys(both)) if both else model
                continue
            if who in named:  # a benchmark item's role
                role = who
            elif isinstance(by_role, dict) and len(by_role) == 1:
                role = next(iter(by_role))
            elif who == roles.get("performer") or "background" not in named:
                role = "evaluated"
            else:  # a town's other residents
                role = "background"
            found = named.get(role)
            out[who] = found["name"] if found and found["model"] == model else model
        return out


class RunResult(BaseModel):
    # completed | failed | interrupted | budget (a cap was reached) | unavailable (calls were
    # made and none reached a model: not finished, run again; sandbox/runner.py)
    status: str
    wall_time_s: float
    sim_time_s: float
    events: int
    llm_calls: int
    error: str | None = None
    # What makes the run's numbers suspect though it ended: nobody moved, nobody talked, no
    # call answered by the model (sandbox/runner.py `nothing_happened`).
    warnings: list[str] = Field(default_factory=list)
    # Calls that fell back to a default (no usable answer), those of them that never reached a
    # model (fault "unavailable"), the fallbacks' share of the calls, and whether that share is
    # above $SANDBOX_DEGRADED_ABOVE (default 0.5): a degraded run's numbers rest mostly on
    # canned answers. 0 / False in results written before these were recorded.
    fallbacks: int = 0
    unavailable_calls: int = 0
    fallback_fraction: float = 0.0
    degraded: bool = False
    # Checkpoints (sandbox/checkpoint.py): how many this run wrote, the instants it could not
    # write one at (and why), and the simulated second it was restored from (None: it ran
    # from the start).
    checkpoints: int = 0
    checkpoints_skipped: list[str] = Field(default_factory=list)
    restored_from: float | None = None
    # How the run was scheduled (sandbox/engine.py): ahead or lockstep, how many times calls
    # went out together (lockstep: its rounds), and the most calls in flight at once. Absent
    # from results written before residents ran ahead.
    schedule: str | None = None
    sends: int | None = None
    peak_in_flight: int | None = None

    @model_serializer(mode="wrap")
    def _without_unused_checkpoints(self, handler):
        # Written only when a run had any: the results of runs without (every single-room
        # benchmark's) read as they did before checkpoints existed.
        data = handler(self)
        for key, unused in (("checkpoints", 0), ("checkpoints_skipped", []),
                            ("restored_from", None), ("schedule", None), ("sends", None),
                            ("peak_in_flight", None)):
            if data.get(key) == unused:
                del data[key]
        return data


class RunDirectoryExists(Exception):
    pass


class EpisodeLog:
    """Appends events to a run directory as they happen."""

    def __init__(self, run_dir: Path | str, header: RunHeader, overwrite: bool = False):
        self.dir = Path(run_dir)
        if (self.dir / EVENTS).exists() and not overwrite:
            raise RunDirectoryExists(
                f"{self.dir} already holds a run; choose another --out or pass --overwrite")
        self.dir.mkdir(parents=True, exist_ok=True)
        if overwrite:
            # The score and judgments judged the old events: left in place, a viewer or
            # `sandbox log` would show them for the new run.
            for name in (EVENTS, CALLS, RESULT, PROMPTS):
                (self.dir / name).unlink(missing_ok=True)
            for path in self.dir.glob(SCORES):
                path.unlink(missing_ok=True)
            shutil.rmtree(self.dir / JUDGMENTS, ignore_errors=True)
        self.header = header
        write_atomic(self.dir / HEADER, header.model_dump_json(indent=2))
        self._fh = open_append(self.dir / EVENTS)
        self.count = 0
        self._sha = hashlib.sha256()  # of the lines written: what a checkpoint follows

    def digest(self) -> str:
        """The sha256 of every line written so far (sandbox/checkpoint.py)."""
        return self._sha.hexdigest()

    def record(self, **config: Any) -> None:
        """Add entries to the header's config while the run goes on (what a fork changed,
        known only at its fork point)."""
        self.header = self.header.model_copy(update={"config": {**self.header.config,
                                                                **config}})
        write_atomic(self.dir / HEADER, self.header.model_dump_json(indent=2))

    def carry(self, lines: list[str]) -> None:
        """Begin with these lines of another run's events (a run restored from a checkpoint:
        the events before it, as they were written)."""
        self._append(lines)

    def emit(self, event: Event) -> Event:
        self._append([event.model_dump_json() + "\n"])
        return event

    def _append(self, lines: list[str]) -> None:
        self._fh.writelines(lines)
        self._fh.flush()  # a killed run keeps every event written so far
        self.count += len(lines)
        for line in lines:
            self._sha.update(line.encode())

    def finish(self, result: RunResult) -> None:
        self.close()
        write_atomic(self.dir / RESULT, result.model_dump_json(indent=2))

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


class LogProblem(BaseModel):
    file: str
    line: int
    reason: str


@dataclass
class Run:
    """A run directory read back."""

    dir: Path
    header: RunHeader
    events: list[Event]
    calls: list[CallRecord] = field(default_factory=list)
    result: RunResult | None = None
    problems: list[LogProblem] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]


class RunFormatError(Exception):
    """The directory is not a run this version can read (missing header, unknown format)."""


def parse_event(obj: dict[str, Any]) -> Event:
    """The typed event of one decoded line; TypeError or ValidationError when it is not one."""
    if not isinstance(obj, dict):  # valid JSON such as `123` is still a bad line
        raise TypeError(f"not a JSON object (got {type(obj).__name__})")
    cls = event_type(obj.get("kind", ""))  # UnknownEvent when no module defines the kind
    return cls.model_validate(obj)


def _read_jsonl(path: Path, parse, problems: list[LogProblem]) -> list:
    """Every line of a JSON-lines file of a run parsed, a line that does not (not UTF-8, not
    JSON, NaN, not what `parse` takes) reported in `problems` and skipped; a missing file
    reads as no lines. A special file or one over the size limit is a RunFormatError: read
    through files.open_input, never opened (a FIFO would block for ever)."""
    items = []
    if not path.exists() and not path.is_symlink():
        return items
    try:
        for number, raw in input_lines(path, MAX_LOG_BYTES):
            if not raw.strip():
                continue
            try:
                items.append(parse(json_line(raw)))
            except (ValueError, TypeError) as exc:  # JSON, UTF-8 and validation errors
                cut = not raw.endswith(b"\n")
                reason = "truncated last line" if cut else f"unreadable: {_first_line(exc)}"
                problems.append(LogProblem(file=path.name, line=number, reason=reason))
    except FileFormatError as exc:
        raise RunFormatError(str(exc)) from None
    return items


def _first_line(exc: Exception) -> str:
    """What is wrong with a line, in one line: the byte, the JSON error, or the first field
    that does not validate (a `move` without its destination)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        return f"{exc.title} at {where}: {first['msg']}"
    return str(exc).splitlines()[0]


def read_header(run_dir: Path | str) -> RunHeader:
    """The run's header, or a `RunFormatError` that says what is wrong with the directory."""
    run_dir = Path(run_dir)
    path = run_dir / HEADER
    if not run_dir.is_dir():
        raise RunFormatError(f"{run_dir}: no such directory")
    if not path.exists():
        hint = " (it holds events.jsonl but no header)" if (run_dir / EVENTS).exists() else ""
        raise RunFormatError(f"{run_dir} is not a run directory: no {HEADER}{hint}")
    try:
        raw = json_line(read_text(path))
    except FileFormatError as exc:
        raise RunFormatError(str(exc)) from None
    except ValueError as exc:  # not JSON, NaN, an integer of 5,000 digits
        raise RunFormatError(f"{path}: not valid JSON ({_first_line(exc)})") from None
    if not isinstance(raw, dict):
        raise RunFormatError(f"{path}: not a run header (expected a JSON object)")
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise RunFormatError(
            f"{path}: log format version {version!r}; this sandbox reads version "
            f"{FORMAT_VERSION} (use the sandbox version that wrote it: "
            f"{raw.get('code_version', 'unknown')})")
    try:
        return RunHeader.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise RunFormatError(f"{path} at {where}: {first['msg']}") from exc


def _read_result(path: Path, problems: list[LogProblem]) -> RunResult | None:
    """result.json, or None with a problem when it is missing parts: the events still read."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        text = read_text(path)
        return RunResult.model_validate(json_line(text))
    except FileFormatError as exc:
        problems.append(LogProblem(file=path.name, line=1, reason=f"unreadable, status "
                                                                  f"unknown: {exc.reason}"))
    except json.JSONDecodeError as exc:
        problems.append(LogProblem(file=path.name, line=exc.lineno,
                                   reason=f"unreadable, status unknown: {exc.msg}"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        problems.append(LogProblem(file=path.name, line=1,
                                   reason=f"not a run result, status unknown: {where}: "
                                          f"{first['msg']}"))
    except ValueError as exc:  # NaN, an integer of 5,000 digits
        problems.append(LogProblem(file=path.name, line=1,
                                   reason=f"unreadable, status unknown: {_first_line(exc)}"))
    return None


class RunOutcome(BaseModel):
    """How a run directory ended, as far as its files tell: `state` is finished, unfinished
    (killed, result.json gone, or its events cut since), failed (an error or a spent budget),
    or missing (no directory, or a header that does not read); `reason` says why in words."""

    state: str
    reason: str = ""
    # A finished run most of whose calls fell back (RunResult.degraded): on the board, but
    # counted and named, since its numbers rest on canned answers.
    degraded: str = ""

    @property
    def finished(self) -> bool:
        return self.state == "finished"


def _whole_lines(path: Path) -> int:
    """Events written whole: a line cut by a kill (no newline) does not count."""
    if not path.is_file():
        return 0
    return sum(1 for _, line in input_lines(path) if line.endswith(b"\n") and line.strip())


def run_outcome(run_dir: Path | str) -> RunOutcome:
    """Whether a run finished, from its header, result.json and events.jsonl (not parsed: a
    finished run holds as many whole event lines as its result counts; fewer means the log was
    cut after the run ended, and what was judged of it is gone)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return RunOutcome(state="missing", reason="no run directory")
    try:
        read_header(run_dir)
    except RunFormatError as exc:
        return RunOutcome(state="missing", reason=str(exc).replace(f"{run_dir}/", ""))
    path = run_dir / RESULT
    if not path.is_file():
        return RunOutcome(state="unfinished", reason=f"no {RESULT} (killed, or removed)")
    try:
        result = RunResult.model_validate(json_line(read_text(path)))
    except (ValueError, FileFormatError):
        return RunOutcome(state="unfinished", reason=f"{RESULT} does not read")
    if result.status == "interrupted":
        return RunOutcome(state="unfinished", reason="interrupted")
    if result.status != "completed":
        return RunOutcome(state="failed",
                          reason=f"{result.status}: {result.error or 'no error given'}")
    try:
        have = _whole_lines(run_dir / EVENTS)
    except FileFormatError as exc:
        return RunOutcome(state="unfinished", reason=f"{EVENTS}: {exc.reason}")
    if have < result.events:
        return RunOutcome(state="unfinished", reason=f"{EVENTS} holds {have} of the "
                                                     f"{result.events} events its run wrote")
    degraded = ""
    if result.degraded:
        degraded = (f"{result.fallback_fraction:.0%} of its calls fell back (above "
                    "SANDBOX_DEGRADED_ABOVE)")
    return RunOutcome(state="finished", degraded=degraded)


def read_calls(run_dir: Path | str) -> tuple[list[CallRecord], list[str]]:
    """A run's call records, and what could not be read ("RUN/calls.jsonl: missing", or a line
    and why): a board counting calls names every call it could not count."""
    run_dir = Path(run_dir)
    path = run_dir / CALLS
    if not path.is_file():  # every run writes it when it starts, if only empty
        return [], [f"{run_dir.name}/{CALLS}: missing"]
    problems: list[LogProblem] = []
    calls = _read_jsonl(path, CallRecord.model_validate, problems)
    return calls, [f"{run_dir.name}/{CALLS} line {p.line}: {p.reason}" for p in problems]


def read_prompts(run_dir: Path | str) -> tuple[dict[int, PromptRecord], list[str]]:
    """A run's prompts.jsonl by call seq (what each call asked and what came back), and what
    could not be read: a run from before prompts were kept has none ("missing"). One that is
    there but cannot be read (a directory, a FIFO, a device, over the size bound) is a
    RunFormatError saying what it is, as events.jsonl is."""
    run_dir = Path(run_dir)
    path = run_dir / PROMPTS
    if not path.exists() and not path.is_symlink():
        return {}, [f"{run_dir.name}/{PROMPTS}: missing (a run from before prompts were kept)"]
    problems: list[LogProblem] = []
    records = _read_jsonl(path, PromptRecord.model_validate, problems)
    return ({r.seq: r for r in records},
            [f"{run_dir.name}/{PROMPTS} line {p.line}: {p.reason}" for p in problems])


def load_run(run_dir: Path | str, strict: bool = False) -> Run:
    """A run directory read back: a line that does not read is in `Run.problems`, skipped (a
    killed run keeps everything up to the kill; `sandbox log` shows what is there).
    `strict`, for whatever makes a result of the log (a score, a judgment): the run must read
    whole, or a RunFormatError names the file and the line -- events.jsonl missing, a line of
    it or of result.json that does not read, fewer events than result.json counts. A run
    that wrote no events and says so (result.json: 0 events) reads: nothing happened."""
    run_dir = Path(run_dir)
    header = read_header(run_dir)
    problems: list[LogProblem] = []
    events = _read_jsonl(run_dir / EVENTS, parse_event, problems)
    result = _read_result(run_dir / RESULT, problems)
    if strict:
        _refuse_partial(run_dir, events, result, problems)
    calls = _read_jsonl(run_dir / CALLS, CallRecord.model_validate, problems)
    return Run(dir=run_dir, header=header, events=events, calls=calls, result=result,
               problems=problems)


def _refuse_partial(run_dir: Path, events: list[Event], result: RunResult | None,
                    problems: list[LogProblem]) -> None:
    """RunFormatError unless the events and result read whole (`load_run(strict=True)`)."""
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more line(s))" if len(problems) > 1 else ""
        raise RunFormatError(f"{run_dir / first.file} at line {first.line}: {first.reason}"
                             f"{more}; a result is made of a whole log only")
    if not (run_dir / EVENTS).is_file():
        raise RunFormatError(f"{run_dir / EVENTS}: no such file; nothing to read a result from")
    if result is not None and len(events) < result.events:
        raise RunFormatError(f"{run_dir / EVENTS}: holds {len(events)} of the {result.events} "
                             f"events its run wrote ({RESULT}); cut or replaced since")
    if result is None and not events:
        raise RunFormatError(f"{run_dir / EVENTS}: empty, and no {RESULT}: the run wrote "
                             "nothing (killed at its start?)")
