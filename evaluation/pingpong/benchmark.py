"""Run the PingPong benchmark for one player: every selected character x situation pair is a
conversation run directory, judged by every judge, with everything finished kept and skipped.

    DIR/pingpong.json        who played, against which interrogator, judged by whom, settings
    DIR/runs/<pair>/         a standard run directory (header.json, events.jsonl, calls.jsonl,
                             llm_cache.jsonl, result.json) plus judgments/<judge>.json

A directory holds one configuration: a second run into it must select and play the same pairs
the same way (`open_manifest`), or it stops before running anything; judges may be added.

Resuming: a pair whose run finished is not run again, and a judge whose judgment is saved is not
asked again; a pair whose run was cut off is run again from the start, its answers coming from
the run's cache. Adding a judge later judges the saved conversations and calls no player.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.llm import LLMSettings, make_backend, make_llm
from sandbox.log import CACHE, RESULT, RunResult, write_json_atomic
from sandbox.runner import run_episode
from tasks.pingpong import (
    INTERROGATOR_SAMPLING,
    JUDGE_SAMPLING,
    PLAYER_SAMPLING,
    PingPongScenario,
    RoleplaySet,
    Sampling,
    pair_id,
)

from .board import MANIFEST, RUNS
from .judge import JUDGMENTS, judge_conversation, load_judgments, read_conversation, save_judgment


class Manifest(BaseModel):
    """`pingpong.json`: what a benchmark directory holds. One player configuration per directory."""

    benchmark: str = "pingpong"
    label: str
    player: str
    interrogator: str
    judges: list[str]
    sampling: dict[str, Sampling]
    settings: str
    settings_digest: str = ""  # of the characters and situations; "" in older manifests
    language: str
    every: int = 1
    pairs: list[str] = Field(default_factory=list)  # the pair ids selected; [] in older ones
    seed: int = 0
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))


class BenchmarkMismatch(Exception):
    """The directory already holds another player configuration."""


class ModelPool:
    """One backend per distinct model (a local model is loaded once, whatever its roles), and
    one LLM stack per (model, cache file), so roles that share a model share its cache."""

    def __init__(self, settings: LLMSettings):
        self.settings = settings  # base_url, dialect, cache mode, ...; `model` is ignored
        self._backends: dict[str, object] = {}
        self._stacks: dict[tuple[str, Path | None], object] = {}

    def settings_for(self, model: str, cache_path: Path | None) -> LLMSettings:
        return self.settings.model_copy(update={"model": model, "cache_path": cache_path})

    def backend(self, model: str):
        if model not in self._backends:
            self._backends[model] = make_backend(self.settings_for(model, None))
        return self._backends[model]

    def llm(self, model: str, cache_path: Path | None):
        key = (model, cache_path)
        if key not in self._stacks:
            self._stacks[key] = make_llm(self.settings_for(model, cache_path),
                                         backend=self.backend(model))
        return self._stacks[key]


@dataclass
class BenchmarkReport:
    """What one `run_benchmark` call did."""

    pairs: int = 0
    conversations_run: int = 0
    conversations_skipped: int = 0
    judgments_made: int = 0
    judgments_skipped: int = 0
    judge_fallbacks: int = 0
    wall_time_s: float = 0.0


Progress = Callable[[str, str], None]  # (pair id, what is happening now)


def pair_seed(seed: int, pair: str) -> int:
    """The episode seed of a pair: fixed by the base seed and the pair, not by its position."""
    return int(hashlib.sha256(f"{seed}|{pair}".encode()).hexdigest()[:8], 16) % (2**31 - 1)


def finished(run_dir: Path) -> bool:
    path = run_dir / RESULT
    if not path.is_file():
        return False
    try:
        return RunResult.model_validate_json(path.read_text(encoding="utf-8")).status == \
            "completed"
    except ValueError:
        return False


def settings_digest(roleplay: RoleplaySet) -> str:
    """A fingerprint of what is played (characters and situations), whatever the file's path."""
    played = roleplay.model_dump(mode="json", include={"characters", "situations"})
    return hashlib.sha256(json.dumps(played, sort_keys=True).encode()).hexdigest()[:16]


def open_manifest(out: Path, wanted: Manifest) -> Manifest:
    """The directory's manifest, created or checked against what this run wants.

    What plays the conversations (player, interrogator, settings, language, sampling) must
    match: the pair directories are keyed by character and situation only, so a second
    configuration would silently mix with the first. Judges may be added, and --every may
    change: a quick run grows into a full one (finished pairs are kept) and the board counts
    the pairs the latest run selected."""
    path = out / MANIFEST
    if not path.is_file():
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, wanted.model_dump_json(indent=2))
        return wanted
    have = Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    for key in ("player", "interrogator", "language"):
        if getattr(have, key) != getattr(wanted, key):
            raise BenchmarkMismatch(
                f"{out} holds a benchmark with {key} {getattr(have, key)!r}, not "
                f"{getattr(wanted, key)!r}; use another --out for another configuration")
    # An older manifest has no digest: then the settings file's path is all there is to compare.
    same_settings = have.settings_digest == wanted.settings_digest if have.settings_digest \
        else have.settings == wanted.settings
    if not same_settings:
        what = (f"settings {have.settings!r} as they were (the characters or situations have "
                f"changed since)" if have.settings == wanted.settings
                else f"settings {have.settings!r}, not {wanted.settings!r}")
        raise BenchmarkMismatch(f"{out} holds a benchmark with {what}; use another --out for "
                                "another configuration")
    for role in ("player", "interrogator"):
        if have.sampling.get(role) != wanted.sampling[role]:
            raise BenchmarkMismatch(f"{out} holds a benchmark with other {role} sampling "
                                    f"({have.sampling.get(role)}); use another --out")
    merged = have.model_copy(update={
        "judges": have.judges + [j for j in wanted.judges if j not in have.judges],
        "label": wanted.label, "settings_digest": wanted.settings_digest,
        "every": wanted.every, "pairs": wanted.pairs,
        "sampling": {**have.sampling, "judge": wanted.sampling["judge"]}})
    write_json_atomic(path, merged.model_dump_json(indent=2))
    return merged


def run_benchmark(out: Path | str, roleplay: RoleplaySet, pool: ModelPool, *, player: str,
                  interrogator: str, judges: Sequence[str], label: str | None = None,
                  every: int = 1, seed: int = 0,
                  player_sampling: Sampling = PLAYER_SAMPLING,
                  interrogator_sampling: Sampling = INTERROGATOR_SAMPLING,
                  judge_sampling: Sampling = JUDGE_SAMPLING, rejudge: bool = False,
                  on_progress: Progress | None = None) -> BenchmarkReport:
    """Run and judge every selected pair that is not done yet."""
    out = Path(out)
    started = time.perf_counter()
    selected = [(roleplay.characters[c], roleplay.situations[s]) for c, s in roleplay.pairs(every)]
    open_manifest(out, Manifest(
        label=label or player, player=player, interrogator=interrogator, judges=list(judges),
        sampling={"player": player_sampling, "interrogator": interrogator_sampling,
                  "judge": judge_sampling},
        settings=roleplay.source, settings_digest=settings_digest(roleplay),
        language=roleplay.language, every=every, seed=seed,
        pairs=[pair_id(character, situation) for character, situation in selected]))
    report = BenchmarkReport()
    note = on_progress or (lambda pair, what: None)
    for character, situation in selected:
        pair = pair_id(character, situation)
        run_dir = out / RUNS / pair
        cache = run_dir / CACHE
        report.pairs += 1
        if finished(run_dir):
            report.conversations_skipped += 1
        else:
            note(pair, "conversation")
            shutil.rmtree(run_dir / JUDGMENTS, ignore_errors=True)  # they judged another run
            scenario = PingPongScenario(
                character, situation, language=roleplay.language,
                player_llm=pool.llm(player, cache), interrogator_llm=pool.llm(interrogator, cache),
                player_sampling=player_sampling, interrogator_sampling=interrogator_sampling)
            run_episode(scenario, pool.llm(player, cache), seed=pair_seed(seed, pair),
                        out_dir=run_dir, overwrite=True,
                        extra_header={"pair": pair, "label": label or player})
            report.conversations_run += 1
        conversation = read_conversation(run_dir)
        have = {j.judge for j in load_judgments(run_dir)}
        for judge in judges:
            judge_llm = pool.llm(judge, cache)
            if judge_llm.model_id in have and not rejudge:
                report.judgments_skipped += 1
                continue
            note(pair, f"judge {judge}")
            judgment = judge_conversation(conversation, judge_llm, judge_sampling)
            save_judgment(run_dir, judgment)
            report.judgments_made += 1
            report.judge_fallbacks += judgment.status == "fallback"
        note(pair, "done")
    report.wall_time_s = time.perf_counter() - started
    return report
