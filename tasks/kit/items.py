"""Item sets: what a single-room benchmark runs, one dialogue episode per item.

An item is whatever the benchmark's schema says (a character x situation pair, a simulation
task, a seed query). The kit needs three things of a set: each item's id, stable and unique;
where the item came from (to name it in an error); and a spread key, so `--every K` keeps about
one item in K spread over the set rather than its first rows.

Ids are directory names. They must never collide: two items with one id would share a run
directory, and the second would be "skipped" with the first one's dialogue. So an id is built
from content, not position (a reordered or subsampled set finds its runs again), readable where
the script allows (letters of any script are kept, lower-cased), and carries a short hash of
the exact text whenever the readable part loses anything (case, punctuation, emoji, length), so
"Anna", "anna" and "Anna!" get three ids. A collision that is left (the same text twice) is an
error naming both items, never a skip.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sandbox.pathnames import component_problem

T = TypeVar("T")

MAX_READABLE = 40
# Letters and digits of every script; everything else (spaces, punctuation, symbols, emoji,
# the underscore) separates words. Ids never contain "_", so the hash suffix "_xxxxxx" and the
# part separator "__" cannot be produced by a readable part.
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def digest(text: str, length: int = 8) -> str:
    """A short, stable hash of a text (hex)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


def slug(text: str) -> str:
    """The readable part: letters and digits of any script, lower-cased, joined by '-'."""
    normal = unicodedata.normalize("NFC", text).lower()
    return _NOT_WORD.sub("-", normal).strip("-")[:MAX_READABLE].strip("-")


def _restores(name: str, readable: str) -> bool:
    """Whether `name` is exactly what `readable` reads as (capitalised words, single spaces).

    'Sev', 'Pip Quillfeather', 'Анна Каренина', '孫悟空' are; 'anna', 'Dr. Who', 'R2-D2',
    'Ann  Lee' are not and get a hash of the name."""
    return bool(readable) and name == " ".join(w[:1].upper() + w[1:]
                                               for w in readable.split("-"))


def name_id(name: str) -> str:
    """A stable, readable id for a name; different names never share one.

    The readable slug alone when the name reads back from it exactly, else the slug (or
    'item' when nothing readable is left) and '_' and a hash of the exact name."""
    readable = slug(name)
    if _restores(name, readable):
        return readable
    return f"{readable or 'item'}_{digest(name, 6)}"


def content_digest(data: Any) -> str:
    """A fingerprint of JSON-able content, whatever order its keys were written in."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False)
                          .encode("utf-8")).hexdigest()[:16]


class ItemIdError(ValueError):
    """An item id that cannot name the item's run directory."""


class IdCollision(ItemIdError):
    """Two items of one set got the same id."""


class UnsafeItemId(ItemIdError):
    """An id (a public file's own, say) that is not one safe folder name: `../../x` would put
    the item's run outside the benchmark directory."""


@dataclass
class ItemSet(Generic[T]):
    """The items of one benchmark run, with their ids, origins and spread keys.

    `origins[i]` names item i for a person ('characters.3 x situations.1 (Anna x "Say hi")');
    `spread[i]` orders the --every selection (default: the position)."""

    items: list[T]
    ids: list[str]
    origins: list[str]
    source: str = ""  # the file the items came from ("" for built-in or in-memory sets)
    digest: str = ""  # of the content that is played: a changed set is another configuration
    spread: list[int] = field(default_factory=list)
    ignored_keys: list[str] = field(default_factory=list)  # keys a public file has, unused
    notes: list[str] = field(default_factory=list)  # what a loader wants said before a run

    def __post_init__(self) -> None:
        if not (len(self.items) == len(self.ids) == len(self.origins)):
            raise ValueError("items, ids and origins must have the same length")
        if not self.spread:
            self.spread = list(range(len(self.items)))
        check_unique(self.ids, self.origins, self.source)
        for item_id, origin in zip(self.ids, self.origins, strict=True):
            if problem := component_problem(item_id):
                where = f"{self.source}: " if self.source else ""
                raise UnsafeItemId(f"{where}item {origin}: its id {item_id!r} {problem}; an "
                                   "id names the item's run directory")

    def __len__(self) -> int:
        return len(self.items)

    def select(self, every: int = 1) -> list[tuple[str, T]]:
        """(id, item) for about one item in `every`, spread over the set, in set order."""
        if every < 1:
            raise ValueError("--every must be at least 1")
        return [(i, item) for i, item, key in zip(self.ids, self.items, self.spread, strict=True)
                if key % every == 0]


def check_unique(ids: Sequence[str], origins: Sequence[str], source: str = "") -> None:
    """IdCollision naming both items when two ids are equal."""
    first: dict[str, int] = {}
    for i, item_id in enumerate(ids):
        j = first.setdefault(item_id, i)
        if j != i:
            where = f"{source}: " if source else ""
            raise IdCollision(f"{where}items {origins[j]} and {origins[i]} get the same id "
                              f"{item_id!r}; they would share a run directory. Make them "
                              "differ (or remove the duplicate)")


def distinguish(keys: Sequence[str], contents: Sequence[Any]) -> list[str]:
    """`keys` with a content hash added to each key that appears more than once (two
    characters both called 'Anna' with different cards). Identical contents stay identical,
    and `check_unique` then reports them."""
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    return [f"{key}_{content_digest(content)[:6]}" if seen[key] > 1 else key
            for key, content in zip(keys, contents, strict=True)]
