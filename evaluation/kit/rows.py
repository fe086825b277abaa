"""Which directories a board pools into one row. The rule, for every kit board:

- A row is (label, configuration). A directory's configuration is how its items were run: the
  roles' models and sampling, the judges (those the board reads), the items (their file, by
  digest; by name where options pool) and the options that shape a dialogue, as its manifest
  records them. Not part of it: the label, the selection (`--every`, `selected`), the seed,
  and the options a benchmark declares as choosing *which* items run (`pooled`: RefuteBench's
  task families and setting), so a quick run and a full one, or two seeds, of one
  configuration are one row.
- The same item twice in one configuration (two directories of one seed holding it) counts
  once: the ledger names the second (`duplicate`). Under another seed it is another unit.
- Different configurations under one label are a row each, named by the label and what
  differs ("scripted/m (model scripted/m-stubborn)"; the directory where that says too
  little), whatever order the directories are given in: nothing pools in silence.

    for row in pool_rows(benches, pooled=("setting",), judges=only):
        row.label, row.benches, row.differs
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .board import BenchDir, told_apart

LONGEST = 60  # a difference longer than this names the row by its directory instead


@dataclass
class RowDirs:
    """One board row: its label (told apart from the label's other configurations), its
    directories, and what sets it apart ("" when its label has one configuration)."""

    label: str
    benches: list[BenchDir] = field(default_factory=list)
    differs: str = ""
    configuration: dict[str, Any] = field(default_factory=dict, repr=False)


def identity(resolved: Any, typed: str) -> str:
    """Who a model is, as configurations are compared: what it resolved to (a manifest's
    `resolved` entry: its model id, and the endpoint's URL when there is one), never the alias
    typed: alias A and A's model id typed on A's endpoint are one model, two aliases of one
    model id on two endpoints are two. A name with no entry (a scripted or local model, a
    manifest from before entries were kept) is itself."""
    if not isinstance(resolved, dict) or not isinstance(resolved.get("model"), str):
        return typed
    url = resolved.get("base_url")
    return f"{resolved['model']} at {url}" if url else resolved["model"]


def role_identity(manifest: dict[str, Any], role: str) -> str:
    """Who played `role` in a manifest's directory (`identity`)."""
    typed = (manifest.get("roles") or {}).get(role)
    return identity((manifest.get("resolved") or {}).get(role), str(typed))


def judge_identities(manifest: dict[str, Any], judges: Sequence[str] | None = None
                     ) -> list[str]:
    """Who the manifest's judges are (`identity`), sorted; only those whose judgments' name
    (`judge_names`: "alias (model id)" for an alias) is in `judges` when given."""
    names = manifest.get("judge_names") or {}
    resolved = manifest.get("resolved_judges") or {}
    return sorted(identity(resolved.get(typed), names.get(typed, typed))
                  for typed in manifest.get("judges") or []
                  if not judges or names.get(typed, typed) in judges)


def configuration(bench: BenchDir, pooled: Sequence[str] = (),
                  judges: Sequence[str] | None = None) -> dict[str, Any]:
    """How `bench`'s items were run, as the pooling rule compares it: each role and judge by
    who it resolved to (`identity`), not as typed."""
    m = bench.manifest
    # The items' digest is of the items the options built: where options pool, it differs
    # with them, and the items' file (its name) is what says they were run the same way.
    items = Path(m.get("items") or "").name if pooled else \
        m.get("items_digest") or m.get("items") or ""
    return {"roles": {role: role_identity(m, role) for role in m.get("roles") or {}},
            "sampling": m.get("sampling") or {},
            "judges": judge_identities(m, judges),
            "items": items,
            "items file": m.get("items") or "",
            "options": {k: v for k, v in (m.get("options") or {}).items() if k not in pooled},
            "judge options": m.get("judge_options") or {}}


def _fields(config: dict[str, Any]) -> dict[str, str]:
    """The configuration flattened to (field name -> value text), as a user would name each:
    a role by its name, an option by its flag's word."""
    out = {}
    for role, model in config["roles"].items():
        out[role] = str(model)
    for role, sampling in config["sampling"].items():
        out[f"{role} sampling"] = ", ".join(f"{k} {v}" for k, v in sorted(sampling.items())) \
            if isinstance(sampling, dict) else str(sampling)
    out["judges"] = ", ".join(config["judges"]) or "none"
    out["items"] = Path(config["items file"]).name or "the built-in set"
    out["items digest"] = str(config["items"])
    for group in ("options", "judge options"):
        for key, value in config[group].items():
            out[key.replace("_", "-")] = str(value)
    return out


def differing(configs: Sequence[dict[str, Any]]) -> list[str]:
    """The fields in which the configurations differ, in the order a configuration lists
    them; the items' digest only where their files' names say nothing of it."""
    flat = [_fields(c) for c in configs]
    names = list(dict.fromkeys(k for f in flat for k in f))
    out = [k for k in names if len({f.get(k) for f in flat}) > 1]
    # The items are the same when their digests are (a copy of the file elsewhere); when not,
    # their files' names tell them apart, or else their digests.
    if "items digest" not in out:
        return [k for k in out if k != "items"]
    return [k for k in out if k != ("items digest" if "items" in out else "items")]


def pool_rows(benches: Sequence[BenchDir], pooled: Sequence[str] = (),
              judges: Sequence[str] | None = None) -> list[RowDirs]:
    """The board's rows: `benches` grouped by (label, configuration), labels in the order
    first given, a label's configurations in an order of their own (not the arguments')."""
    by_label: dict[str, dict[str, RowDirs]] = {}
    for bench in benches:
        config = configuration(bench, pooled, judges)
        # Items are compared by digest (a copy of the file elsewhere is the same items).
        key = json.dumps({k: v for k, v in config.items() if k != "items file"},
                         sort_keys=True, default=str)
        rows = by_label.setdefault(bench.label, {})
        rows.setdefault(key, RowDirs(bench.label, configuration=config)).benches.append(bench)
    out: list[RowDirs] = []
    for label, rows in by_label.items():
        mine = [rows[key] for key in sorted(rows)]
        if len(mine) > 1:
            fields = differing([r.configuration for r in mine])
            for row in mine:
                flat = _fields(row.configuration)
                row.differs = "; ".join(f"{k} {flat.get(k, '-')}" for k in fields)
            names = [f"{label} ({row.differs})" for row in mine]
            if len(set(names)) < len(names) or any(len(r.differs) > LONGEST for r in mine):
                names = told_apart([label] * len(mine), [r.benches[0].path for r in mine])
            for row, name in zip(mine, names, strict=True):
                row.label = name
        out += mine
    return out


def pooling_notes(rows: Sequence[RowDirs]) -> list[str]:
    """One line per label run in several configurations: what differs, the rows it made."""
    by_label: dict[str, list[RowDirs]] = {}
    for row in rows:
        by_label.setdefault(row.benches[0].label, []).append(row)
    notes = []
    for label, mine in by_label.items():
        if len(mine) > 1:
            fields = differing([r.configuration for r in mine])
            notes.append(f"{label}: {len(mine)} configurations under one label (they differ "
                         f"in {', '.join(fields)}): not pooled, a row each")
    return notes
