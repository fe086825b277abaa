"""RefuteBench 2.0 (Yan, Luo, Zhang 2025) as single-room dialogues on the kit: does a chat model
revise its answer when a user refutes it, and does the refutation stay in force?

    from tasks.refutebench import load_items, RefuteBenchScenario
    items = load_items(None, {"setting": "transient", "tasks": "mt,summ,writing"})
    for item_id, item in items.select(every=5): ...

The evaluator and the tables live in evaluation.refutebench; running it in sandbox.app.suites.
"""

from importlib import import_module

from .email_rules import CHECKERS, LANGUAGE_CODES, count_sentences, language_of
from .email_rules import met as email_met
from .items import (
    DEFAULT_LANGUAGE,
    OPTION_DEFAULTS,
    OUR_SET,
    Item,
    distractors_for,
    focus,
    load_file,
    load_items,
    parse_counts,
    parse_list,
)
from .models import (
    ANSWER_SAMPLING,
    ANSWER_TAG,
    ASSISTANT,
    ASSISTANT_SYSTEM,
    FAMILIES,
    FAMILY_NAMES,
    FOCI,
    JUDGE_SAMPLING,
    REFUTATIONS,
    REFUTER_SAMPLING,
    SCENARIO,
    SETTINGS,
    USER,
    ItemFile,
    Seed,
    Templates,
)
from .refuter import REFUTER_TAG, Refutation, Refuter, clean
from .v1 import (
    V1Dialogue,
    V1Item,
    draw_targets,
    feedback_text,
    load_v1,
    slot_words,
    unmet_senses,
)
from .v1_email import (
    EmailMulti,
    EmailRule,
    EmailSingle,
    choose,
    email_dialogue,
    unmet_choices,
)
from .v1_words import english_words, has_sense, target_words

# The dialogues themselves (which load the engine and the agents' chat module) are imported
# when first asked for: a board that reads a run's plan and rules loads neither.
_LAZY = {"RefuteBenchScenario": ".scenario", "plan": ".scenario", "V1Scenario": ".v1_dialogue",
         "V1User": ".v1_dialogue", "v1_plan": ".v1_dialogue"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANSWER_SAMPLING", "ANSWER_TAG", "ASSISTANT", "ASSISTANT_SYSTEM", "CHECKERS",
    "DEFAULT_LANGUAGE", "EmailMulti", "EmailRule", "EmailSingle", "LANGUAGE_CODES", "choose",
    "count_sentences", "draw_targets", "email_dialogue", "email_met", "feedback_text",
    "has_sense", "language_of", "target_words", "unmet_choices", "unmet_senses", "V1User",
    "FAMILIES", "FAMILY_NAMES", "FOCI", "JUDGE_SAMPLING", "OPTION_DEFAULTS", "OUR_SET",
    "REFUTATIONS",
    "REFUTER_SAMPLING", "REFUTER_TAG", "SCENARIO", "SETTINGS", "USER", "Item", "ItemFile",
    "RefuteBenchScenario", "Refutation", "Refuter", "Seed", "Templates", "V1Dialogue",
    "V1Item", "V1Scenario", "clean", "english_words", "load_v1", "slot_words",
    "v1_plan",
    "distractors_for", "focus", "load_file", "load_items", "parse_counts", "parse_list", "plan",
]
