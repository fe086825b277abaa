"""The text judge format's one reader: the first or the last mark, as each benchmark declares."""

from __future__ import annotations

import pytest

from evaluation.kit import bracketed_number
from evaluation.refutebench import parse_rating as refute_rating
from evaluation.simulbench import parse_rating as simul_rating


@pytest.mark.parametrize("text, first, last", [
    ("Rating: [[7]]", 7, 7),
    ("[[2]] is low, [[ 4.5 ]] on reflection", 2, 4.5),
    ("no double marks, only [3] and [6]", 3, 6),
    ("[[3.]] with a point", 3.0, 3.0),
])
def test_the_first_or_the_last_mark(text, first, last):
    assert bracketed_number(text, "first") == first
    assert bracketed_number(text, "last") == last


def test_no_mark_is_an_error():
    with pytest.raises(ValueError, match="no \\[\\[rating\\]\\]"):
        bracketed_number("I would say seven.", "first")


def test_simulbench_takes_the_first_refutebench_the_last():
    text = "On a scale [[1]] to [[5]]: [[4]]"
    assert simul_rating(text).score == 1
    assert refute_rating(text).rating == 4
