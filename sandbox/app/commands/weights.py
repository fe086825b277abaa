"""`sandbox weights`: the embedded model's weight formats as timed on this machine, the one
"auto" computes with, and `--retime` to time them again on purpose (sandbox/llm/weights.py).

The timing is kept for good once taken (answers depend on the format), so one taken while other
jobs shared the cores stays until a user redoes it: this command shows its load beside its
figures, and redoes it when asked.
"""

from __future__ import annotations

from sandbox.app.environment import MOST_THREADS
from sandbox.app.options import Count, Model
from sandbox.errors import UserError


def register(sub) -> None:
    p = sub.add_parser(
        "weights", help="the embedded model's weight formats timed on this CPU; --retime "
                        "times them again",
        description="Show how fast each weight format of the embedded model computed on this "
                    "machine (prompt tokens a second, milliseconds a generated token, a typical "
                    "call), when it was timed and the machine's load then, and the format runs "
                    "compute with (SANDBOX_LLM_WEIGHTS=auto, the default). The timing happens "
                    "once, at the first run, and is kept; --retime times the formats again and "
                    "keeps the new figures: do it when the machine is quiet (the load is read "
                    "and said). Runs after a re-timing may compute with another format, so "
                    "their answers may differ from earlier runs'.",
        epilog="example: sandbox weights --retime --threads 2")
    p.add_argument("--model", type=Model(), default="smollm2-135m",
                   help="the embedded model [default: %(default)s]")
    p.add_argument("--threads", type=Count(1, MOST_THREADS), metavar="N",
                   help="the llama.cpp threads the timing is for [default: "
                        "$SANDBOX_LLM_THREADS, else every core]")
    p.add_argument("--retime", action="store_true",
                   help="time the formats again now (about 20 s) and keep the new figures")
    p.set_defaults(func=main)


def main(args) -> int:
    from sandbox.llm import LLMConfigError
    from sandbox.llm.local import EMBEDDED_MODELS, embedded_model_path, llm_threads
    from sandbox.llm.weights import choose_weights, kept_measurements

    if args.model not in EMBEDDED_MODELS:
        raise UserError(f"--model {args.model!r}: weights are timed for the embedded models "
                        f"only: {', '.join(sorted(EMBEDDED_MODELS))}")
    if args.threads is not None and args.threads < 1:
        raise UserError("--threads must be 1 or more")
    try:
        threads = args.threads or llm_threads()
        shipped = embedded_model_path(args.model)
        before = kept_measurements(shipped, threads)
        if args.retime or before is None:  # (the timing says the load when it is busy)
            choose_weights(shipped, "auto", threads, retime=args.retime)
        kept = kept_measurements(shipped, threads)
    except LLMConfigError as exc:
        raise UserError(str(exc)) from exc
    _show(kept, before if args.retime else None)
    return 0


def _show(kept: dict, before: dict | None) -> None:
    from sandbox.llm.weights import Speed

    speeds = {kind: Speed(**values) for kind, values in kept["measured"].items()}
    chosen = min(speeds, key=lambda k: speeds[k].call_s)
    when = (f"timed {kept['timed_at']}, load {kept['load_before']} before and "
            f"{kept['load_after']} after, on {kept['cores']} cores" if "timed_at" in kept else
            "when timed and the load then not kept (an earlier version timed it)")
    print(f"{kept['cpu']}\nllama.cpp {kept['llama_cpp']}, {kept['threads']} threads; {when}")
    print(f"a typical call: {kept['call']['prompt_tokens']} prompt tokens, "
          f"{kept['call']['answer_tokens']} answer tokens")
    print(f"{'format':8} {'prompt tok/s':>12} {'ms/token':>9} {'call s':>7}"
          + (f" {'was':>7}" if before else ""))
    old = {kind: Speed(**values) for kind, values in (before or {}).get("measured", {}).items()}
    for kind, speed in sorted(speeds.items(), key=lambda item: item[1].call_s):
        was = f" {old[kind].call_s:7.3f}" if kind in old else (" " * 8 if before else "")
        mark = "  <- chosen" if kind == chosen else ""
        print(f"{kind:8} {speed.prompt_tokens_per_s:12.1f} {speed.ms_per_token:9.2f} "
              f"{speed.call_s:7.3f}{was}{mark}")
    if before:
        was = min(old, key=lambda k: old[k].call_s) if old else None
        print(f"chosen before: {was}; now: {chosen}" + (
            " (runs from now on compute with it: their answers differ from earlier runs')"
            if was != chosen else ""))
