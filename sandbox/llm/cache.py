"""On-disk cache of raw answers: what makes a run reproducible and re-scorable.

The key hashes the model id, messages, schema, sampling parameters and seed
(`LLMRequest.cache_key`).
Entries are appended to a JSONL file and flushed at once, so a killed run keeps its answers.
Modes: "record" answers hits from the file and writes misses; "replay" (cache-only) raises
`CacheMiss` naming the call; "off" passes through. A request the server refused as longer than
the model takes is kept too (`refused`: the server's reason), and raised again from the cache.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Literal

from ..files import MAX_LOG_BYTES, FileFormatError, input_lines, json_line
from ..storage import open_append, repair_if_locked
from .base import CacheMiss, Completion, LLMRequest, RequestTooLong, Usage

log = logging.getLogger(__name__)

CacheMode = Literal["record", "replay", "off"]

# One lock per cache file of this process: an episode whose roles are answered by different
# models has a CachedLLM per model over one llm_cache.jsonl, and their lines must not interleave.
_file_locks: dict[Path, threading.Lock] = {}
_file_locks_lock = threading.Lock()


def _file_lock(path: Path) -> threading.Lock:
    with _file_locks_lock:
        return _file_locks.setdefault(path.resolve(), threading.Lock())


class CachedLLM:
    def __init__(self, inner, path: Path | str, mode: CacheMode = "record",
                 key_model: str | None = None):
        self.inner = inner
        self.model_id = inner.model_id
        # What answers are keyed under: the model id, with an alias's endpoint when it has one
        # (LLMSettings.cache_model), so two endpoints' answers never stand for each other.
        self.key_model = key_model or inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.path = Path(path)
        self.mode = mode
        self._lock = _file_lock(self.path)
        self._entries: dict[str, dict] = {}
        self.bad_lines = 0
        if self.path.exists():
            self._load()
        elif mode == "replay":
            raise CacheMiss(f"cache-only run, but the cache file {self.path} does not exist")

    def _load(self) -> None:
        # Guarded (sandbox/files.py): a FIFO or a device given as --cache is refused unopened.
        first_bad = ""
        lines = 0
        for number, raw in input_lines(self.path, MAX_LOG_BYTES):
            if not raw.strip():
                continue
            lines += 1
            try:
                entry = json_line(raw)
                if not _is_entry(entry):
                    raise ValueError("not a cache entry (key, text and usage)")
                self._entries[entry["key"]] = entry
            except ValueError as exc:
                # Not an entry (edited by hand?): skip it, that answer is asked again.
                self.bad_lines += 1
                why = f"not UTF-8 text (byte {exc.start})" \
                    if isinstance(exc, UnicodeDecodeError) else str(exc).splitlines()[0]
                first_bad = first_bad or f"line {number}: {why}"
        if lines and not self._entries:
            # Not a cache at all (a binary file, another tool's JSON): appending our answers
            # to it would spoil a file we did not write.
            raise FileFormatError(self.path, f"not an LLM answer cache: none of its {lines} "
                                             f"line(s) is an entry ({first_bad})")
        # A line cut off by a kill goes (once the file is known to be a cache): the next answer
        # appended must not be glued to it (under this process's lock; otherwise the first
        # append under one cuts it).
        if repair_if_locked(self.path) and self.bad_lines:
            self.bad_lines -= 1  # the cut line was the one counted
        if self.bad_lines:
            log.warning("LLM cache %s: skipped %d unreadable line(s)", self.path, self.bad_lines)

    def __len__(self) -> int:
        return len(self._entries)

    def complete(self, request: LLMRequest) -> Completion:
        if self.mode == "off":
            return self.inner.complete(request)
        key = request.cache_key(self.key_model)
        entry = self._entries.get(key)
        if entry is not None and isinstance(entry.get("refused"), str):
            raise RequestTooLong(entry["refused"], cached=True)  # refused before: it would be
        if entry is not None:
            return Completion(text=entry["text"], usage=Usage(**entry["usage"]), cached=True,
                              finish_reason=entry.get("finish_reason"), model=self.model_id)
        if self.mode == "replay":
            raise CacheMiss(
                f"cache-only run: no cached answer for call tag={request.tag!r} "
                f"agent={request.agent!r} model={self.key_model!r} seed={request.seed} "
                f"key={key[:12]} in {self.path}")
        try:
            completion = self.inner.complete(request)
        except RequestTooLong as exc:
            # Kept, so a rerun (cache-only too) meets the same refusal without asking.
            self._append({"key": key, "model": self.key_model, "tag": request.tag, "text": "",
                          "usage": Usage().model_dump(), "refused": exc.reason})
            raise
        self._append({"key": key, "model": self.key_model, "tag": request.tag,
                      "text": completion.text, "usage": completion.usage.model_dump(),
                      "finish_reason": completion.finish_reason})
        return completion

    def _append(self, entry: dict) -> None:
        with self._lock:
            self._entries[entry["key"]] = entry
            with open_append(self.path) as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
                fh.flush()


def _is_entry(entry) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("key"), str)
            and isinstance(entry.get("text"), str) and isinstance(entry.get("usage"), dict))


def caches_in(llm) -> list[CachedLLM]:
    """Every CachedLLM inside a model stack, or inside each stack of a Router (an episode whose
    roles are answered by different models keeps one cache per model)."""
    stacks = getattr(llm, "llms", None)
    if stacks is not None:
        found = [c for stack in stacks.values() for c in caches_in(stack)]
        return list({id(c): c for c in found}.values())
    cache = cache_in(llm)
    return [cache] if cache is not None else []


def cache_in(llm) -> CachedLLM | None:
    """The CachedLLM inside a model stack (`make_llm` wraps it in other layers), or None: a
    fork replays its prefix cache-only and then lets the cache record again."""
    while llm is not None:
        if isinstance(llm, CachedLLM):
            return llm
        llm = getattr(llm, "inner", None)
    return None
