"""A scenario set as the kit's ItemSet: one dialogue episode per scenario, keyed by its id."""

from __future__ import annotations

from pathlib import Path

from tasks.kit import ItemSet, content_digest

from .schema import Scenario, load_set

BUILTIN_SET = Path(__file__).parent / "builtin.json"


def scenario_items(path: Path | str | None = None) -> ItemSet[Scenario]:
    """The scenarios of a set file (None: the built-in set), in file order."""
    source = Path(path) if path is not None else BUILTIN_SET
    found = load_set(source)
    scenarios = found.scenarios
    return ItemSet(items=scenarios, ids=[s.id for s in scenarios],
                   origins=[f"scenarios.{i} ({s.id})" for i, s in enumerate(scenarios)],
                   source="" if path is None else str(path),
                   digest=content_digest([s.model_dump(mode="json") for s in scenarios]))
