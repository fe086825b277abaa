"""The parser walk: every option of every `sandbox` command (the plug-ins' included), given the
hostile values of the kind its type declares (sandbox/app/options.py), through the real
`main()` in process.

    .venv/bin/python tests/fuzz/parser_walk.py          # the tally and every failure
    .venv/bin/python tests/fuzz/parser_walk.py --show   # each refusal's line too

Each case is one command line: the command's required arguments (harmless values, every model
`scripted/nope`, so nothing heavy can start), then the option with one hostile value. It must
end as a user's mistake ends: exit 2, one line on stderr, no traceback, nothing written in the
scratch directory, every input byte-identical after. A value the type can refuse (a count out
of range, a FIFO, '', a name with a '/') must be refused at parsing, by a line naming the
option; a value only the command can judge ('../..' as a run directory or an output, +300h of
a run) must be refused by the command. An option that declares no kind is a failure too: the
walk would not know what to try.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import signal
import stat
import sys
import tempfile
import time
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

PARSE, COMMAND = "parse", "command"  # who must refuse the value
CASE_SECONDS = 60  # a case that runs longer hangs (a FIFO read, an unbounded loop)
HUGE_FILE = 2**28  # a file the snapshot does not read through


@dataclass
class Case:
    command: str
    option: str  # as argparse names it: --seeds, or a positional's metavar
    value: str
    argv: list[str]
    by: str  # PARSE or COMMAND

    @property
    def name(self) -> str:
        return f"{self.command} {self.option} {self.value!r}"


@dataclass
class Outcome:
    case: Case
    code: int | str
    lines: list[str]
    traceback: bool
    changed: list[str]
    seconds: float

    @property
    def clean(self) -> bool:
        return not self.problems()

    def problems(self) -> list[str]:
        found = []
        if self.code != 2:
            found.append(f"exit {self.code}")
        if self.traceback:
            found.append("a traceback")
        elif len(self.lines) != 1:
            found.append(f"{len(self.lines)} lines on stderr")
        if self.changed:
            found.append(f"changed {', '.join(self.changed[:3])}")
        if self.case.by == PARSE and self.code == 2 and self.lines and \
                f"argument {self.case.option}" not in self.lines[-1]:
            found.append("not refused at parsing")
        return found

    def why(self) -> str:
        said = self.lines[-1] if self.lines else "(nothing on stderr)"
        return f"{'; '.join(self.problems())}: {said[:200]}"


class Scratch:
    """The fixtures every case may name (made once; a case that changes one fails): a run,
    a plain file, an empty directory, a FIFO. Cases run in `work`, two levels down, so that
    '../..' is a directory of the user's (it holds `deep/`), not the scratch root."""

    def __init__(self, root: Path):
        self.root = root
        self.work = root / "deep" / "er" / "work"
        self.work.mkdir(parents=True)
        (root / "home").mkdir()
        self.file = root / "a_file.txt"
        self.file.write_text("a plain file\n", encoding="utf-8")
        self.dir = root / "a_dir"
        self.dir.mkdir()
        self.fifo = root / "a_fifo"
        os.mkfifo(self.fifo)
        self.run = root / "run"

    def make_run(self, main) -> None:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
            code = main(["run", "single_room", "--model", "scripted/default", "--out",
                         str(self.run)])
        if code != 0:
            raise SystemExit(f"could not make the fixture run: {err.getvalue()[-500:]}")

    def snapshot(self) -> dict[str, str]:
        """Every path under the root and a digest of each file's bytes (a FIFO by name;
        anything else, a directory or a dangling link, "dir"). Taken after each of some 1,900
        cases: os.walk, at half the cost of Path.rglob, and like it not into linked directories)."""
        seen = {}
        for folder, dirs, files in os.walk(self.root):
            relative = Path(folder).relative_to(self.root)
            for name in dirs:
                seen[str(relative / name)] = "dir"
            for name in files:
                try:
                    found = os.stat(os.path.join(folder, name))
                    mode = found.st_mode
                except OSError:  # a link to nothing
                    mode = 0
                if stat.S_ISFIFO(mode):
                    kind = "fifo"
                elif stat.S_ISREG(mode) and found.st_size > HUGE_FILE:
                    # a sparse file over a bound (the file walk's): its size and time tell
                    kind = f"{found.st_size}:{found.st_mtime_ns}"
                elif stat.S_ISREG(mode):
                    with open(os.path.join(folder, name), "rb") as fh:
                        kind = hashlib.sha256(fh.read()).hexdigest()
                else:
                    kind = "dir"
                seen[str(relative / name)] = kind
        return seen


def hostile_values(kind: str, action: argparse.Action, s: Scratch) -> list[tuple[str, str]]:
    """(value, who must refuse it) for an option of `kind`."""
    t = action.type
    missing = str(s.root / "no_such_thing")
    if kind == "count":
        values = [str(t.least - 1), "-1", str(t.most + 1), "1" + "0" * 30, "1.5", "x", ""]
        return [(v, PARSE) for v in dict.fromkeys(values)]
    if kind == "number":
        return [(v, PARSE) for v in ("nan", "inf", "-1", repr(t.most * 10 + 1), "x", "")]
    if kind == "seeds":
        return [(v, PARSE) for v in ("0..100000000000", "-1", "5..2", "4294967296", "x", "")]
    if kind == "size":
        return [(v, PARSE) for v in ("100000x100000", "0x0", "12", "x", "")]
    if kind == "duration":
        return [(v, PARSE) for v in ("-1h", "100000h", "x", "")]
    if kind == "moment":
        return [(v, PARSE) for v in ("x", "25:99", "+-1h", "", "\x1b[31m")] + \
            [("+300h", COMMAND)]
    if kind == "clock":
        return [(v, PARSE) for v in ("25:00", "x", "")]
    if kind == "name":
        return [(v, PARSE) for v in ("", "../..", "a/b", "..", "\x1b[31mred", "x" * 300)]
    if kind in ("label", "text", "words", "whisper"):
        most = getattr(t, "most", 20_000)
        return [(v, PARSE) for v in ("", " ", "\x1b[31mred", "line\nbreak", "x" * (most + 1))]
    if kind == "person":
        return [(v, PARSE) for v in ("", " ", "x" * (t.most + 1))]
    if kind == "model":
        return [(v, PARSE) for v in ("", "two words", "\x1b[31mred")]
    if kind == "url":
        return [(v, PARSE) for v in ("", "ftp://x", "nope")]
    if kind == "address":
        return [(v, PARSE) for v in ("", "nope", "host:99999")]
    if kind == "assignment":
        return [(v, PARSE) for v in ("", "x", "=ga", "a=")]
    if kind == "human-ui":
        return [(v, PARSE) for v in ("", "nope", "script:", "script:" + missing,
                                     "script:" + str(s.fifo), "script:" + str(s.dir))]
    if kind == "choice":
        return [("no-such-choice", PARSE)]
    if kind == "input-file":
        return [(v, PARSE) for v in (missing, str(s.dir), str(s.fifo), "", "../..")]
    if kind == "input-dir":
        return [(v, PARSE) for v in (missing, str(s.file), str(s.fifo), "")] + \
            [("../..", COMMAND)]
    if kind == "input-path":
        return [(v, PARSE) for v in (missing, str(s.fifo), "")] + [("../..", COMMAND)]
    if kind == "reference":
        return [(v, PARSE) for v in (missing + ".yaml", str(s.fifo), "", "../..", str(s.dir))]
    if kind == "output-dir":
        return [(v, PARSE) for v in ("", str(s.file), str(s.fifo))] + [("../..", COMMAND)]
    if kind in ("output-file", "cache-file", "plot-file"):
        formats = [str(s.root / "plot.txt")] if kind == "plot-file" else []
        return [(v, PARSE) for v in ("", str(s.dir), str(s.fifo), "../..",
                                     str(s.file) + "/x", *formats)]
    return []


def good_value(action: argparse.Action, kind: str, s: Scratch) -> str:
    """A harmless value for a required argument (only the option under test is hostile)."""
    if kind == "reference":
        return "ga" if "arch" in action.dest else "single_room"
    return {"input-dir": str(s.run), "input-path": str(s.run), "input-file": str(s.file),
            "output-dir": "out-new", "output-file": "out-new.json", "cache-file": "c.jsonl",
            "plot-file": "out-new.png",
            "person": "Nobody",
            "model": "scripted/nope", "moment": "+1m", "label": "Nobody", "text": "hello",
            "words": "x", "name": "x", "count": str(getattr(action.type, "least", 1))
            }.get(kind, "x")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _takes_value(action: argparse.Action) -> bool:
    return not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) \
        and action.nargs != 0


def cases(parser: argparse.ArgumentParser, s: Scratch) -> tuple[list[Case], list[str]]:
    """Every case of every command, and every option that declares no kind."""
    from sandbox.app.options import kind_of

    found, undeclared = [], []
    for command, sub in _subparsers(parser).items():
        actions = [a for a in sub._actions if _takes_value(a)]
        for action in actions:
            if kind_of(action) is None:
                undeclared.append(f"{command} {argparse._get_action_name(action)}")
        for action in actions:
            kind = kind_of(action)
            if kind is None:
                continue
            name = argparse._get_action_name(action)
            for value, by in hostile_values(kind, action, s):
                if value == action.default:
                    continue  # the default is never a mistake
                found.append(Case(command, name, value, _argv(command, sub, action, value, s),
                                  by))
    return found, undeclared


def _argv(command: str, sub, tested: argparse.Action, value: str, s: Scratch) -> list[str]:
    """The command line: the required arguments, every model option nope, the tested one
    (an option as --OPTION=VALUE, so that a value starting with '-' is still its value; the
    positionals after '--')."""
    from sandbox.app.options import kind_of

    options, positionals = [], []
    for action in sub._actions:
        if not _takes_value(action):
            continue
        kind = kind_of(action)
        if action is tested:
            if action.option_strings:
                options.append(f"{action.option_strings[0]}={value}")
            else:
                positionals.append(value)
        elif not action.option_strings:
            if action.nargs not in ("?", "*"):
                positionals.append(good_value(action, kind, s))
        elif action.required or kind == "model":
            options.append(f"{action.option_strings[0]}={good_value(action, kind, s)}")
    return [command, *options, *(["--", *positionals] if positionals else [])]


class Hang(BaseException):
    """A case ran past CASE_SECONDS (BaseException: no handler of the command catches it)."""


@contextmanager
def _deadline(seconds: int):
    def ring(*_):
        raise Hang()

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_case(case: Case, main, s: Scratch, before: dict[str, str]) -> Outcome:
    err, out = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    traceback = False
    try:
        with _deadline(CASE_SECONDS), redirect_stdout(out), redirect_stderr(err):
            code: int | str = main(case.argv)
    except Hang:
        code = "hang"
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # noqa: BLE001 - what a user would see as a traceback
        code, traceback = f"{type(exc).__name__}: {exc}", True
    seconds = time.perf_counter() - started
    after = s.snapshot()
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:  # put the scratch back, so that one case's writes do not fail the next
        _restore(s, before, after)
    text = err.getvalue()
    lines = [line for line in text.splitlines() if line.strip()]
    return Outcome(case, code, lines, traceback or "Traceback" in text, changed, seconds)


def _restore(s: Scratch, before: dict[str, str], after: dict[str, str]) -> None:
    import shutil

    for key in sorted(set(after) - set(before), key=len, reverse=True):
        path = s.root / key
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@contextmanager
def quiet_environment(s: Scratch):
    """No user's settings, keys, models file or model cache reach the walk."""
    saved = dict(os.environ)
    for key in list(os.environ):
        if key.startswith(("SANDBOX_", "OPENAI_")):
            del os.environ[key]
    os.environ.update(HOME=str(s.root / "home"), XDG_CACHE_HOME=str(s.root / "home" / "cache"),
                      XDG_CONFIG_HOME=str(s.root / "home" / "config"),
                      SDL_VIDEODRIVER="dummy", SANDBOX_LLM_THREADS="1")
    cwd = os.getcwd()
    os.chdir(s.work)
    try:
        yield
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


def walk(root: Path, only: str | None = None) -> tuple[list[Outcome], list[str]]:
    """Every case under the scratch directory `root` (or those of the command `only`): the
    outcomes, and the options that declare no kind."""
    from sandbox.app import cli

    s = Scratch(root)
    with quiet_environment(s):
        parser = cli.build_parser()
        built, cli.build_parser = cli.build_parser, lambda: parser  # built once, not per case
        try:
            s.make_run(cli.main)
            todo, undeclared = cases(parser, s)
            todo = [c for c in todo if only is None or c.command == only]
            outcomes, before = [], s.snapshot()
            for case in todo:
                outcomes.append(run_case(case, cli.main, s, before))
        finally:
            cli.build_parser = built
    return outcomes, undeclared


def tally(outcomes: list[Outcome], undeclared: list[str], wall: float) -> str:
    clean = sum(o.clean for o in outcomes)
    commands = len({o.case.command for o in outcomes})
    options = len({(o.case.command, o.case.option) for o in outcomes})
    return (f"parser walk: {clean} of {len(outcomes)} hostile option values refused cleanly "
            f"(exit 2, one line, no traceback, nothing written), {options} options of "
            f"{commands} commands; {len(undeclared)} options without a declared kind "
            f"({wall:.0f} s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--command", help="walk only this command")
    p.add_argument("--show", action="store_true", help="print every case and its line")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parser-walk-") as tmp:
        outcomes, undeclared = walk(Path(tmp), args.command)
    for o in outcomes:
        if args.show or not o.clean:
            mark = "ok  " if o.clean else "FAIL"
            detail = (o.lines[-1][:200] if o.lines else "") if o.clean else o.why()
            print(f"{mark} {o.case.name}: {detail}")
    for name in undeclared:
        print(f"FAIL {name}: declares no kind (give it a type from sandbox/app/options.py)")
    print(tally(outcomes, undeclared, time.perf_counter() - started))
    return 0 if all(o.clean for o in outcomes) and not undeclared else 1


if __name__ == "__main__":
    sys.exit(main())
