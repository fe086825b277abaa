"""bench/refutebench_checkers.py's table: a checker with any pair decided differently never
reads 100%, and the count of differing pairs is printed beside it."""

from __future__ import annotations

from tests.scripts import load_script

checkers = load_script("bench/refutebench_checkers.py")


def test_a_few_disagreements_in_many_pairs_are_not_rounded_up_to_100_percent():
    # 27 of 3,154 texts counted differently, each checked against 4 choices
    assert checkers.agreement(3154 * 4 - 27, 3154 * 4) == "99.78%"
    assert checkers.agreement(99_999, 100_000) == "99.99%"
    assert checkers.agreement(100_000, 100_000) == "100%"


def test_the_table_prints_how_many_pairs_differ(monkeypatch, capsys, tmp_path):
    rows = [checkers.Row("sentence", pairs=100_000, same=99_973), checkers.Row("title", 40, 40)]
    monkeypatch.setattr(checkers, "Reference", lambda seed: object())
    monkeypatch.setattr(checkers, "read_corpus", lambda path: checkers.Corpus())
    monkeypatch.setattr(checkers, "measure", lambda *args: rows)
    assert checkers.main(["--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| sentence | 100000 | 99973 | 27 | 99.97% |" in out
    assert "| title | 40 | 40 | 0 | 100% |" in out
    assert "below 99.5%: none" in out
