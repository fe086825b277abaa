"""Fingerprints of the four single-room benchmarks on their scripted sets, and of towns (an
STSS episode, a generated town's morning): every file of each
benchmark directory and each board, hashed, compared with the fingerprints taken before a
refactor (tests/data/fingerprints.json). A change to the code that moves where things live
(issue 34's plug-in redesign) must leave them byte-identical; a change that means to alter a
run or a board takes them again on purpose:

    SANDBOX_TAKE_FINGERPRINTS=1 .venv/bin/pytest -q tests/test_fingerprints.py

Normalised before hashing, because they differ between two runs of the same code: the moments
files were written (`created_at`), call latencies and wall times, the code's version, and the
paths of the temporary directory and of the checkout (a manifest names our own item set's file).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS
from tasks.stss_lang import save_set
from tasks.stss_lang.harvest import harvest
from tasks.stss_lang.scripted import stss_lang_backend

from .tasks.test_stss_lang_harvest import golden

FINGERPRINTS = Path(__file__).parent / "data" / "fingerprints.json"
REPO = Path(__file__).resolve().parents[1]  # our own item sets are recorded by their path
TAKE = os.environ.get("SANDBOX_TAKE_FINGERPRINTS") == "1"
VOLATILE = {"created_at", "latency_s", "wall_time_s", "started_at", "code_version",
            "schedule", "sends", "peak_in_flight",  # these three: how a town's calls went out
            "command_dir"}  # where the command was typed
UNORDERED = {"llm_cache.jsonl"}  # appended as answers arrive


def _normalised(value):
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


def _content(path: Path, base: Path) -> bytes:
    raw = path.read_bytes()
    suffix = path.suffix
    if suffix == ".gz":  # a checkpoint: what it holds (it names the checkout's files)
        raw, suffix = gzip.decompress(raw), Path(path.stem).suffix
    text = raw.decode("utf-8", errors="strict") if suffix in (".json", ".jsonl", ".md") \
        else None
    if text is None:
        return raw
    text = text.replace(str(base), "<dir>").replace(str(REPO), "<repo>")  # a clone elsewhere
    if suffix == ".json":
        return json.dumps(_normalised(json.loads(text)), sort_keys=True).encode()
    if suffix == ".jsonl":
        rows = [json.dumps(_normalised(json.loads(line)), sort_keys=True)
                for line in text.splitlines() if line.strip()]
        return "\n".join(sorted(rows) if path.name in UNORDERED else rows).encode()
    return text.encode()


def fingerprint(directory: Path, base: Path) -> dict[str, str]:
    """Relative path -> sha256 of the normalised content, for every file under `directory`."""
    return {str(p.relative_to(base)): hashlib.sha256(_content(p, base)).hexdigest()[:16]
            for p in sorted(directory.rglob("*")) if p.is_file()}


def board(command: str, dirs: list[Path], base: Path, capsys) -> str:
    capsys.readouterr()
    target = base / f"{command}.json"
    assert main([command, *map(str, dirs), "--json", str(target)]) == 0
    printed = capsys.readouterr().out.replace(str(base), "<dir>")
    (base / f"{command}.md").write_text(printed, encoding="utf-8")
    return printed


def pingpong(base: Path, capsys) -> list[Path]:
    out = base / "pingpong"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--judge",
                 "scripted/pingpong-strict", "--every", "8", "--out", str(out)]) == 0
    board("pingpong-board", [out], base, capsys)
    return [out]


def simulbench(base: Path, capsys) -> list[Path]:
    s = "scripted/simulbench"
    collect, scripts = base / "sb-collect", base / "scripts.jsonl"
    assert main(["simulbench-collect", "--user", s, "--simulator", s, "--judge", s,
                 "--every", "20", "--out", str(collect)]) == 0
    assert main(["simulbench-extract", str(collect), "--out", str(scripts)]) == 0
    outs = []
    for model in ("simulbench", "simulbench-weak"):
        out = base / f"sb-{model}"
        assert main(["simulbench", "--scripts", str(scripts), "--simulator", f"scripted/{model}",
                     "--judge", s, "--out", str(out)]) == 0
        outs.append(out)
    board("simulbench-board", outs, base, capsys)
    return [collect, *outs]


def refutebench(base: Path, capsys) -> list[Path]:
    r = "scripted/refutebench"
    outs = [base / "rb-transient", base / "rb-persistent"]
    assert main(["refutebench", "--model", r, "--refuter", r, "--judge", r, "--every", "9",
                 "--out", str(outs[0])]) == 0
    assert main(["refutebench", "--model", r, "--refuter", r, "--judge", r, "--every", "9",
                 "--setting", "persistent", "--distractors", "0,3", "--out",
                 str(outs[1])]) == 0
    board("refutebench-board", outs, base, capsys)
    return outs


def stss_lang(base: Path, capsys) -> list[Path]:
    # Harvested from a path relative to the working directory: the set records where its runs
    # were, and its digest (in the manifest) must not depend on the temporary directory.
    scenarios = save_set(harvest([golden(Path("fp") / "golden-run")]), base / "set.json")
    out = base / "lang"
    assert main(["stss-lang", str(scenarios), "--arch", "ga", "--arch", "ga_tdp", "--model",
                 "scripted/stss-lang", "--judge", "scripted/stss-lang", "--out", str(out)]) == 0
    board("stss-lang-board", [out / "ga", out / "ga_tdp"], base, capsys)
    return [out]


def town(base: Path, capsys) -> list[Path]:
    """Towns: one STSS episode of its full window and a generated town of 25 for 3 hours, so a
    change to the run loop (which step goes when, what is written in which order) shows."""
    stss, day = base / "stss", base / "town"
    assert main(["run", "public_spring_tasting", "--arch", "ga_tdp", "--model", "scripted/town",
                 "--embedder", "hashing", "--quiet", "--out", str(stss)]) == 0
    assert main(["world", "generate", "--residents", "25", "--out", str(base / "w")]) == 0
    capsys.readouterr()
    # relative to the test's directory: the checkpoints' digest of the run's settings holds it
    world = next((base / "w").glob("*.yaml")).relative_to(base.parent)
    assert main(["run", "town_day", "--world", str(world), "--residents", "25", "--hours", "3",
                 "--model",
                 "scripted/town", "--embedder", "hashing", "--quiet", "--out", str(day)]) == 0
    return [stss, day]


BENCHMARKS = {"pingpong": pingpong, "simulbench": simulbench, "refutebench": refutebench,
              "stss_lang": stss_lang, "town": town}


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_runs_and_boards_match_their_fingerprints(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(SCRIPTS, "stss-lang", stss_lang_backend)
    monkeypatch.chdir(tmp_path)
    base = tmp_path / "fp"
    base.mkdir()
    dirs = BENCHMARKS[name](base, capsys)
    found: dict[str, str] = {}
    for directory in dirs:
        found.update(fingerprint(directory, base))
    found.update({p.name: hashlib.sha256(_content(p, base)).hexdigest()[:16]
                  for p in sorted(base.glob("*-board.*"))})
    saved = json.loads(FINGERPRINTS.read_text(encoding="utf-8")) if FINGERPRINTS.is_file() \
        else {}
    if TAKE:
        saved[name] = found
        FINGERPRINTS.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")
        pytest.skip(f"fingerprints of {name} taken ({len(found)} files)")
    assert name in saved, "no fingerprints: take them with SANDBOX_TAKE_FINGERPRINTS=1"
    expected = saved[name]
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    changed = sorted(k for k in set(found) & set(expected) if found[k] != expected[k])
    assert (missing, extra, changed) == ([], [], []), \
        f"{name}: missing {missing[:5]}, new {extra[:5]}, changed {changed[:5]}"
