"""Could the embedded model run on llama-cpp-py-sync's prebuilt wheel with the same answers?

llama-cpp-python (what sandbox/llm/local.py is built on) has no binary wheel on the index, so
every fresh machine compiles it; llama-cpp-py-sync ships llama.cpp's CPU libraries prebuilt,
with CFFI bindings generated from llama.h. This bench asks both the same questions through
llama.cpp's C API alone, in the same order, and compares the answers bitwise:

- for each GGUF file (the shipped Q4_1 and, when converted already, the F16 and Q8_0 files in
  the model cache, sandbox/llm/weights.py) and each thread count (--threads, 2 and 1 by default);
- for each of four chat prompts (18 to 1,275 tokens): the prompt's tokens, the sha256 of the
  last prompt token's logits, 30 greedy tokens (the logits' argmax) and 30 tokens sampled at
  temperature 0.7 with a seed (llama.cpp's own temp and dist samplers).

Each binding runs in a child process of its own: both bundle libggml-base.so.0 and the rest
under the same sonames, so in one process the second would quietly run the first's code.

    .venv/bin/python bench/llama_bindings.py --sync-python /tmp/sync-venv/bin/python
    .venv/bin/python bench/llama_bindings.py --sync-python ... --glibc-shim
    .venv/bin/python bench/llama_bindings.py --against /tmp/candidate/python --threads 1

--against: llama-cpp-python in another interpreter instead (a build of it made another way: a
candidate set-up, e.g. a script running this venv's python with the candidate's wheel unpacked
first on PYTHONPATH), and the backend's own answers too (sandbox/llm/local.py: for each prompt
greedy, at 0.7 with a seed, and schema-bound): the check that a cheaper build answers the same.

--sync-python is an interpreter with llama-cpp-py-sync installed (a scratch venv: it is not a
dependency of ours); this interpreter must have llama-cpp-python. When a binding cannot be
imported or its libraries cannot be loaded, the bench says which and why, and compares nothing.

--glibc-shim: llama-cpp-py-sync's wheel is tagged manylinux2014 (glibc 2.17) but its libraries
ask for glibc 2.38 (GCC 13 on Ubuntu 24.04 turns strtol and sscanf into their C23 entry points,
__isoc23_*). On an older glibc (Debian 12 has 2.36) they do not load. With this option the child
copies them into a scratch directory, marks that one version need weak, and defines the four
functions over their pre-C23 twins (they differ only on "0b" prefixes), so the comparison can
run; nothing a model computes passes through them. A user's machine would need the same.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GREEDY_TOKENS = 30
SAMPLED_TOKENS = 30
SAMPLE_TEMP, SAMPLE_SEED = 0.7, 1234
N_CTX, N_BATCH = 2048, 512

_PERSONA = ("You are Maya Lindqvist, who runs the Copper Kettle Cafe in Larkhaven. You are warm, "
            "organised and a little anxious about details. ")
_DAY = " ".join(f"At {h}:00 you {what}." for h, what in zip(
    range(6, 22), ["wake up", "open the cafe", "bake scones", "serve the morning regulars",
                   "order flour and butter", "talk with Ilse about the garden", "eat lunch",
                   "write the tasting menu", "call the cheese seller", "set out the tables",
                   "greet the first guests", "pour tea for the guests", "wash the cups",
                   "count the till", "read in the back room", "go to bed"], strict=False))
PROMPTS = {
    "short": [("user", "Say hello to your neighbour in one sentence.")],
    "persona": [("system", _PERSONA), ("user", "Who are you and what are you doing today?")],
    "plan": [("system", _PERSONA + _DAY),
             ("user", "Plan the spring tasting party at 17:00 as a JSON list of steps.")],
    "long": [("system", _PERSONA + (_DAY + " ") * 6),
             ("user", "Summarise your day in two sentences.")],
}


def chat_text(messages: list[tuple[str, str]]) -> str:
    """SmolLM2's chat layout (ChatML), written out: both bindings then tokenize the same text."""
    turns = "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in messages)
    return turns + "<|im_start|>assistant\n"


def model_files() -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    from sandbox.llm.local import embedded_model_path
    from sandbox.llm.weights import model_cache_dir

    shipped = embedded_model_path("smollm2-135m")
    files = {"shipped": shipped}
    for kind in ("F16", "Q8_0"):
        found = sorted(model_cache_dir().glob(f"{shipped.stem}.{kind}.*.gguf"))
        if found:
            files[kind.lower()] = found[-1]
    return files


# ---------------------------------------------------------------- the child: one binding


class Binding:
    """The few things ctypes (llama-cpp-python) and CFFI (llama-cpp-py-sync) do differently."""

    def __init__(self, name: str, glibc_shim: bool):
        self.name = name
        if name == "python":
            import llama_cpp

            self.lib, self.version = llama_cpp, f"llama-cpp-python {llama_cpp.__version__}"
        else:
            if glibc_shim:
                _load_with_glibc_shim()
            import llama_cpp_py_sync
            from llama_cpp_py_sync._cffi_bindings import get_ffi, get_lib

            self.ffi, self.lib = get_ffi(), get_lib()
            self.version = (f"llama-cpp-py-sync {llama_cpp_py_sync.__version__} (llama.cpp "
                            f"{llama_cpp_py_sync.__llama_cpp_tag__}, "
                            f"{llama_cpp_py_sync.__llama_cpp_commit__})")

    def tokens(self, values):
        if self.name == "python":
            import llama_cpp

            return (llama_cpp.llama_token * len(values))(*values)
        return self.ffi.new("llama_token[]", list(values))

    def token_buffer(self, n: int):
        return self.tokens([0] * n)

    def logits(self, pointer, n_vocab: int) -> bytes:
        if self.name == "python":
            return ctypes.string_at(pointer, 4 * n_vocab)
        return bytes(self.ffi.buffer(pointer, 4 * n_vocab))

    def system_info(self) -> str:
        info = self.lib.llama_print_system_info()
        return (info if isinstance(info, bytes) else self.ffi.string(info)).decode().strip()


class Session:
    """One model and one context, driven through llama.h only."""

    def __init__(self, binding: Binding, path: Path, threads: int):
        lib = self.lib = binding.lib
        self.binding = binding
        lib.llama_backend_init()
        params = lib.llama_model_default_params()
        params.n_gpu_layers = 0
        self.model = lib.llama_model_load_from_file(str(path).encode(), params)
        if not self.model:
            raise RuntimeError(f"{binding.name}: could not load {path}")
        self.vocab = lib.llama_model_get_vocab(self.model)
        self.n_vocab = lib.llama_vocab_n_tokens(self.vocab)
        ctx = lib.llama_context_default_params()
        ctx.n_ctx, ctx.n_batch, ctx.n_ubatch = N_CTX, N_BATCH, N_BATCH
        ctx.n_threads = ctx.n_threads_batch = threads
        ctx.flash_attn_type = 0  # off, as llama-cpp-python's Llama has it by default
        self.ctx = lib.llama_init_from_model(self.model, ctx)
        if not self.ctx:
            raise RuntimeError(f"{binding.name}: could not make a context")

    def tokenize(self, text: str) -> list[int]:
        raw = text.encode()
        buffer = self.binding.token_buffer(len(raw) + 8)
        n = self.lib.llama_tokenize(self.vocab, raw, len(raw), buffer, len(raw) + 8, True, True)
        if n < 0:
            raise RuntimeError("tokenize: buffer too small")
        return [int(buffer[i]) for i in range(n)]

    def decode(self, tokens: list[int]) -> None:
        """Evaluate `tokens` after what the context holds, n_batch at a time, never leaving
        the last token a pass of its own (the backend does the same: a 1-token pass computes
        the logits otherwise)."""
        i = 0
        while i < len(tokens):
            step = N_BATCH if len(tokens) - i != N_BATCH + 1 else N_BATCH - 1
            chunk = tokens[i:i + step]
            array = self.binding.tokens(chunk)
            if self.lib.llama_decode(self.ctx, self.lib.llama_batch_get_one(array, len(chunk))):
                raise RuntimeError("llama_decode failed")
            i += len(chunk)

    def last_logits(self) -> bytes:
        return self.binding.logits(self.lib.llama_get_logits_ith(self.ctx, -1), self.n_vocab)

    def reset(self) -> None:
        self.lib.llama_memory_clear(self.lib.llama_get_memory(self.ctx), True)

    def greedy(self, n: int) -> list[int]:
        """`n` tokens after what the context holds, each the argmax of the logits."""
        import numpy as np

        out = []
        for _ in range(n):
            token = int(np.frombuffer(self.last_logits(), dtype=np.float32).argmax())
            out.append(token)
            self.decode([token])
        return out

    def sampled(self, prompt: list[int], n: int) -> list[int]:
        lib = self.lib
        self.reset()
        self.decode(prompt)
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_temp(SAMPLE_TEMP))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_dist(SAMPLE_SEED))
        out = []
        try:
            for _ in range(n):
                token = int(lib.llama_sampler_sample(chain, self.ctx, -1))
                out.append(token)
                self.decode([token])
        finally:
            lib.llama_sampler_free(chain)
        return out


def backend_answers(kind: str, threads: int) -> dict:
    """The backend's own answers (sandbox/llm/local.py: chat template, sampling with the
    grammar asked last, dictation, the prefix store) for the prompts, greedy and seeded, free
    text and schema-bound: what a run writes depends on these."""
    sys.path.insert(0, str(ROOT))
    from pydantic import BaseModel

    from sandbox.llm.base import LLMRequest, Message
    from sandbox.llm.local import LocalBackend

    class Step(BaseModel):
        time: str
        what: str

    class Plan(BaseModel):
        steps: list[Step]

    backend = LocalBackend(weights=kind, n_threads=threads, lanes=1)
    out = {}
    for name, messages in PROMPTS.items():
        asked = [Message(role=role, content=text) for role, text in messages]
        for label, options in (("greedy", {"temperature": 0.0, "seed": 1}),
                               ("0.7", {"temperature": 0.7, "seed": 7}),
                               ("schema", {"temperature": 0.7, "seed": 3, "schema": Plan})):
            done = backend.complete(LLMRequest(messages=asked, max_tokens=48, **options))
            out[f"{name} {label}"] = hashlib.sha256(done.text.encode()).hexdigest()
    return out


def run_child(binding_name: str, model: Path, threads: int, glibc_shim: bool,
              backend_kind: str | None = None) -> dict:
    binding = Binding(binding_name, glibc_shim)
    session = Session(binding, model, threads)
    answers = {}
    for name, messages in PROMPTS.items():
        prompt = session.tokenize(chat_text(messages))
        session.reset()
        session.decode(prompt)
        answers[name] = {
            "tokens": len(prompt), "prompt_sha": hashlib.sha256(str(prompt).encode()).hexdigest(),
            "logits_sha": hashlib.sha256(session.last_logits()).hexdigest(),
            "greedy": session.greedy(GREEDY_TOKENS),
            "sampled": session.sampled(prompt, SAMPLED_TOKENS)}
    result = {"version": binding.version, "cpu": binding.system_info(), "answers": answers,
              "library": str(Path(binding.lib.__file__).parent) if binding_name == "python"
              else "bundled"}
    if backend_kind:
        result["backend"] = backend_answers(backend_kind, threads)
    return result


# --------------------------------------------------- the glibc 2.38 shim (--glibc-shim)

_SHIM_C = r"""
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
long __isoc23_strtol(const char *s, char **e, int b) { return strtol(s, e, b); }
unsigned long __isoc23_strtoul(const char *s, char **e, int b) { return strtoul(s, e, b); }
unsigned long long __isoc23_strtoull(const char *s, char **e, int b) { return strtoull(s, e, b); }
int __isoc23_sscanf(const char *s, const char *f, ...) {
    va_list a; va_start(a, f); int n = vsscanf(s, f, a); va_end(a); return n;
}
"""


def _weaken_version_need(path: Path, version: bytes) -> int:
    """Mark `version` weak in an ELF64 file's version needs (VER_FLG_WEAK): the loader then
    lets it be missing. Returns how many entries were changed."""
    data = bytearray(path.read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    changed = 0
    for _, kind, _, _, offset, _, link, count, _, _ in sections:
        if kind != 0x6FFFFFFE:  # SHT_GNU_verneed
            continue
        strings = sections[link][4]
        need = offset
        for _ in range(count):
            _, cnt, _, aux, next_need = struct.unpack_from("<HHIII", data, need)
            entry = need + aux
            for _ in range(cnt):
                _, flags, _, name, next_aux = struct.unpack_from("<IHHII", data, entry)
                end = data.index(0, strings + name)
                if bytes(data[strings + name:end]) == version:
                    struct.pack_into("<H", data, entry + 4, flags | 0x2)
                    changed += 1
                entry += next_aux
            need += next_need
    path.write_bytes(bytes(data))
    return changed


def _load_with_glibc_shim() -> None:
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp_py_sync")
    if spec is None or spec.origin is None:
        raise ImportError("llama_cpp_py_sync is not installed")
    package = Path(spec.origin).parent
    scratch = Path(tempfile.mkdtemp(prefix="llama-sync-shim-"))
    atexit.register(shutil.rmtree, scratch, True)  # (loaded libraries stay mapped)
    for lib in package.glob("lib*.so*"):
        shutil.copy2(lib, scratch / lib.name)
        _weaken_version_need(scratch / lib.name, b"GLIBC_2.38")
    (scratch / "shim.c").write_text(_SHIM_C)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(scratch / "libisoc23.so"),
                    str(scratch / "shim.c")], check=True)
    ctypes.CDLL(str(scratch / "libisoc23.so"), mode=ctypes.RTLD_GLOBAL)
    # The package prefers its own directory to $LLAMA_CPP_LIB, so its finder is pointed here.
    from llama_cpp_py_sync import _cffi_bindings

    _cffi_bindings._find_library = lambda: str(scratch / "libllama.so")


# ---------------------------------------------------------------- the parent: compare


def ask_child(python: str, binding: str, model: Path, threads: int, glibc_shim: bool,
              backend_kind: str | None = None):
    command = [python, __file__, "--child", binding, "--model", str(model),
               "--threads", str(threads)] + (["--glibc-shim"] if glibc_shim else []) + \
        (["--backend", backend_kind] if backend_kind else [])
    # The child imports numpy and its binding (and, for --backend, this checkout's sandbox).
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
        return None, lines[-1] if lines else f"exit {done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def compare(a: dict, b: dict) -> dict[str, int]:
    """How many prompts agree, per question."""
    counts = {"prompt tokens": 0, "logits": 0, "greedy": 0, "sampled": 0}
    for name, x in a["answers"].items():
        y = b["answers"][name]
        counts["prompt tokens"] += x["prompt_sha"] == y["prompt_sha"]
        counts["logits"] += x["logits_sha"] == y["logits_sha"]
        counts["greedy"] += x["greedy"] == y["greedy"]
        counts["sampled"] += x["sampled"] == y["sampled"]
    return counts


def first_difference(a: list[int], b: list[int]) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sync-python", default=sys.executable,
                        help="an interpreter with llama-cpp-py-sync installed (default: this one)")
    parser.add_argument("--python-python", default=sys.executable,
                        help="an interpreter with llama-cpp-python installed (default: this one)")
    parser.add_argument("--threads", default="2,1", help="thread counts, comma-separated")
    parser.add_argument("--models", default="shipped,f16,q8_0",
                        help="which of shipped, f16, q8_0 (the converted ones when present)")
    parser.add_argument("--glibc-shim", action="store_true",
                        help="load llama-cpp-py-sync's libraries on glibc < 2.38 (see above)")
    parser.add_argument("--against", metavar="PYTHON",
                        help="compare llama-cpp-python in this interpreter (another build of "
                             "it: a candidate set-up) instead of llama-cpp-py-sync, the "
                             "backend's own answers included")
    parser.add_argument("--child", choices=("python", "sync"), help=argparse.SUPPRESS)
    parser.add_argument("--model", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        threads = [int(x) for x in args.threads.split(",")]
    except ValueError:
        parser.error(f"--threads: whole numbers separated by commas, not {args.threads!r}")
    if args.child:
        print(json.dumps(run_child(args.child, args.model, threads[0], args.glibc_shim,
                                   args.backend)))
        return 0

    files = model_files()
    wanted = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in wanted if m not in ("shipped", "f16", "q8_0")]
    if unknown:
        parser.error(f"--models: unknown {', '.join(unknown)} (shipped, f16, q8_0)")
    missing = [m for m in wanted if m not in files]
    if missing:
        print(f"not converted yet, skipped: {', '.join(missing)} (run `sandbox weights`)")
    load = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"load average {' '.join(load)}")
    totals = {}
    header = False
    for kind in [m for m in wanted if m in files]:
        for n in threads:
            backend = kind if args.against else None
            ours, why_ours = ask_child(args.python_python, "python", files[kind], n, False,
                                       backend)
            if args.against:
                theirs, why_theirs = ask_child(args.against, "python", files[kind], n, False,
                                               backend)
            else:
                theirs, why_theirs = ask_child(args.sync_python, "sync", files[kind], n,
                                               args.glibc_shim)
            if ours is None or theirs is None:
                if ours is None:
                    print(f"llama-cpp-python ({args.python_python}) failed: {why_ours}")
                if theirs is None:
                    print(f"B ({args.against or args.sync_python}) failed: {why_theirs}")
                    if "GLIBC_2.38" in (why_theirs or ""):
                        print("  its wheel needs glibc 2.38: try --glibc-shim")
                print("nothing compared")
                return 1
            if not header:
                print(f"A: {ours['version']} ({ours['library']})\n   {ours['cpu']}")
                print(f"B: {theirs['version']} ({theirs['library']})\n   {theirs['cpu']}")
                print(f"{'model':8} {'thr':>3}  {'prompt':8} {'tokens':>6}  logits  greedy "
                      f"(first diff)  sampled (first diff)")
                header = True
            for name, x in ours["answers"].items():
                y = theirs["answers"][name]
                g = first_difference(x["greedy"], y["greedy"])
                s = first_difference(x["sampled"], y["sampled"])
                print(f"{kind:8} {n:>3}  {name:8} {x['tokens']:>6}  "
                      f"{'same' if x['logits_sha'] == y['logits_sha'] else 'DIFF':6}  "
                      f"{'same' if g is None else 'DIFF':6} ({'-' if g is None else g:>2})  "
                      f"        {'same' if s is None else 'DIFF':6}  ({'-' if s is None else s})")
            counts = compare(ours, theirs)
            if args.against:
                same = [k for k, v in ours["backend"].items() if theirs["backend"][k] == v]
                print(f"{kind:8} {n:>3}  the backend's answers: {len(same)} of "
                      f"{len(ours['backend'])} the same")
                counts["backend answers"] = len(same)
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
    runs = len(threads) * len([m for m in wanted if m in files])
    of = {k: len(PROMPTS) * runs * (3 if k == "backend answers" else 1) for k in totals}
    print("bitwise the same: " + ", ".join(f"{k} {v} of {of[k]}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
