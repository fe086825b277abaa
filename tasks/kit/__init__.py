"""The single-room benchmark kit, task side: item sets with collision-free ids, roles with a
model and sampling each, and the dialogue episode on the engine.

    from tasks.kit import ItemSet, name_id, Role, Sampling, Cast, DialogueScenario

A benchmark's judges, aggregation and board are in `evaluation.kit`; running a benchmark
(resume, manifests, the command line) is in `sandbox.suites.benchmark`. See tasks/README.md.
"""

from .dialogue import CONVERSATION, PLACE, DialogueScenario
from .items import (
    IdCollision,
    ItemSet,
    check_unique,
    content_digest,
    digest,
    distinguish,
    name_id,
    slug,
)
from .roles import Cast, Role, Sampling

__all__ = [
    "CONVERSATION", "PLACE", "Cast", "DialogueScenario", "IdCollision", "ItemSet", "Role",
    "Sampling", "check_unique", "content_digest", "digest", "distinguish", "name_id", "slug",
]
