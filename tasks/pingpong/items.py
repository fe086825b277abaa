"""PingPong's items: every character x situation pair of a set, with an id that never collides.

The id is `<character>__<hash of the situation text>`. The character part is readable where the
script allows and exact otherwise (tasks.kit.name_id: 'Анна Каренина' -> 'анна-каренина',
'anna' -> 'anna_<hash of the name>'); two different cards with the same name each get a hash of
their card as well. The same card twice is a collision: an error naming both pairs.
"""

from __future__ import annotations

from tasks.kit import ItemSet, content_digest, digest, distinguish, name_id

from .models import Character, RoleplaySet, Situation

Pair = tuple[Character, Situation]


def character_ids(roleplay: RoleplaySet) -> list[str]:
    cards = [c.model_dump(mode="json") for c in roleplay.characters]
    return distinguish([name_id(c.char_name) for c in roleplay.characters], cards)


def pair_items(roleplay: RoleplaySet) -> ItemSet[Pair]:
    """Every pair, in character-major order, spread so that `--every K` varies both the
    character and the situation (the grid walked as c * (S + 1) + s)."""
    people = character_ids(roleplay)
    width = len(roleplay.situations) + 1
    items, ids, origins, spread = [], [], [], []
    for c, character in enumerate(roleplay.characters):
        for s, situation in enumerate(roleplay.situations):
            items.append((character, situation))
            ids.append(f"{people[c]}__{digest(situation.text)}")
            origins.append(f"characters.{c} ({character.char_name!r}) x situations.{s} "
                           f"({situation.text[:30]!r})")
            spread.append(c * width + s)
    played = roleplay.model_dump(mode="json", include={"characters", "situations"})
    return ItemSet(items=items, ids=ids, origins=origins, source=roleplay.source,
                   digest=content_digest(played), spread=spread,
                   ignored_keys=roleplay.ignored_keys)
