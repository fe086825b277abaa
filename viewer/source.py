"""Reading a run directory for the viewer: the header once, then events as they are appended.

`sandbox.log.load_run` reads a finished run in one go. The viewer also follows runs that are
still being written, so it keeps a byte offset into events.jsonl and parses only complete lines
(a line still being written is held back until its newline arrives). Bad lines are reported,
with their line numbers, and skipped: everything valid is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sandbox import log
from sandbox.events import Event, event_type
from sandbox.files import MAX_LOG_BYTES, FileFormatError, json_line, open_input, read_text
from sandbox.log import EVENTS, RESULT, LogProblem, RunHeader, RunResult, parse_event


class ReplayError(Exception):
    """The directory cannot be replayed (not a run, unknown format, world not found)."""


def read_header(run_dir: Path) -> RunHeader:
    """The run's header, or a `ReplayError` that says what is wrong with the directory."""
    try:
        return log.read_header(run_dir)
    except log.RunFormatError as exc:
        raise ReplayError(str(exc)) from exc


_KIND_PREFIX = b'{"kind":"'


def _fast_parse(raw: bytes) -> Event | None:
    """The writer puts `kind` first: pick the class from it and let pydantic parse the JSON
    directly (a fifth faster on big logs). None when the line is not in that shape; the
    caller then goes the general way (`sandbox.log.parse_event`), which reports errors."""
    if not raw.startswith(_KIND_PREFIX):
        return None
    end = raw.find(b'"', len(_KIND_PREFIX))
    # an unknown kind (after the plug-ins were tried) parses as UnknownEvent here as it would
    # in parse_event
    cls = event_type(raw[len(_KIND_PREFIX):end].decode("utf-8", "replace"))
    try:
        return cls.model_validate_json(raw)
    except ValueError:
        return None


@dataclass
class RunSource:
    """An open run directory; `read_new()` returns the events appended since the last call."""

    dir: Path
    header: RunHeader
    problems: list[LogProblem] = field(default_factory=list)
    result: RunResult | None = None
    lines_read: int = 0
    _offset: int = 0
    _pending: bytes = b""
    _idle_reads: int = 0  # reads that found nothing new while a partial line was pending

    # A writer appends whole lines in one write; a partial line that stays unchanged over
    # this many polls belongs to a killed run, not to a write in progress.
    STALE_READS = 4

    @classmethod
    def open(cls, run_dir: Path | str) -> RunSource:
        run_dir = Path(run_dir)
        return cls(dir=run_dir, header=read_header(run_dir))

    @property
    def events_path(self) -> Path:
        return self.dir / EVENTS

    @property
    def finished(self) -> bool:
        """True once result.json exists: nothing more will be appended."""
        return self.result is not None

    def restarted(self) -> bool:
        """The events file shrank (the run was started again with --overwrite)."""
        try:
            return self.events_path.stat().st_size < self._offset
        except FileNotFoundError:
            return self._offset > 0

    def read_new(self, final: bool = False) -> list[Event]:
        """Parse the complete lines appended since the last call.

        A last line without its newline is held back while the run may still be writing it;
        once the run has finished (result.json exists) or `final` is set, it is parsed if it
        can be and otherwise reported as a truncated last line. So is a partial line that no
        writer has touched for `STALE_READS` reads (a run killed without result.json).
        """
        self._check_result()  # before reading: a finished run's file is then complete
        data = b""
        if self.events_path.exists():
            try:  # guarded: a FIFO given as events.jsonl is refused, not read for ever
                with open_input(self.events_path, MAX_LOG_BYTES) as fh:
                    fh.seek(self._offset)
                    data = fh.read(MAX_LOG_BYTES)
            except FileFormatError as exc:
                raise ReplayError(str(exc)) from None
        self._offset += len(data)
        self._idle_reads = 0 if data else self._idle_reads + 1
        stale = self._idle_reads >= self.STALE_READS
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()  # the part after the last newline: not complete yet
        events = [e for e in map(self._parse_line, lines) if e is not None]
        if self._pending.strip() and (final or self.finished or stale):
            last = self._parse_line(self._pending, last=True)
            self._pending = b""
            if last is not None:
                events.append(last)
        return events

    def _parse_line(self, raw: bytes, last: bool = False) -> Event | None:
        self.lines_read += 1
        if not raw.strip():
            return None
        try:
            return _fast_parse(raw) or parse_event(json_line(raw))
        except (ValueError, TypeError, AttributeError) as exc:  # JSON, UTF-8, NaN, fields
            if last:
                reason = "truncated last line"
            else:
                reason = "unreadable: " + (str(exc).splitlines()[0] or type(exc).__name__)
            self.problems.append(LogProblem(file=EVENTS, line=self.lines_read, reason=reason))
            return None

    def _check_result(self) -> None:
        path = self.dir / RESULT
        if self.result is None and path.exists():
            try:
                self.result = RunResult.model_validate(json_line(read_text(path)))
            except (ValueError, FileFormatError):
                self.problems.append(LogProblem(file=RESULT, line=1, reason="unreadable"))
                # Still finished: the writer wrote its last file, however badly.
                self.result = RunResult(status="unknown", wall_time_s=0, sim_time_s=0,
                                        events=0, llm_calls=0)
