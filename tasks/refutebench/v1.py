"""The public RefuteBench 1.0 MT files, run unchanged: single-feedback dialogues
(`data/mt/single/en-{zh,he}.{memory,generalization}.NC-{0..3}.jsonl` of ElliottYan/RefuteBench)
and multi-feedback documents (`data/mt/multi/en-{zh,he}.jsonl`).

One JSON object per line: `system_prompt`, `feedbacks` ({word: {translation: [senses], random,
existence, cnt}}), `feedback_prompt`, `feedback_mapping_prompt` ("... translate {src} to
{tgt}."), `queries` ([q0, "[MAYBE FEEDBACK]", k unrelated requests, the final query]: q0 again
in the memory files, another sentence with the word in the generalization files).

A multi file's queries are the sentences of one document with a `[MAYBE FEEDBACK]` slot after
each. The feedback is rule-based, as 1.0's src/test_mt.py decides it, and needs no refuter
model: at a slot, every feedback word not used yet that is a word of the query just before
(spaCy's English tokens, so "year" is a word of "year's" and "day" of "day-to-day") gets a line
of `feedback_mapping_prompt`, `feedback_prompt` first; a slot with no such word is skipped (no
message). A word's required translation is drawn, by the episode's seeded generator, from the
dictionary senses that are not words of the answer just before (jieba's segmentation for
Chinese, hebrew_tokenizer's for Hebrew: v1_words.py); when every sense of a word is there, the
dialogue is a conflict and stops, as 1.0's does (<CONFLICT>). Every later query that has the
word is checked without a judge: is the required translation a word of its answer?
(evaluation.refutebench.v1). The target language is the file's (`en-zh`, `en-he` in its name,
else "into Chinese|Hebrew" in its first query). The email files load here too (their format and
feedback rule are in v1_email.py); the QA format is refused with a one-line error naming the
file and line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.files import FileFormatError, read_text
from tasks.kit import ItemSet, content_digest, digest, slug

from .v1_email import (
    FEEDBACK_SLOT,
    EmailMulti,
    EmailSingle,
    email_model,
    email_problem,
    is_email,
)
from .v1_words import english_words, target_words

SETTING = "v1"


class WordSenses(BaseModel):
    model_config = ConfigDict(extra="ignore")

    translation: list[str] = Field(min_length=1)
    random: str = ""


class V1Dialogue(BaseModel):
    """One line of a 1.0 MT single-feedback file."""

    model_config = ConfigDict(extra="ignore")

    system_prompt: str
    feedbacks: dict[str, WordSenses] = Field(min_length=1)
    feedback_prompt: str = ""
    feedback_mapping_prompt: str = Field(pattern=r"\{src\}[\s\S]*\{tgt\}|\{tgt\}[\s\S]*\{src\}")
    queries: list[str] = Field(min_length=3)

    @property
    def word(self) -> str:
        return next(iter(self.feedbacks))

    @property
    def multi(self) -> bool:
        return self.queries.count(FEEDBACK_SLOT) > 1


def slot_words(dialogue: V1Dialogue) -> list[list[str]]:
    """For every query, the feedback words its slot gives ([] for a query or an empty slot):
    the unused words that occur in the query just before."""
    unused = list(dialogue.feedbacks)
    out: list[list[str]] = []
    for i, query in enumerate(dialogue.queries):
        if query != FEEDBACK_SLOT or i == 0 or dialogue.queries[i - 1] == FEEDBACK_SLOT:
            out.append([])
            continue
        before = set(english_words(dialogue.queries[i - 1]))
        words = [w for w in unused if w in before]
        unused = [w for w in unused if w not in words]
        out.append(words)
    return out


@dataclass
class V1Item:
    """What one 1.0 dialogue plays; `variant` is memory, generalization or multi, `format` mt
    or email."""

    dialogue: V1Dialogue | EmailSingle | EmailMulti
    file: str
    line: int
    variant: str
    language: str = ""  # MT: the target language, zh or he

    @property
    def format(self) -> str:
        return "mt" if isinstance(self.dialogue, V1Dialogue) else "email"

    @property
    def c(self) -> int:
        return 0 if self.dialogue.multi else len(self.dialogue.queries) - 3


def unmet_senses(dialogue: V1Dialogue, word: str, answer_before: str, language: str
                 ) -> list[str]:
    """The dictionary senses of `word` that are not words of the answer before the feedback."""
    present = set(target_words(answer_before, language))
    return [sense for sense in dialogue.feedbacks[word].translation if sense not in present]


def draw_targets(dialogue: V1Dialogue, words: list[str], answer_before: str, language: str,
                 rng: np.random.Generator) -> dict[str, str] | None:
    """Each word's required translation, drawn from its unmet senses in the file's order of
    words; None when a word has none left (1.0's conflict: the dialogue stops there)."""
    targets: dict[str, str] = {}
    for word in words:
        unmet = unmet_senses(dialogue, word, answer_before, language)
        if not unmet:
            return None
        targets[word] = unmet[int(rng.integers(len(unmet)))]
    return targets


def feedback_text(dialogue: V1Dialogue, targets: dict[str, str]) -> str:
    """The feedback turn: `feedback_prompt`, then a mapping line per word."""
    lines = [dialogue.feedback_mapping_prompt.replace("{src}", word).replace("{tgt}", target)
             for word, target in targets.items()]
    return dialogue.feedback_prompt + "".join(lines)


_PAIR = re.compile(r"(?:^|[^a-z])en-(zh|he)(?:[^a-z]|$)")
_INTO = re.compile(r"into (Chinese|Hebrew)\b")


def target_language(path: Path, dialogue: V1Dialogue) -> str | None:
    """zh or he: from the file's name (en-zh..., en-he...), else from its first query's
    "into Chinese|Hebrew"; None when neither tells."""
    named = _PAIR.search(path.name)
    if named:
        return named.group(1)
    asked = _INTO.search(dialogue.queries[0])
    return {"Chinese": "zh", "Hebrew": "he"}[asked.group(1)] if asked else None


def _no_duplicates(path: Path, line: int):
    def hook(pairs):
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise FileFormatError(path, f"the key {key!r} is given twice", f"line {line}")
            seen[key] = value
        return seen
    return hook


def _no_constant(path: Path, line: int):
    """NaN and Infinity are no JSON (Python's json reads them): refused, as every file is."""
    def refuse(name: str):
        raise FileFormatError(path, f"{name} is not JSON", f"line {line}")
    return refuse


def _format(path: Path, line: int, data: dict) -> str:
    """mt or email; the QA format stops here."""
    if "answers" in data:
        raise FileFormatError(path, "a RefuteBench 1.0 QA file; only the MT and email files "
                                    "run here", f"line {line}")
    return "email" if is_email(data) else "mt"


def load_v1(path: Path | str) -> ItemSet[V1Item]:
    """Every line of a 1.0 MT or email file (single or multi feedback); FileFormatError naming
    file, line and field."""
    path = Path(path)
    text = read_text(path)  # bounded and guarded: a 5 GiB file of no newline was read whole
    generalization = "generalization" in path.name
    file_format = None
    items, ids, origins = [], [], []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw, object_pairs_hook=_no_duplicates(path, number),
                              parse_constant=_no_constant(path, number))
        except json.JSONDecodeError as exc:
            raise FileFormatError(path, f"not JSON ({exc.msg})", f"line {number}") from exc
        if not isinstance(data, dict):
            raise FileFormatError(path, "expected a JSON object", f"line {number}")
        line_format = _format(path, number, data)
        file_format = file_format or line_format
        if line_format != file_format:
            raise FileFormatError(path, f"an {line_format} dialogue in a file of "
                                        f"{file_format} dialogues", f"line {number}")
        model = V1Dialogue if line_format == "mt" else email_model(data)
        try:
            dialogue = model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            where = f"line {number}.{field}" if field else f"line {number}"
            raise FileFormatError(path, first["msg"].removeprefix("Value error, "),
                                  where) from exc
        if dialogue.queries[0] == FEEDBACK_SLOT or FEEDBACK_SLOT not in dialogue.queries:
            raise FileFormatError(path, f"expected a first query, then {FEEDBACK_SLOT!r} "
                                        "slots", f"line {number}.queries")
        problem = None if line_format == "mt" else email_problem(dialogue)
        if problem:
            raise FileFormatError(path, problem[1], f"line {number}.{problem[0]}")
        language = target_language(path, dialogue) if line_format == "mt" else ""
        if language is None:
            raise FileFormatError(path, "cannot tell the target language: name the file "
                                        "en-zh... or en-he... as the public files are",
                                  f"line {number}")
        variant = "multi" if dialogue.multi else \
            "generalization" if generalization else "memory"
        # Ids from content: the word and a hash of the line; the same line twice (the public
        # files repeat some) is told apart by its rank among the copies.
        base = f"{slug(dialogue.word) or 'word'}_{digest(raw)}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
        items.append(V1Item(dialogue=dialogue, file=path.name, line=number, variant=variant,
                            language=language))
        origins.append(f"line {number} ({dialogue.word!r})")
    if not items:
        raise FileFormatError(path, "no dialogues in this file")
    return ItemSet(items=items, ids=ids, origins=origins, source=str(path),
                   digest=content_digest(text), ignored_keys=[])
