"""The memory stream: everything an agent saw, said and thought, searchable by meaning.

Each memory has a kind (event, chat, thought), creation and last-access times (sim seconds),
an importance 1-10 asked of the model, keywords, an embedding, and for thoughts the ids of the
memories that are its evidence. Importance is scored in batches: memories whose importance is not
known yet wait in `pending` until `importance_batch` of them gather (or the agent goes to sleep);
then one call scores them all. Retrieval does not wait for them (agents/retrieval.py ranks a
pending memory at the mean importance of the scored candidates). A description already scored is
never asked again.

Similarity search runs on a faiss inner-product index over unit vectors (= cosine similarity).
The index is exact (flat) while the stream is small and switches to an inverted-file index once it
holds `ivf_from` memories, so a query stays in the sub-millisecond range at 100k memories.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import faiss
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, create_model

from sandbox.engine import Engine, Process
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

from .embedding import CachedEmbedder, make_embedder
from .schema import Score

MemoryKind = Literal["event", "chat", "thought"]

_STOP = frozenset("""a an the is are was were be been being am to of in on at for with and or but
    by from as it its this that these those he she they them his her their i you we me my your our
    not no so do does did have has had will would can could should about into over under up down
    out off than then there here what which who whom when where why how all any some just also
    very too now currently""".split())
_WORD = re.compile(r"[a-z][a-z'-]+")


def keywords_of(text: str, limit: int = 8) -> list[str]:
    """Content words of a description, in order, without duplicates."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    return list(dict.fromkeys(words))[:limit]


@dataclass(slots=True)
class MemoryNode:
    id: int
    kind: MemoryKind
    description: str
    created: float
    last_accessed: float
    importance: int | None = None  # None while waiting for a batch to be scored
    keywords: list[str] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)
    subject: str = ""  # who the memory is about, when known (perceived agent, chat partner)


_NODE_FIELDS = [f.name for f in fields(MemoryNode)]


class MemoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    embedder: Literal["minilm", "minilm-torch", "hashing"] = "minilm"
    importance_batch: int = Field(default=10, ge=1, le=50)
    ivf_from: int = Field(default=20_000, ge=1_000)  # flat index below this many memories
    ivf_probe: int = Field(default=16, ge=1, le=256)
    # The spatial memory's growth: a resident with one (the reference town's) learns the arenas
    # within this many tiles of where it walks, as the reference's perception does (its
    # vision_r, 8 in its town's personas); 0: what it knows never grows.
    vision_radius: int = Field(default=8, ge=0, le=64)


def importance_schema(count: int) -> type[BaseModel]:
    """A schema with exactly `count` scores of 1-10 (cached by count)."""
    if count not in _SCHEMAS:
        _SCHEMAS[count] = create_model(
            f"Importance{count}", __config__=ConfigDict(extra="forbid"),
            scores=(list[Score],
                    Field(min_length=count, max_length=count)))
    return _SCHEMAS[count]


_SCHEMAS: dict[int, type[BaseModel]] = {}


class _Index:
    """faiss inner-product index over unit rows, flat then IVF; ids are row numbers."""

    def __init__(self, dim: int, ivf_from: int, probe: int):
        self.dim, self.ivf_from, self.probe = dim, ivf_from, probe
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.count = 0
        self.index: faiss.Index = faiss.IndexFlatIP(dim)
        self._trained_at = 0

    def add(self, vectors: np.ndarray) -> None:
        if len(vectors) == 0:
            return
        needed = self.count + len(vectors)
        if needed > len(self.matrix):  # amortised growth
            grown = np.zeros((max(needed, 2 * len(self.matrix), 64), self.dim), np.float32)
            grown[: self.count] = self.matrix[: self.count]
            self.matrix = grown
        self.matrix[self.count: needed] = vectors
        self.count = needed
        if needed >= self.ivf_from and needed >= 2 * max(self._trained_at, self.ivf_from // 2):
            self._rebuild_ivf()
        else:
            self.index.add(vectors)

    def _rebuild_ivf(self) -> None:
        # Retrained when the stream doubles, so the lists stay balanced as it grows.
        data = self.matrix[: self.count]
        lists = int(4 * np.sqrt(self.count))
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, lists, faiss.METRIC_INNER_PRODUCT)
        index.train(data)
        index.add(data)
        index.nprobe = self.probe
        self.index, self._quantizer, self._trained_at = index, quantizer, self.count

    def search(self, vector: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        n = min(n, self.count)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sims, ids = self.index.search(vector.reshape(1, -1).astype(np.float32), n)
        keep = ids[0] >= 0
        return ids[0][keep], sims[0][keep]

    def similarity(self, vector: np.ndarray, ids: np.ndarray) -> np.ndarray:
        # einsum, not BLAS: a gather this small is slower with threads (and faiss OpenMP
        # threads spinning after a search starve the BLAS ones).
        return np.einsum("ij,j->i", self.matrix[ids], vector)


class MemoryStream:
    """The `memory` slot's reference module (Park et al.'s associative memory)."""

    Params = MemoryParams

    def __init__(self, params: MemoryParams | None = None, *,
                 embedder: CachedEmbedder | None = None):
        self.params = params or MemoryParams()
        self.embedder = embedder or make_embedder(self.params.embedder)
        self.nodes: list[MemoryNode] = []
        self.pending: list[int] = []  # ids waiting for an importance score
        self.importance_since_reflection = 0.0
        self.known_importance: dict[str, int] = {}  # description -> score: never asked twice
        # The host's hooks: a memory entering the stream (its importance when known then), and
        # a waiting memory's importance once its batch is scored.
        self.on_added: list[Callable[[MemoryNode, float], None]] = []
        self.on_scored: list[Callable[[MemoryNode, float], None]] = []
        self._index = _Index(self.embedder.dim, self.params.ivf_from, self.params.ivf_probe)
        self._last_accessed = _Column(np.float64)
        self._importance = _Column(np.float32)

    # -- adding -------------------------------------------------------------------------------
    def add(self, kind: MemoryKind, description: str, t: float, *,
            importance: int | None = None, evidence: Iterable[int] = (),
            subject: str = "") -> MemoryNode:
        """Store a memory at sim time `t`. Without `importance`, it joins the next batch."""
        if importance is None:
            importance = self.known_importance.get(description)
        node = MemoryNode(id=len(self.nodes), kind=kind, description=description, created=t,
                          last_accessed=t, importance=importance,
                          keywords=keywords_of(description), evidence=list(evidence),
                          subject=subject)
        self.nodes.append(node)
        self._last_accessed.append(t)
        self._importance.append(importance or 0)
        if importance is None:
            self.pending.append(node.id)
        else:
            self._scored(node, importance)
        # Logged as it enters the stream: a retrieval may return it from now on.
        for callback in self.on_added:
            callback(node, t)
        return node

    def _scored(self, node: MemoryNode, importance: int) -> None:
        node.importance = int(min(10, max(1, importance)))
        self._importance.values[node.id] = node.importance
        self.known_importance.setdefault(node.description, node.importance)
        self.importance_since_reflection += node.importance

    def settle(self, agent, engine: Engine, force: bool = False) -> Process:
        """Score the pending memories in one call, if a batch is full (or `force`)."""
        if not self.pending or (len(self.pending) < self.params.importance_batch and not force):
            return
        ids, self.pending = self.pending, []
        todo = [self.nodes[i] for i in ids]
        # A description scored meanwhile (two agents doing the same thing) is not asked again.
        fresh = list(dict.fromkeys(n.description for n in todo
                                   if n.description not in self.known_importance))
        if fresh:
            schema = importance_schema(len(fresh))
            prompt = render("agents", "memory_importance.j2", persona=agent.persona,
                            memories=fresh)
            completion = yield engine.ask(LLMRequest(
                messages=[Message(role="user", content=prompt)], tag="memory.importance",
                agent=agent.name, schema=schema, fallback=schema(scores=[3] * len(fresh)),
                temperature=0.0, max_tokens=8 + 4 * len(fresh)))
            for text, score in zip(fresh, completion.parsed.scores, strict=True):
                self.known_importance[text] = int(min(10, max(1, score)))
        for node in todo:
            self._scored(node, self.known_importance[node.description])
            for callback in self.on_scored:
                callback(node, engine.now)

    # -- search -------------------------------------------------------------------------------
    def embed(self, text: str) -> np.ndarray:
        return self.embedder(text)

    def _sync_index(self) -> None:
        """Embed (in one batch) and index every memory added since the last search."""
        if self._index.count < len(self.nodes):
            texts = [n.description for n in self.nodes[self._index.count:]]
            self._index.add(self.embedder.many(texts))

    def search(self, vector: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids and cosine similarities of the `n` memories most similar to `vector`."""
        self._sync_index()
        return self._index.search(vector, n)

    def similarity(self, vector: np.ndarray, ids: np.ndarray) -> np.ndarray:
        self._sync_index()
        return self._index.similarity(vector, ids)

    def most_recent(self, n: int) -> np.ndarray:
        """Ids of the `n` memories accessed last (newest first)."""
        return _top(self._last_accessed.view(), n)

    def most_important(self, n: int) -> np.ndarray:
        return _top(self._importance.view(), n)

    def last_accessed(self, ids: np.ndarray) -> np.ndarray:
        return self._last_accessed.view()[ids]

    def importance(self, ids: np.ndarray) -> np.ndarray:
        return self._importance.view()[ids]

    def touch(self, ids: Iterable[int], t: float) -> None:
        for i in ids:
            self.nodes[i].last_accessed = t
            self._last_accessed.values[i] = t

    def latest(self, kind: MemoryKind | None = None, n: int = 10) -> list[MemoryNode]:
        """The last `n` memories (of a kind), oldest first: for prompts about the recent past."""
        chosen = [m for m in reversed(self.nodes) if kind is None or m.kind == kind][:n]
        return chosen[::-1]

    def __len__(self) -> int:
        return len(self.nodes)

    # -- checkpoint ---------------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        # Field by field with the lists copied, not asdict: the same data, and a town's
        # checkpoints take every memory of every agent (asdict's deep copy was most of it).
        return {"nodes": [{**{f: getattr(n, f) for f in _NODE_FIELDS},
                           "keywords": list(n.keywords), "evidence": list(n.evidence)}
                          for n in self.nodes], "pending": list(self.pending),
                "importance_since_reflection": self.importance_since_reflection,
                "known_importance": dict(self.known_importance)}

    def set_state(self, state: dict[str, Any]) -> None:
        callbacks = self.on_added, self.on_scored  # the host's hooks stay: they are its own
        self.__init__(self.params, embedder=self.embedder)
        self.on_added, self.on_scored = callbacks
        self.nodes = [MemoryNode(**n) for n in state["nodes"]]
        self.pending = list(state["pending"])
        self.importance_since_reflection = float(state["importance_since_reflection"])
        self.known_importance = dict(state["known_importance"])
        for n in self.nodes:
            self._last_accessed.append(n.last_accessed)
            self._importance.append(n.importance or 0)


class _Column:
    """A growable numpy array (amortised appends) for per-memory numbers."""

    def __init__(self, dtype):
        self.values = np.zeros(64, dtype=dtype)
        self.count = 0

    def append(self, value: float) -> None:
        if self.count == len(self.values):
            self.values = np.concatenate([self.values, np.zeros_like(self.values)])
        self.values[self.count] = value
        self.count += 1

    def view(self) -> np.ndarray:
        return self.values[: self.count]


def _top(values: np.ndarray, n: int) -> np.ndarray:
    """Indices of the `n` largest values, largest first; ties broken by the newer (larger) id."""
    if n >= len(values):
        order = np.lexsort((-np.arange(len(values)), -values))
        return order
    part = np.argpartition(-values, n)[:n]
    return part[np.lexsort((-part, -values[part]))]
