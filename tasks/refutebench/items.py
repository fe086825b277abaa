"""RefuteBench's items: one dialogue per (seed query x setting x number of unrelated requests).

A transient item is a seed query with its 3 refutations; a persistent item is a seed query with
one standing refutation, C unrelated requests and the same query again, for each C of
--distractors. Ids are the seed's authored id (a slug, unique in its file), with `__c<C>` for a
persistent item: `mt-espresso-review`, `mt-espresso-review__c3`. The same seeds serve both
settings ([ours], spec section 6.5).

The schedules every model under test must share are drawn here from generators keyed by the
item, never by the episode: each refutation's focus by (seed id, refutation index), the
unrelated requests by the seed id (a C=1 item's request is the first of the C=3 item's, as
in 1.0's email files).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.errors import UserError
from sandbox.files import FileFormatError, load_model
from sandbox.hashing import stable_int
from tasks.kit import ItemSet, content_digest

from .models import FAMILIES, FOCI, REFUTATIONS, SETTINGS, ItemFile, Seed

OUR_SET = Path(__file__).with_name("items.yaml")
DEFAULT_LANGUAGE = "Chinese"


class Unset(str):
    """An option's default as the command line fills it in when it was not given: the same
    text (in the manifest, in comparisons), but a public 1.0 file, which takes none of the
    options, can tell it from a value the user gave (refused there: it would not apply)."""


# The command's options (tasks/refutebench/plugin.py) and their defaults.
OPTION_DEFAULTS = {"tasks": Unset(",".join(FAMILIES)), "setting": Unset("transient"),
                   "distractors": Unset("0,3"), "language": Unset(DEFAULT_LANGUAGE)}
V1_LANGUAGES = {"zh": "Chinese", "he": "Hebrew"}  # a 1.0 MT file's target, as --language names it


def refuse_options_on_v1(path: Path, items: ItemSet, options: dict[str, Any]) -> None:
    """A UserError in one line naming every option given (not an `Unset` default) that a 1.0
    file does not take: its families, setting, unrelated requests and language are its own
    (the run's headers say v1 whatever was given, while the manifest would record them)."""
    given = {name: value for name, value in options.items()
             if name in OPTION_DEFAULTS and not isinstance(value, Unset)}
    own = {V1_LANGUAGES.get(item.language, "") for item in items.items}
    if str(given.get("language", "")).strip().lower() in {x.lower() for x in own if x}:
        given.pop("language")  # the file's own language: it applies
    if not given:
        return
    said = ", ".join(f"--{name} {value}" for name, value in given.items())
    target = f"; its target language {'/'.join(sorted(x for x in own if x))}" \
        if own - {""} else ""
    raise UserError(f"{said} {'does' if len(given) == 1 else 'do'} not apply to a RefuteBench "
                    f"1.0 file ({path.name} runs as it is: its own requests, feedback and "
                    f"setting{target}); drop {'it' if len(given) == 1 else 'them'}")


def keyed(*parts: object) -> random.Random:
    """A generator that depends only on `parts` (never on Python's hash seed)."""
    return random.Random(stable_int("|".join(str(p) for p in parts), 16))


def focus(seed_id: str, k: int) -> str:
    """The focus of refutation k (1-based) of a seed: uniform over FOCI, the same for every
    model under test and every setting."""
    return keyed("focus", seed_id, k).choice(FOCI)


def distractors_for(seed_id: str, pool: list[str], count: int) -> list[str]:
    """The first `count` of the seed's fixed draw of unrelated requests (no repeats)."""
    if count == 0:
        return []
    order = list(range(len(pool)))
    keyed("distractors", seed_id).shuffle(order)
    return [pool[i] for i in order[:count]]


@dataclass
class Item:
    """What one dialogue plays."""

    seed: Seed
    query: str
    setting: str
    distractors: list[str] = field(default_factory=list)  # persistent: the C requests

    @property
    def c(self) -> int:
        return len(self.distractors)

    @property
    def foci(self) -> list[str]:
        count = REFUTATIONS if self.setting == "transient" else 1
        return [focus(self.seed.id, k) for k in range(1, count + 1)]


def parse_list(text: str | list, option: str, allowed: tuple[str, ...] | None = None
               ) -> list[str]:
    """'mt,summ' -> ['mt', 'summ'] (a list passes through); UserError naming the option."""
    values = text if isinstance(text, list) else [v.strip() for v in str(text).split(",")]
    values = [v for v in values if v]
    if not values:
        raise UserError(f"--{option}: give at least one value")
    if allowed is not None:
        for value in values:
            if value not in allowed:
                raise UserError(f"--{option}: unknown value {value!r} (known: "
                                f"{', '.join(allowed)})")
    return list(dict.fromkeys(values))


def parse_counts(text: str | list) -> list[int]:
    """'0,3' -> [0, 3]; each from 0 to 3 (the paper's C, and 1.0's NC-0..NC-3)."""
    counts = []
    for value in parse_list([str(v) for v in text] if isinstance(text, list) else text,
                            "distractors"):
        if not value.isdigit() or int(value) > 3:
            raise UserError(f"--distractors: {value!r} is not a count from 0 to 3")
        counts.append(int(value))
    return sorted(set(counts))


def load_file(path: Path | str | None = None) -> ItemFile:
    return load_model(path or OUR_SET, ItemFile)


def load_items(path: Path | str | None, options: dict[str, Any]) -> ItemSet[Item]:
    """The items of a run: the file's seeds of the chosen task families, in one setting.

    `options`: tasks ('mt,summ,writing'), setting, distractors ('0,3'), language. A
    `.jsonl` file is a public RefuteBench 1.0 MT or email file, run as it is (tasks/
    refutebench/v1.py): an option given with it is a UserError (it would not apply), but for
    --language naming the file's own target language."""
    if path is not None and Path(path).suffix == ".jsonl":
        from .v1 import load_v1

        items = load_v1(path)
        refuse_options_on_v1(Path(path), items, options)
        return items
    tasks = parse_list(options.get("tasks", ",".join(FAMILIES)), "tasks", FAMILIES)
    setting = options.get("setting", "transient")
    if setting not in SETTINGS:
        raise UserError(f"--setting: unknown setting {setting!r} (known: {', '.join(SETTINGS)})")
    if setting != "persistent" and not isinstance(options.get("distractors", Unset()), Unset):
        raise UserError(f"--distractors {options['distractors']}: the unrelated requests are "
                        "those of the persistent setting; add --setting persistent or drop it")
    counts = parse_counts(options.get("distractors", "0,3")) if setting == "persistent" else [0]
    language = str(options.get("language", DEFAULT_LANGUAGE)).strip()
    if not language:
        raise UserError("--language: give the target language of the translations")
    source = Path(path or OUR_SET)
    data = load_file(source)
    if setting == "persistent" and max(counts) > len(data.distractors):
        raise FileFormatError(source, f"needs at least {max(counts)} unrelated requests for "
                                      f"--distractors {max(counts)}", "distractors")
    items, ids, origins, spread = [], [], [], []
    within = dict.fromkeys(FAMILIES, 0)
    for i, seed in enumerate(data.seeds):
        if seed.family not in tasks:
            continue
        rank = within[seed.family]
        within[seed.family] += 1
        query = data.query(seed, language)
        for c in counts:
            items.append(Item(seed=seed, query=query, setting=setting,
                              distractors=distractors_for(seed.id, data.distractors, c)))
            ids.append(seed.id if setting == "transient" else f"{seed.id}__c{c}")
            origins.append(f"seeds.{i} ({seed.id})")
            # --every K keeps one seed in K of every family, with all its C values.
            spread.append(rank)
    played = {"templates": data.templates.model_dump(), "language": language,
              "seeds": [s.model_dump() for s in data.seeds if s.family in tasks],
              "distractors": data.distractors if setting == "persistent" else []}
    return ItemSet(items=items, ids=ids, origins=origins,
                   source="" if path is None else str(path), digest=content_digest(played),
                   spread=spread)
