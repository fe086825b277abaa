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

On the embedded model it then models what the calls would cost answered one after another,
at best batched (the floor), and batched as sequences of one llama.cpp batch with each pass's
measured cost. `--from-run DIR` does only that, for a run kept with `--keep`:

    .venv/bin/python bench/stss.py --from-run runs/stss/local_smollm2-135m
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.log import RunFormatError, load_run  # noqa: E402
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

        def timed_llm(_run_dir, _performer):
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
    if model.startswith("local/"):
        speed = run.header.backend.get("weights_speed", {}).get(run.header.backend.get("weights"))
        print(asked_together(run.calls, speed, measured_passes(model)[1]))
    if keep:
        print(f"run directory: {keep}")


def asked_together(calls, speed: dict | None, pass_s: dict[int, float] | None) -> str:
    """How the calls came: alone, or at one simulated instant with others (the run loop sends
    those side by side), and what answering them could cost, modelled from `speed` (the
    weights' prompt tokens a second and ms a generated token) and `pass_s` (a decode pass of k
    rows, measured on this CPU: bench/llm_batching.py). Latencies would not do: calls beside
    each other share the threads and wait for a lane."""
    if not speed:
        return "asked together: the run header records no measured speed of its weights"
    groups: dict[float, list] = {}
    for call in calls:
        groups.setdefault(call.t, []).append(call)
    alone = [g[0] for g in groups.values() if len(g) == 1]
    together = [g for g in groups.values() if len(g) > 1]
    cost = modelled(list(groups.values()), speed, pass_s)
    sizes = Counter(min(len(g), 8) for g in together)
    tag = Counter(c.tag for c in alone).most_common(1)[0][0] if alone else "-"
    lines = [
        f"asked alone: {len(alone)} calls (most {tag}); together: "
        f"{sum(map(len, together))} calls at {len(together)} instants (groups of " +
        ", ".join(f"{k}{'+' if k == 8 else ''} {n}" for k, n in sorted(sizes.items())) + ")",
        f"modelled from {speed['prompt_tokens_per_s']:.0f} prompt tokens/s and "
        f"{speed['ms_per_token']:.2f} ms a generated token: every call one after another "
        f"{cost['sequential']:.0f} s (prompts and dictated text {cost['prompts']:.0f} s, "
        f"generation {cost['generation']:.0f} s); the floor for any batching "
        f"{cost['floor']:.0f} s (alone {cost['alone']:.0f} + each group's longest "
        f"{cost['longest']:.0f})"]
    if pass_s:
        lines.append(
            "a decode pass of k rows: " + ", ".join(
                f"{k} {s * 1000:.1f} ms" for k, s in sorted(pass_s.items())) +
            f". Calls asked together as sequences of one batch (prompts at the prompt rate, "
            f"each generated token a row of its group's pass): every pass padded to 2 rows, "
            f"so no answer depends on what else is asked, {cost['padded']:.0f} s; lone rows "
            f"allowed (answers then depend on their group) {cost['lone']:.0f} s")
    return "\n".join(lines)


def modelled(groups: list[list], speed: dict, pass_s: dict[int, float] | None) -> dict:
    """Seconds the calls would take, by way of answering them (asked_together). `groups`: the
    calls asked at each simulated instant. Prompt evaluation is compute-bound, so it costs
    the same whether or not prompts share a pass; a generated token is a row of a pass, and a
    pass of k rows costs `pass_s[k]` (between measured sizes, the line between them; beyond
    the largest, its last step's slope)."""

    def prompt_s(call) -> float:  # tokens evaluated: the prompt not reused, the dictated text
        return (call.prompt_tokens - call.prefix_tokens + call.dictated_tokens) / \
            speed["prompt_tokens_per_s"]

    def generated(call) -> int:
        return max(0, call.completion_tokens - call.dictated_tokens)

    def own_s(call) -> float:
        return prompt_s(call) + generated(call) * speed["ms_per_token"] / 1000

    calls = [c for g in groups for c in g]
    alone = [g[0] for g in groups if len(g) == 1]
    out = {"prompts": sum(map(prompt_s, calls)),
           "generation": sum(map(generated, calls)) * speed["ms_per_token"] / 1000,
           "sequential": sum(map(own_s, calls)), "alone": sum(map(own_s, alone)),
           "longest": sum(max(map(own_s, g)) for g in groups if len(g) > 1)}
    out["floor"] = out["alone"] + out["longest"]
    if pass_s:
        for name, least in (("padded", 2), ("lone", 1)):
            passes = 0.0
            for group in groups:
                lengths = [generated(c) for c in group]
                for step in range(max(lengths, default=0)):
                    rows = sum(1 for n in lengths if n > step)
                    passes += pass_cost(pass_s, max(rows, least))
            out[name] = out["prompts"] + passes
    return out


def pass_cost(pass_s: dict[int, float], rows: int) -> float:
    """A pass of `rows` rows, from the measured sizes (see modelled)."""
    sizes = sorted(pass_s)
    if rows in pass_s:
        return pass_s[rows]
    for low, high in zip(sizes, sizes[1:], strict=False):
        if low < rows < high:
            return pass_s[low] + (pass_s[high] - pass_s[low]) * (rows - low) / (high - low)
    if rows < sizes[0]:
        return pass_s[sizes[0]]
    low, high = sizes[-2:] if len(sizes) > 1 else (sizes[0], sizes[0])
    slope = (pass_s[high] - pass_s[low]) / (high - low) if high > low else pass_s[high] / high
    return pass_s[high] + slope * (rows - high)


def measured_passes(model: str) -> tuple[dict, dict[int, float]]:
    """This CPU's speeds for `model`'s weights (the backend's record) and its pass costs."""
    from sandbox.llm.local import LocalBackend

    # bench/ is not a package, and on sys.path its agents.py would hide ours: by its path.
    spec = importlib.util.spec_from_file_location(
        "llm_batching", Path(__file__).resolve().parent / "llm_batching.py")
    batching = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(batching)
    pass_seconds, template_tokens = batching.pass_seconds, batching.template_tokens
    backend = LocalBackend(model.split("/", 1)[1], lanes=1, prefix_mb=0)
    llama = backend.contexts[0]
    speed = backend.weights_record.get("weights_speed", {}).get(backend.weights)
    return speed, pass_seconds(llama._model.model, backend.threads, template_tokens(llama))


def from_run(directory: Path) -> int:
    """The model of asked_together for a kept run's calls, with this CPU's speeds."""
    try:
        run = load_run(directory)
    except RunFormatError as exc:
        print(f"--from-run: {exc}", file=sys.stderr)
        return 2
    model = run.calls[0].model if run.calls else ""
    if not model.startswith("local/"):
        print(f"{directory}: not a run of an embedded model ({model or 'no calls'})",
              file=sys.stderr)
        return 2
    speed, passes = measured_passes(model)
    print(f"== {directory}: {len(run.calls)} calls of {model}, modelled with this CPU's "
          f"speeds (weights {run.header.backend.get('weights')} in the run)")
    print(asked_together(run.calls, speed, passes))
    return 0


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
    p.add_argument("--from-run", type=Path, metavar="DIR",
                   help="run no episode: model how a kept run's calls (--keep) would be "
                        "answered one after another and batched, with this CPU's speeds")
    args = p.parse_args()
    if args.from_run:
        return from_run(args.from_run)
    if args.seed < 0:  # numpy's generators refuse it, after the world has loaded
        p.error(f"--seed {args.seed}: must be 0 or more")
    for model in args.models.split(","):
        bench(model.strip(), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
