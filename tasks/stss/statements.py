"""What a public task's sentences state (its time, its place, a head count), and the same
sentences rewritten so that they state the time and place a seed draws.

    told = tell_drawn_values({"FPG": goal, "Description": target}, world=world,
                             time_choices=["17:00", "19:00"], duration=120,
                             location_choices=["ville:Hobbs Cafe", "ville:Johnson Park"])
    told.sentences["FPG"]      # '... a party at {place} from {time} to {end_time}.'
    told.time_choices          # the choices left: fewer when a sentence could not be rewritten
    told.notes, told.warnings  # what the import changed, and what the public data contradicts

A public task's sentence is written for one time and place ("at Hobbs Cafe at 2023-02-14
19:00"), while its `time_choices` / `location_choices` let a seed draw another: the performer
would be told one thing and scored on another. So a statement of the task's time or place
becomes a placeholder ({time}, {end_time}, {place}); one that cannot be rewritten safely (a
time in words, a place named outside an "at/in/to ..." phrase) keeps its words, and the
choices shrink to what it states, as an import note.

Times read: '2023-02-14 19:00' (only the clock is rewritten; a task's day is fixed), '19:00',
'7pm', '7:30 p.m.', ranges ('from 5pm to 7pm', '17:00-19:00', 'between 5pm and 7pm'); in words
'noon', 'midnight', 'seven o'clock (in the evening)'. Places: the world's sectors by name,
ignoring case and punctuation and with the synonyms of PLACE_SYNONYMS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from worlds import Address, World

# Words the public tasks use for the same kind of place under another name: two public tasks
# say "Hobbs Coffee" for the town's Hobbs Cafe. Kept small and explicit, so that a near match
# is a spelling of one place, never a guess between two.
PLACE_SYNONYMS = {"coffee": "cafe", "café": "cafe"}

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def place_key(name: str) -> str:
    """A place name as near matching compares it: lower case, punctuation as spaces, synonyms
    as their one word ("Hobbs coffee" and "Hobbs Cafe" -> "hobbs cafe")."""
    words = re.sub(r"[\W_]+", " ", name.lower()).split()
    return " ".join(PLACE_SYNONYMS.get(w, w) for w in words)


def name_pattern(name: str) -> str:
    """A regex for the spellings of `name` that place_key takes for the same name."""
    spellings: dict[str, set[str]] = {}
    for word, canonical in PLACE_SYNONYMS.items():
        spellings.setdefault(canonical, {canonical}).add(word)
    words = place_key(name).split()
    parts = ["(?:" + "|".join(sorted(map(re.escape, spellings.get(w, {w})))) + ")" for w in words]
    return r"(?<!\w)" + r"[\W_]+".join(parts) + r"(?!\w)"


# -- days ----------------------------------------------------------------------------------------
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_DAY = re.compile(r"\b(?P<iso>(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2}))\b|"
                  rf"\b(?P<month>{'|'.join(_MONTHS)})\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?"
                  r"(?:,?\s+(?P<my>\d{4}))?\b", re.IGNORECASE)


@dataclass(frozen=True)
class DayMention:
    """A day a sentence names: '2023-02-14', 'February 14th', 'February 14, 2023' (year 0:
    none given)."""

    text: str
    year: int
    month: int
    day: int


def stated_days(text: str) -> list[DayMention]:
    """The days `text` names, in order; a date that does not exist ('2023-02-30') is none."""
    found = []
    for m in _DAY.finditer(text):
        if m["iso"]:
            year, month, day = int(m["y"]), int(m["m"]), int(m["d"])
        else:
            year, day = int(m["my"] or 0), int(m["md"])
            month = _MONTHS.index(m["month"].lower()) + 1
        try:
            date(year or 2000, month, day)  # 2000: a leap year, so February 29 stands alone
        except ValueError:
            continue
        found.append(DayMention(m[0], year, month, day))
    return found


# -- times ---------------------------------------------------------------------------------------
_CLOCK = re.compile(r"""
    (?P<day>\d{4}-\d{2}-\d{2})[ T](?P<dclock>(?P<dh>\d{1,2}):(?P<dm>\d{2})(?::\d{2})?)
  | (?<![\d:])(?P<h12>\d{1,2})(?::(?P<m12>\d{2}))?\s*(?P<ap>[ap])\.?\s?m\b
    (?:\.(?=\s+[a-z]))?                 # the dot of 'p.m.', not the sentence's full stop
  | (?<![\d:])(?P<h24>\d{1,2}):(?P<m24>\d{2})(?![\d:])
""", re.IGNORECASE | re.VERBOSE)
_IN_WORDS = re.compile(
    r"\b(?:(?P<noon>noon|midday)|(?P<midnight>midnight)|(?P<n>\d{1,2}|"
    + "|".join(NUMBER_WORDS) + r")\s+o['’]?clock(?:\s+(?P<part>in the morning|in the afternoon"
    r"|in the evening|at night|tonight))?)\b", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|until|till)\s*$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
_AND = re.compile(r"^\s*and\s*$", re.IGNORECASE)
_UNTIL = re.compile(r"\b(?:until|till|ends? at|finish(?:es)? at)\s+$", re.IGNORECASE)


@dataclass(frozen=True)
class TimeMention:
    """A time a sentence states: where (the span to rewrite), the clock, and its day if any."""

    start: int
    end: int
    clock: str  # HH:MM
    day: date | None = None


def time_mentions(text: str) -> list[TimeMention]:
    """The clock times `text` states in figures, in order."""
    found = []
    for m in _CLOCK.finditer(text):
        if m["day"]:
            hours, minutes, span = int(m["dh"]), int(m["dm"]), m.span("dclock")
        elif m["h12"]:
            hours, minutes, span = int(m["h12"]) % 12, int(m["m12"] or 0), m.span()
            hours += 12 if m["ap"].lower() == "p" else 0
        else:
            hours, minutes, span = int(m["h24"]), int(m["m24"]), m.span()
        if hours > 23 or minutes > 59:
            continue
        try:
            day = date.fromisoformat(m["day"]) if m["day"] else None
        except ValueError:  # not a real date: not a statement of the task's day
            day = None
        found.append(TimeMention(span[0], span[1], f"{hours:02d}:{minutes:02d}", day))
    return found


def times_in_words(text: str) -> list[tuple[str, set[str]]]:
    """Times `text` states in words, each with the clocks it may mean ('seven o'clock' alone is
    07:00 or 19:00)."""
    found = []
    for m in _IN_WORDS.finditer(text):
        if m["noon"]:
            clocks = {"12:00"}
        elif m["midnight"]:
            clocks = {"00:00"}
        else:
            hour = int(m["n"]) if m["n"].isdigit() else NUMBER_WORDS[m["n"].lower()]
            if not 1 <= hour <= 12:
                continue
            part = (m["part"] or "").lower()
            morning, later = hour % 12, hour % 12 + 12
            clocks = {f"{morning:02d}:00"} if part == "in the morning" else \
                {f"{later:02d}:00"} if part else {f"{morning:02d}:00", f"{later:02d}:00"}
        found.append((m[0], clocks))
    return found


def _plus(clock: str, minutes: int) -> str:
    return (datetime(2000, 1, 1, *map(int, clock.split(":"))) + timedelta(minutes=minutes)) \
        .strftime("%H:%M")


# -- places --------------------------------------------------------------------------------------
_LOCATIVE = re.compile(r"\b(?:at|in|inside|into|to|near|outside|around)\s+(?P<the>the\s+)?$",
                       re.IGNORECASE)


@dataclass(frozen=True)
class PlaceMention:
    """A place a sentence names: a sector, or an arena written as an address ("Oak Hill
    College:classroom"); `locative` when it is named as where something happens ("at Hobbs
    Cafe", "to the Hobbs Cafe"), and then `start` includes the "the"."""

    start: int
    end: int
    place: Address
    locative: bool

    @property
    def sector(self) -> Address:
        return self.place.up_to("sector")


def place_mentions(text: str, world: World) -> list[PlaceMention]:
    """Every sector of `world` that `text` names, longest names first where they overlap
    ("Dorm for Oak Hill College" is not also "Oak Hill College")."""
    hits = []
    for sector in world.sectors():
        for m in re.finditer(name_pattern(sector.parts[-1]), text, re.IGNORECASE):
            hits.append((m.start(), m.end(), sector))
    hits.sort(key=lambda h: (-(h[1] - h[0]), h[0]))
    taken: list[tuple[int, int, Address]] = []
    for hit in hits:
        if all(hit[1] <= t[0] or hit[0] >= t[1] for t in taken):
            taken.append(hit)
    found = []
    for start, end, place in sorted(taken, key=lambda h: h[0]):
        if text[end:end + 1] == ":":  # the public files write an arena as its address
            for arena in sorted(world.arenas(place), key=lambda a: -len(a.parts[-1])):
                after = re.match(name_pattern(arena.parts[-1]), text[end + 1:], re.IGNORECASE)
                if after:
                    end, place = end + 1 + after.end(), arena
                    break
        before = _LOCATIVE.search(text[:start])
        if before:
            start = before.start("the") if before["the"] else start
        found.append(PlaceMention(start, end, place, before is not None))
    return found


# -- head counts ---------------------------------------------------------------------------------
_COUNT = re.compile(r"\b(?P<n>\d+|" + "|".join(NUMBER_WORDS) + r")\s+(?:more\s+|other\s+)?"
                    r"(?:people|persons|guests|friends|participants|attendees|residents"
                    r"|characters|companions|others|villagers|audience)\b", re.IGNORECASE)


def stated_counts(text: str) -> list[int]:
    """The head counts `text` states ('have 6 people', 'five guests')."""
    return [int(m["n"]) if m["n"].isdigit() else NUMBER_WORDS[m["n"].lower()]
            for m in _COUNT.finditer(text)]


# -- the rewrite ---------------------------------------------------------------------------------
@dataclass
class Told:
    """A task's sentences as the performer will be told them (with placeholders), the choices
    a seed may still draw from, and what the import says about it."""

    sentences: dict[str, str]
    time_choices: list[str]
    location_choices: list[str]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def tell_drawn_values(sentences: dict[str, str], *, world: World, time_choices: list[str],
                      duration: int | None, location_choices: list[str],
                      day: date | None = None) -> Told:
    """`sentences` (field name -> text) with every statement of the task's time and place
    rewritten as {time}, {end_time}, {place}; see the module docstring. A task without time
    choices (or place choices) keeps its times (or places) as written: nothing is drawn."""
    # A placeholder states whatever is drawn, so the statements are read against every choice
    # and the choices narrowed after, for all the sentences at once.
    told = Told(dict(sentences), list(time_choices), list(location_choices))
    for name, text in sentences.items():
        spans: list[tuple[int, int, str]] = []
        if time_choices:
            spans += _tell_time(name, text, told, time_choices, duration or 0, day)
        if location_choices:
            spans += _tell_place(name, text, told, location_choices, world)
        told.sentences[name] = _replace(text, spans)
    return told


def _tell_time(name: str, text: str, told: Told, choices: list[str], duration: int,
               day: date | None) -> list[tuple[int, int, str]]:
    ends = {_plus(c, duration): c for c in choices}
    mentions, spans, i = time_mentions(text), [], 0
    while i < len(mentions):
        first = mentions[i]
        if first.day is not None and day is not None and first.day != day:
            told.warnings.append(f"{name} states the day {first.day}, but the task is on {day}")
        second = mentions[i + 1] if i + 1 < len(mentions) else None
        between = text[first.end:second.start] if second else ""
        is_range = second is not None and (
            _RANGE_JOIN.match(between) or (_AND.match(between) and
                                           _BETWEEN.search(text[:first.start])))
        if is_range and first.clock in choices:
            spans += [(first.start, first.end, "{time}"), (second.start, second.end, "{end_time}")]
            scored_end = _plus(first.clock, duration)
            if second.clock != scored_end:
                told.warnings.append(
                    f"{name} states the window {first.clock}-{second.clock}, but the task is "
                    f"scored over {duration} minutes ({first.clock}-{scored_end}); the sentence "
                    "now states the scored window")
            i += 2
            continue
        if first.clock in ends and _UNTIL.search(text[:first.start]):  # "until 9pm"
            spans.append((first.start, first.end, "{end_time}"))
        elif first.clock in choices:
            spans.append((first.start, first.end, "{time}"))
        else:
            told.warnings.append(
                f"{name} states {first.clock}, which is neither a time the task starts at "
                f"({', '.join(choices)}) nor the end of its window; left as written")
        i += 1
    for words, clocks in times_in_words(text):
        kept = [c for c in told.time_choices if c in clocks]
        if not kept:
            told.warnings.append(f"{name} states the time as {words!r}, which is none of the "
                                 f"times the task may start at "
                                 f"({', '.join(told.time_choices)}); left as written")
        elif kept != told.time_choices:
            told.notes.append(f"{name} states the time in words ({words!r}), which is not "
                              f"rewritten: time_choices kept to {', '.join(kept)}")
            told.time_choices = kept
    return spans


def _tell_place(name: str, text: str, told: Told, choices: list[str],
                world: World) -> list[tuple[int, int, str]]:
    sectors = {str(world.resolve(c).up_to("sector")).lower() for c in choices}
    mentions = place_mentions(text, world)
    ours = [m for m in mentions if str(m.sector).lower() in sectors]
    spans = [(m.start, m.end, "{place}") for m in ours if m.locative]
    for m in ours:
        if m.locative:
            continue
        kept = [c for c in told.location_choices if m.sector.contains(world.resolve(c))]
        if not kept:  # another statement kept another place: the sentences disagree
            told.warnings.append(f"{name} names {m.sector.parts[-1]}, but another statement "
                                 f"keeps the task at {', '.join(told.location_choices)}")
        elif kept != told.location_choices:
            told.notes.append(f"{name} names {m.sector.parts[-1]} outside an 'at/in/to ...' "
                              "phrase, where it cannot be rewritten safely: location_choices "
                              f"kept to {', '.join(kept)}")
            told.location_choices = kept
    others = [m for m in mentions if m.locative and str(m.sector).lower() not in sectors]
    if not ours and len({m.sector for m in others}) == 1:
        other = others[0].sector.parts[-1]
        spans += [(m.start, m.end, "{place}") for m in others]
        told.warnings.append(
            f"{name} names {other} as the place, but the task is scored at "
            f"{', '.join(choices)}; the sentence now names the place drawn")
    elif not ours and others:
        told.warnings.append(
            f"{name} names {', '.join(sorted({m.sector.parts[-1] for m in others}))}, none of "
            f"them the place the task is scored at ({', '.join(choices)}); left as written")
    return spans
