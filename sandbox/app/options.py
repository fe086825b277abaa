"""The types of the command line's options: each value checked, with its bounds, at parsing.

    p.add_argument("--residents", type=Count(1, 10_000), ...)
    p.add_argument("--name", type=Name("world name"), ...)
    p.add_argument("--prompts", type=InputDir(), ...)

Every option of every command that takes a value declares one of these (or `choices`): the
value is refused at parsing, exit 2, in one line naming the option (argparse adds
"argument --residents:"), the value and what is allowed, before any file is opened or model
loaded. Each type says its `kind` (count, name, input-file, ...): tests/fuzz/test_parser_walk.py
reads it to try the hostile values of that kind on every option, and reports an option that
declares none.

The upper bounds are far above anything a real run asks for (each says why) and below what
would exhaust memory or never end: a user who hits one has typed a wrong number.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import tempfile
import unicodedata
from pathlib import Path

from sandbox.pathnames import component_problem

__all__ = [
    "PERSON", "SEED", "Address", "Assignment", "CacheFile", "Clock", "Count", "Duration",
    "InputDir", "InputFile", "InputPath", "Label", "Model", "Moment", "Name", "Number",
    "OutputDir", "OutputFile", "Person", "PlotFile", "Reference", "Seeds", "Size", "Text", "Url",
    "Words",
    "declared", "kind_of",
]


def _fail(text: str, why: str, limit: int = 60) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{_shown(text, limit)!r}: {why}")


PATH_SHOWN = 400  # a path is quoted whole (up to this): it names the file


def _shown(text: str, limit: int = 60) -> str:
    """`text` as an error quotes it: control characters escaped, a long value cut."""
    safe = "".join(repr(c)[1:-1] if unicodedata.category(c)[0] == "C" else c for c in text)
    return safe if len(safe) <= limit else safe[:limit] + "..."


class OptionType:
    """An argparse type that says what kind of value it reads."""

    kind = "value"

    def __call__(self, text: str):
        raise NotImplementedError

    def __repr__(self) -> str:  # argparse names the type in some of its own messages
        return self.kind


def kind_of(action: argparse.Action) -> str | None:
    """The declared kind of an option's value: its type's kind, `choice` for a closed set,
    `flag` for one that takes none; None when it declares nothing."""
    if action.nargs == 0:
        return "flag"
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return "choice"
    return getattr(action.type, "kind", None)


def declared(kind: str):
    """Give a plain function an option kind (for a type with a check of its own, --whisper)."""
    def mark(func):
        func.kind = kind
        return func
    return mark


# --- numbers -------------------------------------------------------------------------------

class Count(OptionType):
    """A whole number from `least` to `most` (both included)."""

    kind = "count"

    def __init__(self, least: int, most: int):
        self.least, self.most = least, most

    def __call__(self, text: str) -> int:
        spec = text.strip().replace("_", "")
        # int() of a 5,000-digit string is slow and of no use: no bound here is that long.
        if not re.fullmatch(r"[+-]?\d{1,20}", spec):
            raise _fail(text, f"give a whole number from {self.least:,} to {self.most:,}")
        value = int(spec)
        if not self.least <= value <= self.most:
            raise _fail(text, f"out of range; give a whole number from {self.least:,} to "
                              f"{self.most:,}")
        return value


# Seeds: numpy takes any non-negative integer, but a header, a folder name (s<seed>) and a
# board show it; 2**32 - 1 is the range of every generator's classic seed and of the seeds
# people write (dates, times in seconds).
SEED_MAX = 2**32 - 1
SEED = Count(0, SEED_MAX)
# A suite of more than 10,000 seeds is more than a year of episodes on one machine.
SEEDS_MAX = 10_000


class Seeds(OptionType):
    """`0..2` -> [0, 1, 2]; `0,3,5` -> [0, 3, 5]; `4` -> [4]; each a SEED, at most
    SEEDS_MAX of them (a range is checked before it is made)."""

    kind = "seeds"

    def __call__(self, text: str) -> list[int]:
        form = "seeds are N, A..B or A,B,C"
        if ".." in text:
            parts = [p.strip() for p in text.split("..", 1)]
            if not all(re.fullmatch(r"\d{1,30}", p) for p in parts):
                raise _fail(text, f"{form}, each from 0 to {SEED_MAX:,}")
            lo, hi = (int(p) for p in parts)
            if hi < lo:
                raise _fail(text, f"{hi} is below {lo}; {form}")
            if hi - lo + 1 > SEEDS_MAX:  # checked before the list is made
                raise _fail(text, f"{hi - lo + 1:,} seeds; at most {SEEDS_MAX:,}")
            if hi > SEED_MAX:
                raise _fail(text, f"seeds are from 0 to {SEED_MAX:,}")
            return list(range(lo, hi + 1))
        words = [p for p in text.split(",") if p.strip()]
        if not words:
            raise _fail(text, f"no seeds; {form}")
        if len(words) > SEEDS_MAX:
            raise _fail(text, f"{len(words):,} seeds; at most {SEEDS_MAX:,}")
        seeds = []
        for word in words:
            try:
                seeds.append(SEED(word))
            except argparse.ArgumentTypeError:
                raise _fail(text, f"{form}, each from 0 to {SEED_MAX:,}") from None
        return seeds


class Number(OptionType):
    """A finite number in [least, most] (`above`: more than `least`, not equal)."""

    kind = "number"

    def __init__(self, least: float, most: float, *, above: bool = False):
        self.least, self.most, self.above = least, most, above

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise _fail(text, "not a number") from None
        low_ok = value > self.least if self.above else value >= self.least
        if value != value or not low_ok or value > self.most:
            allowed = (f"more than {self.least:g} and at most {self.most:g}" if self.above
                       else f"from {self.least:g} to {self.most:g}")
            raise _fail(text, f"out of range; give a number {allowed}")
        return value


class Size(OptionType):
    """WIDTHxHEIGHT in pixels, each from `least` to `most`."""

    kind = "size"

    def __init__(self, least: tuple[int, int], most: int):
        self.least, self.most = least, most

    def __call__(self, text: str) -> tuple[int, int]:
        found = re.fullmatch(r"\s*(\d{1,6})\s*[xX]\s*(\d{1,6})\s*", text)
        (lw, lh), most = self.least, self.most
        allowed = f"WIDTHxHEIGHT from {lw}x{lh} to {most}x{most}"
        if not found:
            raise _fail(text, f"write {allowed}, e.g. 1280x800")
        w, h = int(found[1]), int(found[2])
        if not (lw <= w <= most and lh <= h <= most):
            raise _fail(text, f"out of range; {allowed}")
        return w, h


# The bounds every command shares. Far above any real run; below what would exhaust memory.
TEMPERATURE = Number(0, 5)  # endpoints take 0-2; more than 5 is noise from any model
TOP_P = Number(0, 1, above=True)
MAX_TOKENS = Count(1, 1_000_000)  # no model's context holds more
CALLS = Count(1, 1_000_000_000)  # a billion calls: decades at one call a second
TOKENS = Count(1, 10**13)
CONCURRENCY = Count(1, 1_024)  # calls in flight: no endpoint serves more from one client
JOBS = Count(1, 1_024)  # episodes at once in one process
WORKERS = Count(1, 4_096)  # Ray worker processes: a large cluster
RETRIES = Count(0, 100)
EVERY = Count(1, 1_000_000)  # one of K items: no item set is a million long
# Bootstrap resamples: 1,000 is the papers' choice; 100,000 of a 1,000-item board is
# 10^8 draws (seconds), 10^10 would not fit in memory.
RESAMPLES = Count(1, 100_000)
HOURS = 24 * 366.0  # no episode is longer than a year of simulated time


# --- time ----------------------------------------------------------------------------------

class Duration(OptionType):
    """A simulated duration (30s, 10m, 1h30m) of at most `most_hours`; `off` words give 0."""

    kind = "duration"

    def __init__(self, most_hours: float, *, least_s: float = 0.0, off: tuple[str, ...] = ()):
        self.most_hours, self.least_s, self.off = most_hours, least_s, off

    def __call__(self, text: str) -> float:
        from sandbox.simtime import TimeSpecError, parse_duration

        if text.strip().lower() in self.off:
            return 0.0
        try:
            seconds = parse_duration(text)
        except TimeSpecError as exc:
            raise argparse.ArgumentTypeError(_shown(str(exc), 200)) from None
        if seconds < self.least_s or seconds > self.most_hours * 3600:
            raise _fail(text, f"give a duration from {self.least_s:g} s to "
                              f"{self.most_hours:g} h")
        return seconds


# A moment of a run is checked against the run by the command (after its end is an error);
# here only its form, and a year as the outer bound of any offset.
_YEAR_S = 366 * 24 * 3600.0


class Moment(OptionType):
    """A moment of a run (HH:MM, 'day N HH:MM', 'YYYY-MM-DD HH:MM', +1h30m, seconds): its
    form checked here, its place in the run by the command. Kept as the text."""

    kind = "moment"

    def __init__(self, *, end: bool = False):
        self.end = end  # `end` (the run's last event) is a moment too

    def __call__(self, text: str) -> str:
        from datetime import datetime

        from sandbox.simtime import MOMENTS, TimeSpecError, parse_time

        if self.end and text.strip().lower() == "end":
            return text
        if not text.strip() or any(unicodedata.category(c)[0] == "C" for c in text):
            raise _fail(text, f"not a time; write {MOMENTS}")
        try:
            seconds = parse_time(text, datetime(2000, 1, 1))
        except (TimeSpecError, OverflowError) as exc:
            raise argparse.ArgumentTypeError(_shown(str(exc), 300)) from None
        if text.strip().startswith("+") and seconds > _YEAR_S:
            raise _fail(text, "more than a year after the start; no run is that long")
        return text


class Clock(OptionType):
    """A time of day, HH:MM (kept as the text)."""

    kind = "clock"

    def __call__(self, text: str) -> str:
        found = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip())
        if not found or int(found[1]) > 23 or int(found[2]) > 59:
            raise _fail(text, "not a time of day; write HH:MM, 00:00 to 23:59")
        return text.strip()


# --- names and text ------------------------------------------------------------------------

class Name(OptionType):
    """A name that becomes a path component (sandbox.pathnames): one safe name."""

    kind = "name"

    def __init__(self, what: str = "name", *, forbid: str = ""):
        self.what, self.forbid = what, forbid  # `forbid`: characters with a meaning there

    def __call__(self, text: str) -> str:
        problem = component_problem(text)
        if not problem and any(c in text for c in self.forbid):
            problem = f"holds {' or '.join(repr(c) for c in self.forbid)}"
        if problem:
            raise _fail(text, f"a {self.what} {problem}; give a single name")
        return text


def _printable_line(text: str, what: str, most: int) -> str:
    if not text.strip():
        raise _fail(text, f"{what} cannot be blank")
    if any(unicodedata.category(c)[0] == "C" for c in text):
        raise _fail(text, f"{what} cannot hold control characters (escapes, line breaks)")
    if len(text) > most:
        raise _fail(text, f"{what} of {len(text):,} characters; at most {most:,}")
    return text


class Label(OptionType):
    """A name shown on boards and in tables (not a path): one printable line."""

    kind = "label"

    def __init__(self, what: str = "a label", most: int = 200):
        self.what, self.most = what, most

    def __call__(self, text: str) -> str:
        return _printable_line(text, self.what, self.most)


class Person(OptionType):
    """A person's name (a resident, an agent to follow or interview), matched against the
    run's: any text but a blank one (names are data, issue 19: escaped where printed)."""

    kind = "person"
    most = 10_000  # the longest name a file of ours holds is far shorter

    def __call__(self, text: str) -> str:
        if not text.strip():
            raise _fail(text, "a name cannot be blank")
        if len(text) > self.most:
            raise _fail(text, f"a name of {len(text):,} characters; at most {self.most:,}")
        return text


PERSON = Person()
# Residents of one episode: a generated town holds at most 10,000 (sandbox world generate).
RESIDENTS = Count(1, 10_000)


class Text(OptionType):
    """Free text given to a model or shown (a task, a question, a title): one printable
    line of at most `most` characters (a prompt is bounded by the model's context anyway)."""

    kind = "text"

    def __init__(self, what: str = "the text", most: int = 20_000):
        self.what, self.most = what, most

    def __call__(self, text: str) -> str:
        return _printable_line(text, self.what, self.most)


class Words(OptionType):
    """A word or a comma-separated list of words (template names, globs, event kinds, task
    families), each printable, no spaces needed."""

    kind = "words"

    def __init__(self, what: str = "a name", most: int = 2_000):
        self.what, self.most = what, most

    def __call__(self, text: str) -> str:
        _printable_line(text, self.what, self.most)
        if not any(w.strip() for w in text.split(",")):
            raise _fail(text, f"no {self.what}")
        return text


class Model(OptionType):
    """A model: an alias of the models file or backend/model. Its form here (one word);
    whether it exists, when the command resolves it."""

    kind = "model"

    def __call__(self, text: str) -> str:
        _printable_line(text, "a model", 300)
        if any(c.isspace() for c in text):
            raise _fail(text, "a model is one word: an alias or backend/model")
        return text


class Url(OptionType):
    """An http(s) endpoint."""

    kind = "url"

    def __call__(self, text: str) -> str:
        _printable_line(text, "an endpoint", 2_000)
        if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", text.strip()):
            raise _fail(text, "not an endpoint; write http://HOST:PORT/v1 or https://...")
        return text.strip()


class Address(OptionType):
    """HOST:PORT or ray://HOST:PORT."""

    kind = "address"

    def __call__(self, text: str) -> str:
        found = re.fullmatch(r"(ray://)?[A-Za-z0-9_.\-\[\]:]+:(\d{1,5})", text.strip())
        if not found or not 0 < int(found[2]) < 65536:
            raise _fail(text, "not an address; write HOST:PORT or ray://HOST:PORT")
        return text.strip()


class Assignment(OptionType):
    """NAME=VALUE (an agent and its architecture), the value checked by `value`."""

    kind = "assignment"

    def __init__(self, value=None):
        self.value = value

    def __call__(self, text: str):
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise _fail(text, "write NAME=VALUE")
        _printable_line(name, "a name", 200)
        return self.value(text) if self.value else text


# --- paths ---------------------------------------------------------------------------------

def _special(path: Path) -> str | None:
    """Why `path` (which exists) is a special file: a FIFO blocks whoever opens it."""
    mode = path.stat().st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe), which would block"
    if stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device or socket, not a file"
    return None


def _existing(text: str, what: str) -> Path:
    if not text.strip():
        raise _fail(text, f"an empty path; give {what}")
    if any(unicodedata.category(c)[0] == "C" for c in text):
        raise _fail(text, "a path with control characters", PATH_SHOWN)
    path = Path(text)
    try:
        if not path.exists():
            raise _fail(text, f"no such {what.removeprefix('a ')}", PATH_SHOWN)
        special = _special(path)
    except OSError as exc:
        raise _fail(text, exc.strerror or str(exc), PATH_SHOWN) from None
    if special:
        raise _fail(text, special, PATH_SHOWN)
    return path


class InputFile(OptionType):
    """A file the command reads: it exists, is a regular file (a FIFO would block the read)."""

    kind = "input-file"

    def __call__(self, text: str) -> Path:
        path = _existing(text, "a file")
        if not path.is_file():
            raise _fail(text, "is a directory, not a file", PATH_SHOWN)
        return path


class InputDir(OptionType):
    """A directory the command reads (a run, a suite, a prompts directory)."""

    kind = "input-dir"

    def __call__(self, text: str) -> Path:
        path = _existing(text, "a directory")
        if not path.is_dir():
            raise _fail(text, "is a file, not a directory", PATH_SHOWN)
        return path


class InputPath(OptionType):
    """A file or a directory the command reads."""

    kind = "input-path"

    def __call__(self, text: str) -> Path:
        return _existing(text, "a file or a directory")


def names_file(text: str) -> bool:
    """Whether a reference names a file rather than a built-in: it has a path separator, a
    data file's suffix, or is `.` or `..`."""
    return ("/" in text or "\\" in text or text.endswith((".yaml", ".yml", ".json"))
            or text in (".", ".."))


class Reference(OptionType):
    """A built-in name (a world, a template, an architecture, a scenario) or the path of a
    file (`names_file`): a name is kept as the text for the command to look up; a path must
    be a regular file."""

    kind = "reference"

    def __init__(self, what: str = "a name or a file"):
        self.what = what

    def __call__(self, text: str) -> str:
        _printable_line(text, self.what, 1_000)
        if names_file(text):
            InputFile()(text)
        return text


def _writable_dir(directory: Path) -> str | None:
    """Why the directory `directory` (made with its missing parents if need be) cannot be
    written in, or None."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, so nothing can be made inside it"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot write in {existing} (read-only filesystem or no permission)"
    try:  # some filesystems (/proc, a full disk) pass the access test and refuse a file
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        return f"cannot write in {existing}: {exc.strerror}"
    return None


def _output_path(text: str) -> Path:
    if not text.strip():  # Path('') is the current directory: never meant
        raise _fail(text, "an empty path; give where to write")
    if any(unicodedata.category(c)[0] == "C" for c in text):
        raise _fail(text, "a path with control characters", PATH_SHOWN)
    path = Path(text)
    try:
        if path.exists():
            special = _special(path)
            if special:
                raise _fail(text, special, PATH_SHOWN)
    except OSError as exc:
        raise _fail(text, exc.strerror or str(exc), PATH_SHOWN) from None
    return path


class OutputDir(OptionType):
    """A directory a command writes into: checked before any work starts (a file, a special
    file, read-only filesystem, no permission), so nothing is half-made. Whether it may be
    written (another command's results, files we did not write) is the claim's rule
    (sandbox.outdirs), when the command claims it."""

    kind = "output-dir"

    def __call__(self, text: str) -> Path:
        path = _output_path(text)
        if path.exists() and not path.is_dir():
            raise _fail(text, "is a file, not a directory", PATH_SHOWN)
        problem = _writable_dir(path)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return path


class OutputFile(OptionType):
    """A file a command writes (a board's JSON, a plot, a script file)."""

    kind = "output-file"

    def __call__(self, text: str) -> Path:
        path = _output_path(text)
        if path.is_dir():
            raise _fail(text, "is a directory, not a file", PATH_SHOWN)
        problem = _writable_dir(path.parent)
        if path.exists() and not problem and not os.access(path, os.W_OK):
            problem = f"cannot write {path} (read-only filesystem or no permission)"
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return path


class PlotFile(OutputFile):
    """A plot a command draws (matplotlib, headless): its suffix names the format, so a suffix
    matplotlib cannot write (`--plot d.txt`) is refused here, not as a traceback after the
    board is computed. No suffix is a PNG."""

    # What matplotlib's Agg canvas writes with the packages we install (Pillow for jpg, tif,
    # webp); avif, pgf, raw and rgba left out: not images a person opens.
    FORMATS = ("png", "svg", "svgz", "pdf", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp",
               "gif")

    def __call__(self, text: str) -> Path:
        path = super().__call__(text)
        suffix = path.suffix.lstrip(".").lower()
        if suffix and suffix not in self.FORMATS:
            raise _fail(text, f"not a plot format (.{suffix}); write "
                              f"{', '.join('.' + f for f in self.FORMATS[:6])}...",
                        PATH_SHOWN)
        return path


class CacheFile(OutputFile):
    """A file read when it exists and written (an answer cache): a regular file or none."""

    kind = "cache-file"
