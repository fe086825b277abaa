"""The explicit registry of agent modules, one table per slot.

Built-in modules register below. A third-party package registers its own without touching this
code, through the entry point group `sandbox.agent_modules`: the entry point's name is
`<slot>.<module name>` and its value the class, e.g. in the package's pyproject.toml

    [project.entry-points."sandbox.agent_modules"]
    "retriever.bm25" = "my_package.bm25:BM25Retriever"

A module class takes its parameters as one pydantic model named by its `Params` attribute
(`extra="forbid"`, so a misspelt parameter is an error) and implements the slot's protocol
(agents/protocols.py).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from .protocols import SLOTS

ENTRY_POINT_GROUP = "sandbox.agent_modules"

MODULES: dict[str, dict[str, type]] = {slot: {} for slot in SLOTS}
# (slot, name) -> "distribution version" of each module an entry point registered: a run's
# header says which package (and which release of it) supplied a third-party module.
DISTRIBUTIONS: dict[tuple[str, str], str] = {}


class UnknownModule(LookupError):
    def __init__(self, slot: str, name: str, known: list[str]):
        self.slot, self.name, self.known = slot, name, known
        super().__init__(
            f"unknown {slot} module {name!r}; known: {', '.join(known) or 'none'} (third-party "
            f"modules register under the entry point group {ENTRY_POINT_GROUP!r} as "
            f"'{slot}.<name>')")


def register(slot: str, name: str, cls: type) -> type:
    """Make `cls` available as module `name` of `slot`."""
    if slot not in MODULES:
        raise ValueError(f"unknown slot {slot!r}; slots are {', '.join(SLOTS)}")
    if not hasattr(cls, "Params"):
        raise TypeError(f"{cls.__qualname__} needs a `Params` pydantic model")
    MODULES[slot][name] = cls
    return cls


def _load_entry_points() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        slot, _, name = ep.name.partition(".")
        if slot in MODULES and name and name not in MODULES[slot]:
            register(slot, name, ep.load())
            dist = getattr(ep, "dist", None)
            if dist is not None:
                DISTRIBUTIONS[(slot, name)] = f"{dist.name} {dist.version}"


def distribution(slot: str, name: str) -> str | None:
    """The distribution and version that supplied module `name` of `slot` through an entry
    point ("thirdparty-plugin 1.0"); None for a built-in module (this project's own)."""
    return DISTRIBUTIONS.get((slot, name))


def lookup(slot: str, name: str) -> type:
    """The class of module `name` in `slot`, looking at entry points when it is not built in."""
    if slot not in MODULES:
        raise ValueError(f"unknown slot {slot!r}; slots are {', '.join(SLOTS)}")
    if name not in MODULES[slot]:
        _load_entry_points()
    if name not in MODULES[slot]:
        raise UnknownModule(slot, name, sorted(MODULES[slot]))
    return MODULES[slot][name]


def known(slot: str) -> list[str]:
    _load_entry_points()
    return sorted(MODULES[slot])


def _register_builtins() -> None:
    from .conversation import GAConversation
    from .memory import MemoryStream
    from .planning import GAPlanner
    from .reflection import GAReflector, NoReflection
    from .retrieval import RecencyRetriever, WeightedRetriever
    from .tdp import NoTaskPlanner, TargetDrivenPlanner

    register("memory", "stream", MemoryStream)
    register("retriever", "ga", WeightedRetriever)
    register("retriever", "recency", RecencyRetriever)
    register("planner", "ga", GAPlanner)
    register("reflector", "ga", GAReflector)
    register("reflector", "none", NoReflection)
    register("conversation", "ga", GAConversation)
    register("task_planner", "tdp", TargetDrivenPlanner)
    register("task_planner", "none", NoTaskPlanner)


_register_builtins()
