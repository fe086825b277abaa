"""The word lists of RefuteBench 1.0's MT feedback rule, made by the tools its src/test_mt.py
uses, so a word is "in" a text exactly when 1.0 says it is:

    english_words(text)           spaCy's English tokenizer (1.0 loads en_core_web_sm with its
                                  tagger only; the tokens are the language's rules, which
                                  spacy.blank("en") has without a model)
    target_words(text, "zh")      jieba's default segmentation (accurate mode, HMM on)
    target_words(text, "he")      hebrew_tokenizer's tokens
    has_sense(answer, sense, lang)  the sense is one of the answer's words

So a feedback word inside a hyphenated or possessive word counts ("day" in "day-to-day",
"year" in "year's": spaCy splits both), a one-character sense is not found inside a longer
word ("论" is not a word of "理论"), and a Hebrew sense with a prefix attached ("הבית" for
"בית") is another word. Each tool is loaded once, on first use (spaCy about 1.5 s, jieba's
dictionary about 1 s); nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import warnings
from functools import lru_cache

LANGUAGES = {"zh": "Chinese", "he": "Hebrew"}  # the target languages of the 1.0 MT files


@lru_cache(maxsize=1)
def _english():
    import spacy

    return spacy.blank("en").tokenizer


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    # jieba announces every dictionary load on stderr; the CLI's output is ours to keep clean.
    logging.getLogger("jieba").setLevel(logging.WARNING)
    segmenter = jieba.Tokenizer()
    segmenter.initialize()
    return segmenter


@lru_cache(maxsize=1)
def _hebrew():
    # hebrew_tokenizer 2.3.0, on import, prints the working directory, appends it to sys.path,
    # imports the deprecated sre_constants and compiles a pattern newer Pythons warn about (a
    # nested set). The pattern is what 1.0 tokenized with, so it stays; the noise does not.
    path = list(sys.path)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        import hebrew_tokenizer
    sys.path[:] = path
    return hebrew_tokenizer


def english_words(text: str) -> list[str]:
    """The tokens of an English query, as 1.0 matched feedback words against them."""
    return [token.text for token in _english()(text)] if text else []


def target_words(text: str, language: str) -> list[str]:
    """The words of a translation into `language` (zh or he)."""
    if not text:  # 1.0: an empty text has no words (jieba is never asked)
        return []
    if language == "zh":
        return list(_jieba().cut(text))
    if language == "he":
        return [token[1] for token in _hebrew().tokenize(text)]
    raise ValueError(f"no word list for target language {language!r} (zh or he)")


def has_sense(answer: str, sense: str, language: str) -> bool:
    """Whether the required translation is one of the answer's words."""
    return sense in target_words(answer, language)
