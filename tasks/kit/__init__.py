"""The single-room benchmark kit, task side: item sets with collision-free ids, roles with a
model and sampling each, and the dialogue episode on the engine.

    from tasks.kit import ItemSet, name_id, Role, Sampling, Cast, DialogueScenario

A benchmark's judges, aggregation and board are in `evaluation.kit`; running a benchmark
(resume, manifests, the command line) is in `sandbox.app.suites.benchmark`. See tasks/README.md.
The dialogue episode (which loads the engine and the agents' chat module) is imported when
first asked for, so item sets, roles and sampling load nothing heavy.
"""

from importlib import import_module

from .items import (
    IdCollision,
    ItemIdError,
    ItemSet,
    check_unique,
    content_digest,
    digest,
    distinguish,
    name_id,
    slug,
)
from .roles import Cast, Role, Sampling

_DIALOGUE = ("CONVERSATION", "PLACE", "DialogueScenario")


def __getattr__(name: str):
    if name in _DIALOGUE:
        return getattr(import_module(".dialogue", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONVERSATION", "PLACE", "Cast", "DialogueScenario", "IdCollision", "ItemIdError", "ItemSet",
    "Role", "Sampling", "check_unique", "content_digest", "digest", "distinguish", "name_id",
    "slug",
]
