"""Benchmark of one STSS episode: wall time, LLM calls and tokens, and the engine's share of the
wall time (everything that is not waiting for the model: simulation, memory, embeddings, log).

    .venv/bin/python bench/stss.py                                   # both models, full window
    .venv/bin/python bench/stss.py --models scripted/town            # the scripted one only
    .venv/bin/python bench/stss.py --models local/smollm2-135m --same-day --start 16:00

The episode is one built-in template (default: public_spring_tasting, seed 0) with 12 residents
(the performer and 11 background residents) and the performer on ga_tdp; the default window is
the full one (06:00 the day before the event until its end). LLM time is the wall time during
which at least one call was in flight (the embedded model's lanes answer calls side by side, so
their latencies overlap); the engine's share is the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.log import load_run  # noqa: E402
from tasks.stss import EpisodeWindow, template_path  # noqa: E402
from tasks.stss.plugin.suite import run_task  # noqa: E402
from worlds import load_world  # noqa: E402


class BusyClock:
    """The model, timed: the wall time during which at least one call is in flight."""

    def __init__(self, inner):
        self.inner = inner
        self.busy_s = 0.0
        self._in_flight = 0
        self._since = 0.0
        self._lock = threading.Lock()

    def __getattr__(self, name):  # model_id, max_concurrency, ...: the model's
        return getattr(self.inner, name)

    def complete(self, request):
        with self._lock:
            if self._in_flight == 0:
                self._since = time.perf_counter()
            self._in_flight += 1
        try:
            return self.inner.complete(request)
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._in_flight == 0:
                    self.busy_s += time.perf_counter() - self._since


def bench(model: str, args) -> None:
    world = load_world("town")
    window = EpisodeWindow(same_day=args.same_day, start=args.start, until=args.until)
    # --keep: the run directory stays (replay it, `sandbox log` it); otherwise a temporary one
    keep = args.keep / model.replace("/", "_") if args.keep else None
    with contextlib.nullcontext(str(keep)) if keep else tempfile.TemporaryDirectory() as tmp:
        out = keep or Path(tmp) / "run"
        t0 = time.perf_counter()
        clocks = []

        def timed_llm(_):
            clocks.append(BusyClock(make_llm(LLMSettings(model=model, cache_mode="off"))))
            return clocks[-1]

        result, score = run_task(
            template_path(args.template), world, timed_llm,
            architecture="ga_tdp", seed=args.seed, out=out, window=window,
            background=args.residents - 1, embedder=args.embedder, overwrite=True)
        wall = time.perf_counter() - t0
        run = load_run(out)
    llm_s = sum(clock.busy_s for clock in clocks)
    latency_s = sum(c.latency_s for c in run.calls)
    tokens_in = sum(c.prompt_tokens for c in run.calls)
    tokens_out = sum(c.completion_tokens for c in run.calls)
    engine = max(0.0, wall - llm_s)
    sim_h = result.sim_time_s / 3600
    print(f"\n== {model}: {args.template} seed {args.seed}, {args.residents} residents, "
          f"{run.header.start_time:%Y-%m-%d %H:%M} + {sim_h:.1f} sim hours, "
          f"embedder {args.embedder or 'minilm'}")
    print(f"wall {wall:.1f} s ({sim_h / (wall / 3600):.0f} sim hours per wall hour), "
          f"{result.events} events, status {result.status}")
    print(f"LLM calls {len(run.calls)}, tokens in {tokens_in}, out {tokens_out}, "
          f"LLM time {llm_s:.1f} s ({wall / max(len(run.calls), 1):.2f} s/call by the wall "
          f"clock; the calls' latencies add up to {latency_s:.1f} s)")
    print(f"engine time {engine:.1f} s = {engine / wall:.1%} of wall time")
    by_module = Counter(c.tag.split(".")[0] for c in run.calls)
    print("calls by module: " + ", ".join(f"{m} {n}" for m, n in sorted(by_module.items())))
    print(f"score {score.score:g} ({score.rule})")
    if not model.startswith("scripted/"):
        print(asked_together(run))
    if keep:
        print(f"run directory: {keep}")


def asked_together(run) -> str:
    """How the calls came: alone, or at one simulated instant with others (the run loop sends
    those side by side), and the wall time no way of answering calls together could go under.
    Calls asked alone wait for each other whatever the backend does; a group cannot finish
    before its longest call. A call's own time is modelled from the speeds the run header
    records for its weights (prompt tokens evaluated and dictated at the prompt rate, the
    others generated one pass each): latencies would not do, since calls beside each other
    share the threads and wait for a lane."""
    speed = run.header.backend.get("weights_speed", {}).get(run.header.backend.get("weights"))
    if not speed:
        return "asked together: the run header records no measured speed of its weights"

    def own_s(call) -> float:
        batched = call.prompt_tokens - call.prefix_tokens + call.dictated_tokens
        return (batched / speed["prompt_tokens_per_s"] +
                (call.completion_tokens - call.dictated_tokens) * speed["ms_per_token"] / 1000)

    groups: dict[float, list] = {}
    for call in run.calls:
        groups.setdefault(call.t, []).append(call)
    alone = [g[0] for g in groups.values() if len(g) == 1]
    together = [g for g in groups.values() if len(g) > 1]
    alone_s = sum(map(own_s, alone))
    longest_s = sum(max(map(own_s, g)) for g in together)
    all_s = sum(map(own_s, run.calls))
    sizes = Counter(min(len(g), 8) for g in together)
    tag = Counter(c.tag for c in alone).most_common(1)[0][0] if alone else "-"
    return (f"asked alone: {len(alone)} calls (most {tag}); together: "
            f"{sum(map(len, together))} calls at {len(together)} instants (groups of " +
            ", ".join(f"{k}{'+' if k == 8 else ''} {n}" for k, n in sorted(sizes.items())) +
            f"). Modelled from the header's speeds ({speed['prompt_tokens_per_s']:.0f} prompt "
            f"tokens/s, {speed['ms_per_token']:.2f} ms a token): every call one after another "
            f"{all_s:.0f} s; the floor for any batching {alone_s + longest_s:.0f} s (alone "
            f"{alone_s:.0f} + each group's longest {longest_s:.0f})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="scripted/town,local/smollm2-135m",
                   help="comma-separated backend/model list [default: both]")
    p.add_argument("--template", default="public_spring_tasting", help="built-in template name")
    p.add_argument("--seed", type=int, default=0, help="episode seed, 0 or more [default: 0]")
    p.add_argument("--residents", type=int, default=12,
                   help="performer + background residents [default: 12]")
    p.add_argument("--same-day", action="store_true", help="start on the event day")
    p.add_argument("--start", default="06:00", help="clock time the episode starts")
    p.add_argument("--until", help="clock time it stops [default: end of the task window]")
    p.add_argument("--embedder", choices=["minilm", "hashing"],
                   help="memory embedder [default: the architecture's, minilm]")
    p.add_argument("--keep", type=Path, metavar="DIR",
                   help="keep each model's run directory in DIR/<backend>_<model> "
                        "(overwritten) instead of a temporary one")
    args = p.parse_args()
    if args.seed < 0:  # numpy's generators refuse it, after the world has loaded
        p.error(f"--seed {args.seed}: must be 0 or more")
    for model in args.models.split(","):
        bench(model.strip(), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
