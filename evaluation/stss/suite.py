"""Running STSS episodes: one template (`run_task`), or a suite that resumes (`run_suite`).

A suite directory holds one run directory per episode, `<out>/<template>/<arch>/s<seed>`; an
episode whose result.json says completed and whose score.json exists is skipped, a completed
one without a score is only scored, anything else is run again from the start. The table goes
to `<out>/table.json` and `<out>/table.md`.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox.events import Event
from sandbox.llm import CacheMiss
from sandbox.log import RESULT, RunResult, write_json_atomic
from sandbox.runner import run_episode
from tasks.stss import EpisodeWindow, STSSEpisode, instantiate, load_template
from worlds import World

from .scoring import SCORE_FILE, STSSScore, read_score, write_score
from .table import SuiteTable, suite_table, table_markdown

MakeLLM = Callable[[Path], object]  # run directory -> the model stack for that run


@dataclass(frozen=True)
class Episode:
    """One cell of a suite: a template, the performer's architecture, a seed."""

    template: Path
    architecture: str
    seed: int
    run_dir: Path


def run_task(template: Path, world: World, make_llm: MakeLLM, *, architecture: str, seed: int,
             out: Path, window: EpisodeWindow | None = None, background: int | None = None,
             embedder: str | None = None, overwrite: bool = False,
             on_event: Callable[[Event], None] | None = None,
             max_concurrency: int | None = None) -> tuple[RunResult, STSSScore]:
    """Instantiate `template` with `seed`, run the episode into `out`, score it."""
    task = instantiate(load_template(template, world), seed, world, background=background)
    episode = STSSEpisode(task, architecture, window=window, embedder=embedder)
    result = run_episode(episode, make_llm(out), seed=seed, out_dir=out, overwrite=overwrite,
                         on_event=on_event, max_concurrency=max_concurrency)
    return result, write_score(out)


def template_files(spec: str | Path) -> list[Path]:
    """A directory (its *.yaml), a glob, or one file."""
    path = Path(spec)
    if path.is_dir():
        return sorted(path.glob("*.yaml"))
    return sorted(Path(p) for p in glob.glob(str(spec))) if any(c in str(spec) for c in "*?[") \
        else [path]


def plan_suite(templates: list[Path], architectures: list[str], seeds: list[int],
               out: Path) -> list[Episode]:
    return [Episode(t, arch, seed, out / t.stem / Path(arch).stem / f"s{seed}")
            for t in templates for arch in architectures for seed in seeds]


def finished(run_dir: Path) -> bool:
    """A completed run (its score may still be missing)."""
    path = run_dir / RESULT
    if not path.exists():
        return False
    try:
        return RunResult.model_validate_json(path.read_text(encoding="utf-8")).status \
            == "completed"
    except ValueError:
        return False


def run_suite(episodes: list[Episode], world: World, make_llm: MakeLLM, *,
              window: EpisodeWindow | None = None, background: int | None = None,
              embedder: str | None = None,
              on_done: Callable[[Episode, STSSScore | None, bool], None] | None = None,
              failures: list[tuple[Episode, str]] | None = None) -> list[STSSScore]:
    """Run (or skip, or only score) every episode; `on_done(episode, score, skipped)`.

    An episode that fails (its result.json says why) is left out of the scores, noted in
    `failures`, and run again by the next call; the others go on.
    """
    scores = []
    for episode in episodes:
        skipped = finished(episode.run_dir)
        score = None
        try:
            if skipped:
                score = read_score(episode.run_dir) \
                    if (episode.run_dir / SCORE_FILE).exists() else write_score(episode.run_dir)
            else:
                _, score = run_task(episode.template, world, make_llm,
                                    architecture=episode.architecture, seed=episode.seed,
                                    out=episode.run_dir, window=window, background=background,
                                    embedder=embedder, overwrite=True)
        except CacheMiss:
            raise  # replaying a suite with a cache that lacks an answer: stop, say which
        except Exception as exc:  # noqa: BLE001 - one broken episode must not lose the suite
            if failures is not None:
                failures.append((episode, f"{type(exc).__name__}: {exc}"))
        if score is not None:
            scores.append(score)
        if on_done is not None:
            on_done(episode, score, skipped)
    return scores


def write_table(scores: list[STSSScore], out: Path) -> SuiteTable:
    table = suite_table(scores)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "table.json", table.model_dump_json(indent=2))
    write_json_atomic(out / "table.md", table_markdown(table))
    return table
