"""Addresses: `world:sector:arena:object`, the names agents, tasks and scorers use for places.

An address may stop at any level: `town` (the world), `town:Copper Kettle Cafe` (a sector),
`town:Copper Kettle Cafe:dining room` (an arena), `town:Copper Kettle Cafe:dining room:counter`
(an object). Names may hold spaces but never a colon.
"""

from __future__ import annotations

from dataclasses import dataclass

SEP = ":"
LEVELS = ("world", "sector", "arena", "object")


class AddressError(ValueError):
    """Text that is not an address, or an address the world does not have."""


@dataclass(frozen=True, order=True)
class Address:
    """A place in a world, from the world down to (optionally) one object."""

    parts: tuple[str, ...]

    # Addresses key the town's lookups (occupants, hop grids, arenas of tiles): hashed once, not
    # at every lookup (a 1,000-resident day hashed them 8 million times).
    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.parts))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):  # made anew where unpickled: a string's hash differs between processes
        return Address, (self.parts,)

    @classmethod
    def parse(cls, text: str | Address) -> Address:
        if isinstance(text, Address):
            return text
        parts = tuple(p.strip() for p in str(text).split(SEP))
        if not 1 <= len(parts) <= 4 or any(not p for p in parts):
            raise AddressError(f"{text!r} is not an address (world:sector:arena:object, "
                               "each part non-empty)")
        return cls(parts)

    @classmethod
    def of(cls, *parts: str | None) -> Address:
        return cls(tuple(p for p in parts if p))

    def __str__(self) -> str:
        return SEP.join(self.parts)

    @property
    def level(self) -> str:
        return LEVELS[len(self.parts) - 1]

    @property
    def world(self) -> str:
        return self.parts[0]

    @property
    def sector(self) -> str | None:
        return self.parts[1] if len(self.parts) > 1 else None

    @property
    def arena(self) -> str | None:
        return self.parts[2] if len(self.parts) > 2 else None

    @property
    def object(self) -> str | None:
        return self.parts[3] if len(self.parts) > 3 else None

    def up_to(self, level: str) -> Address:
        """This address cut at `level` (e.g. the arena of an object address)."""
        return Address(self.parts[: LEVELS.index(level) + 1])

    def contains(self, other: Address | str) -> bool:
        """True when `other` is this place or inside it."""
        other = Address.parse(other)
        return other.parts[: len(self.parts)] == self.parts


def within(place: str, inner: str) -> bool:
    """String form of `Address.contains` for hot loops over logged addresses."""
    return inner == place or inner.startswith(place + SEP)
