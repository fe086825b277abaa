"""The public RefuteBench 1.0 files, run unchanged: MT single-feedback dialogues
(`data/mt/single/en-{zh,he}.{memory,generalization}.NC-{0..3}.jsonl` of ElliottYan/RefuteBench).

One JSON object per line: `system_prompt`, `feedbacks` ({word: {translation: [senses], random,
existence, cnt}}), `feedback_prompt`, `feedback_mapping_prompt` ("... translate {src} to
{tgt}."), `queries` ([q0, "[MAYBE FEEDBACK]", k unrelated requests, the final query]: q0 again
in the memory files, another sentence with the word in the generalization files).

The feedback is rule-based, as in 1.0, and needs no refuter model: the first dictionary sense
of the word that the first answer does not contain becomes the required translation ([ours]:
a substring test instead of 1.0's jieba tokens; when every sense is already there, 1.0 gives up
with <CONFLICT>, we take the file's `random` word). Whether the final answer contains it is
scored without a judge (evaluation.refutebench.v1). The other 1.0 formats (MT multi, email, QA)
are refused with a one-line error naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.files import FileFormatError
from tasks.kit import ItemSet, content_digest, digest, slug

FEEDBACK_SLOT = "[MAYBE FEEDBACK]"
SETTING = "v1"


class WordSenses(BaseModel):
    model_config = ConfigDict(extra="ignore")

    translation: list[str] = Field(min_length=1)
    random: str = ""


class V1Dialogue(BaseModel):
    """One line of a 1.0 MT single-feedback file."""

    model_config = ConfigDict(extra="ignore")

    system_prompt: str
    feedbacks: dict[str, WordSenses] = Field(min_length=1, max_length=1)
    feedback_mapping_prompt: str = Field(pattern=r"\{src\}[\s\S]*\{tgt\}|\{tgt\}[\s\S]*\{src\}")
    queries: list[str] = Field(min_length=3)

    @property
    def word(self) -> str:
        return next(iter(self.feedbacks))


@dataclass
class V1Item:
    """What one 1.0 dialogue plays; `variant` is memory or generalization."""

    dialogue: V1Dialogue
    file: str
    line: int
    variant: str

    @property
    def c(self) -> int:
        return len(self.dialogue.queries) - 3


def target(dialogue: V1Dialogue, first_answer: str) -> str:
    """The translation the feedback requires: the first sense the first answer lacks."""
    senses = dialogue.feedbacks[dialogue.word]
    for sense in senses.translation:
        if sense not in first_answer:
            return sense
    return senses.random or senses.translation[0]


def feedback_text(dialogue: V1Dialogue, first_answer: str) -> str:
    return dialogue.feedback_mapping_prompt.replace("{src}", dialogue.word).replace(
        "{tgt}", target(dialogue, first_answer))


def _no_duplicates(path: Path, line: int):
    def hook(pairs):
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise FileFormatError(path, f"the key {key!r} is given twice", f"line {line}")
            seen[key] = value
        return seen
    return hook


def _refuse_other_formats(path: Path, line: int, data: dict) -> None:
    if "answers" in data:
        raise FileFormatError(path, "a RefuteBench 1.0 QA file; only the MT single-feedback "
                                    "files run here", f"line {line}")
    if "domain" in data or "feedback_prompts" in data:
        raise FileFormatError(path, "a RefuteBench 1.0 email file; only the MT single-"
                                    "feedback files run here", f"line {line}")
    queries = data.get("queries")
    if isinstance(queries, list) and queries.count(FEEDBACK_SLOT) > 1:
        raise FileFormatError(path, "a RefuteBench 1.0 multi-feedback MT file; only the "
                                    "single-feedback files run here", f"line {line}")


def load_v1(path: Path | str) -> ItemSet[V1Item]:
    """Every line of a 1.0 MT single-feedback file; FileFormatError naming file, line, field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"cannot read it ({exc})") from exc
    variant = "generalization" if "generalization" in path.name else "memory"
    items, ids, origins = [], [], []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw, object_pairs_hook=_no_duplicates(path, number))
        except json.JSONDecodeError as exc:
            raise FileFormatError(path, f"not JSON ({exc.msg})", f"line {number}") from exc
        if not isinstance(data, dict):
            raise FileFormatError(path, "expected a JSON object", f"line {number}")
        _refuse_other_formats(path, number, data)
        try:
            dialogue = V1Dialogue.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise FileFormatError(path, first["msg"], f"line {number}.{field}") from exc
        if dialogue.queries[1] != FEEDBACK_SLOT:
            raise FileFormatError(path, f"the second query must be {FEEDBACK_SLOT!r}",
                                  f"line {number}.queries.1")
        # Ids from content: the word and a hash of the line; the same line twice (the public
        # files repeat some) is told apart by its rank among the copies.
        base = f"{slug(dialogue.word) or 'word'}_{digest(raw)}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
        items.append(V1Item(dialogue=dialogue, file=path.name, line=number, variant=variant))
        origins.append(f"line {number} ({dialogue.word!r})")
    if not items:
        raise FileFormatError(path, "no dialogues in this file")
    return ItemSet(items=items, ids=ids, origins=origins, source=str(path),
                   digest=content_digest(text), ignored_keys=[])
