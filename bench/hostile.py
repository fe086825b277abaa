"""Hostile but honest inputs, each through the real `sandbox` command in its own process: the
tally of how many end as they must -- exit 2, one line on stderr naming what is wrong, no
traceback, nothing written.

    .venv/bin/python bench/hostile.py            # every case, the tally, the failures
    .venv/bin/python bench/hostile.py --list     # the cases only

The cases: every file of the bad-input corpus (tests/data/bad/<kind>/, through the command that
reads that kind), option values out of range, outputs that cannot be written, an --out that
holds another benchmark's results. Each runs in a fresh scratch directory; "nothing written"
compares the directory's files before and after. Then the parser walk (tests/fuzz/
parser_walk.py, in a process of its own): every option of every command given the hostile
values of the kind its type declares, and its tally.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"
NOPE = "scripted/nope"

# kind (a folder of tests/data/bad) -> the arguments that read such a file ({f}) into {out}:
# the corpus's own table, which its test reads too (a run directory is reported, not refused)
READERS = {kind: argv for kind, argv in
           json.loads((BAD / "readers.json").read_text(encoding="utf-8")).items()
           if kind not in ("_", "run_dir")}

PP = ["pingpong", "--player", "scripted/pingpong", "--interrogator", "scripted/pingpong",
      "--judge", "scripted/pingpong"]
RUN = ["run", "single_room", "--model", "scripted/default"]
# name -> arguments; {file} is an existing file, {pp} a finished PingPong directory
OPTIONS = {
    "--resamples 0": ["pingpong-board", "{pp}", "--resamples", "0"],
    "--resamples -5": ["pingpong-board", "{pp}", "--resamples", "-5"],
    "--max-concurrency 0": [*RUN, "--max-concurrency", "0", "--out", "{out}"],
    "--max-concurrency -1": [*RUN, "--max-concurrency", "-1", "--out", "{out}"],
    "--max-calls -3": [*RUN, "--max-calls", "-3", "--out", "{out}"],
    "--max-calls 0": [*RUN, "--max-calls", "0", "--out", "{out}"],
    "--seed -1": [*RUN, "--seed", "-1", "--out", "{out}"],
    "--jobs 0": ["stss", "--model", "scripted/town", "--jobs", "0", "--out", "{out}"],
    "--every 0": [*PP, "--every", "0", "--out", "{out}"],
    "--player-top-p 2": [*PP, "--player-top-p", "2", "--out", "{out}"],
    "--player-temperature -1": [*PP, "--player-temperature", "-1", "--out", "{out}"],
    "--sec-per-step 0": ["score", "{pp}", "--sec-per-step", "0"],
    "--label with escape codes": [*PP, "--label", "evil\x1b[31mred", "--out", "{out}"],
    "--subset bogus": ["simulbench", "--scripts", "{file}", "--subset", "bogus", "--simulator",
                       NOPE, "--judge", NOPE, "--out", "{out}"],
    "--out is a file (run)": [*RUN, "--out", "{file}"],
    "--out is a file (stss)": ["stss", "--model", "scripted/town", "--out", "{file}"],
    "--out is a file (pingpong)": [*PP, "--out", "{file}"],
    "--out is a file (simulbench)": ["simulbench", "--simulator", NOPE, "--out", "{file}"],
    "--out is a file (refutebench)": ["refutebench", "--model", NOPE, "--out", "{file}"],
    "--out is a file (stss-lang)": ["stss-lang", "--model", NOPE, "--out", "{file}"],
    "--out inside a file (stss-harvest)": ["stss-harvest", "{pp}", "--out", "{file}/set.json"],
    "--json is a directory": ["pingpong-board", "{pp}", "--json", "{pp}"],
    "--export is a file": ["replay", "{pp}", "--export", "{file}"],
    "another benchmark's --out": ["refutebench", "--model", "scripted/refutebench",
                                  "--refuter", "scripted/refutebench", "--judge",
                                  "scripted/refutebench", "--out", "{pp}"],
    "a run into a benchmark's --out": [*RUN, "--out", "{pp}", "--overwrite"],
    "a directory as --scripts": ["simulbench", "--scripts", "{pp}", "--simulator", NOPE,
                                 "--judge", NOPE, "--out", "{out}"],
    # An output never replaces an input, nor a file we did not write (sandbox/outdirs.py).
    "--json over the benchmark's manifest": ["pingpong-board", "{pp}", "--json",
                                             "{pp}/pingpong.json"],
    "--export is the run": ["replay", "{run}", "--export", "{run}"],
    "--export into the run": ["replay", "{run}", "--export", "{run}/frames"],
    "--out ''": [*RUN, "--out", ""],
    "--overwrite into the user's own files": [*RUN, "--out", "{mine}", "--overwrite"],
    "a run into the user's own files": [*RUN, "--out", "{mine}"],
    "rerun --out into the user's own files": ["rerun", "{run}", "--out", "{mine}"],
    "rerun --out inside the run": ["rerun", "{run}", "--out", "{run}/again"],
    "interviewing a single-room run": ["interview-set", "{run}", "--judge", "scripted/default",
                                       "--out", "{out}"],
    "--executor ray without Ray": ["stss", "--model", "scripted/town", "--executor", "ray",
                                   "--out", "{out}"],
}


@dataclass
class Case:
    name: str
    argv: list[str]
    given: Path | None = None  # a corpus file, copied into the scratch directory


@dataclass
class Outcome:
    case: Case
    code: int
    lines: list[str]
    traceback: bool
    written: list[str]
    seconds: float

    @property
    def clean(self) -> bool:
        return self.code == 2 and len(self.lines) == 1 and not self.traceback \
            and not self.written

    def why(self) -> str:
        said = self.lines[-1] if self.lines else "(nothing on stderr)"
        problems = []
        if self.code != 2:
            problems.append(f"exit {self.code}")
        if self.traceback:
            problems.append("a traceback")
        elif len(self.lines) != 1:
            problems.append(f"{len(self.lines)} lines on stderr")
        if self.written:
            problems.append(f"wrote {', '.join(self.written[:3])}")
        return f"{'; '.join(problems)}: {said[:160]}"


def cases() -> list[Case]:
    found = []
    for kind, argv in READERS.items():
        for path in sorted((BAD / kind).iterdir()) if (BAD / kind).is_dir() else []:
            found.append(Case(f"{kind}/{path.name}", argv, path))
    found += [Case(name, argv) for name, argv in OPTIONS.items()]
    return found


def files(directory: Path) -> set[str]:
    """Every path below `directory`, a file's with a digest of its bytes: a file changed in
    place counts as written too (a board over a manifest adds no name)."""
    return {str(p.relative_to(directory)) + (f" (changed: {_digest(p)})" if p.is_file() else "")
            for p in directory.rglob("*")}


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def prepare(scratch: Path) -> dict[str, str]:
    """A finished PingPong directory, a finished single-room run, a directory of a user's own files
    and a plain file, shared by the option cases (made once,
    never written by a case: each case's 'nothing written' check covers them)."""
    pp = scratch / "pp"
    done = subprocess.run([sys.executable, "-m", "sandbox.app.cli", *PP, "--every", "16",
                           "--out", str(pp)], capture_output=True, text=True, cwd=scratch)
    if done.returncode != 0:
        raise SystemExit(f"could not make the PingPong directory: {done.stderr[-500:]}")
    (scratch / "a_file.txt").write_text("a plain file, not a directory\n", encoding="utf-8")
    run = scratch / "run"  # a finished single-room run, and a directory of a user's own files
    done = subprocess.run([sys.executable, "-m", "sandbox.app.cli", *RUN, "--quiet", "--out",
                           str(run)], capture_output=True, text=True, cwd=scratch)
    if done.returncode != 0:
        raise SystemExit(f"could not make the run: {done.stderr[-500:]}")
    (scratch / "mine").mkdir()
    (scratch / "mine" / "notes.txt").write_text("the user's own notes\n", encoding="utf-8")
    return {"pp": str(pp), "file": str(scratch / "a_file.txt"), "run": str(run),
            "mine": str(scratch / "mine")}


def run(case: Case, scratch: Path, shared: dict[str, str]) -> Outcome:
    work = Path(tempfile.mkdtemp(dir=scratch, prefix="case-"))
    values = dict(shared, out=str(work / "out"))
    if case.given is not None:
        given = work / case.given.name
        (shutil.copytree if case.given.is_dir() else shutil.copy)(case.given, given)
        values["f"] = str(given)
    argv = [a.format(**values) for a in case.argv]
    before = files(scratch)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sandbox.app.cli", *argv], capture_output=True,
                          text=True, cwd=work, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"
                                                    ":/bin", "SDL_VIDEODRIVER": "dummy",
                                                    "HOME": str(work)})
    seconds = time.perf_counter() - started
    written = sorted(files(scratch) - before)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return Outcome(case, done.returncode, lines, "Traceback" in done.stderr, written, seconds)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true", help="list the cases and stop")
    p.add_argument("--show", action="store_true", help="print each refusal's line too")
    p.add_argument("--no-walk", action="store_true", help="skip the parser walk")
    args = p.parse_args(argv)
    todo = cases()
    if args.list:
        for case in todo:
            print(case.name)
        return 0
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        scratch = Path(tmp)
        shared = prepare(scratch)
        started = time.perf_counter()
        outcomes = []
        for case in todo:
            outcome = run(case, scratch, shared)
            outcomes.append(outcome)
            mark = "ok  " if outcome.clean else "FAIL"
            print(f"{mark} {case.name} ({outcome.seconds:.1f} s)"
                  + ("" if outcome.clean else f" -- {outcome.why()}"), flush=True)
            if args.show and outcome.lines:
                print(f"     {outcome.lines[-1][:200]}")
        wall = time.perf_counter() - started
    clean = sum(o.clean for o in outcomes)
    walked = 0 if args.no_walk else parser_walk()
    print(f"\n{clean} of {len(outcomes)} bad inputs: exit 2, one line, no traceback, nothing "
          f"written ({wall:.0f} s)")
    for o in outcomes:
        if not o.clean:
            print(f"- {o.case.name}: {o.why()}")
    return 0 if clean == len(outcomes) and walked == 0 else 1


def parser_walk() -> int:
    """Run the parser walk and print its failures and tally; its exit code."""
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "parser_walk.py")],
                          capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    print(done.stdout.rstrip() or done.stderr[-2000:], flush=True)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
