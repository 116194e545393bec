"""Counts with their nouns in the right number."""

from __future__ import annotations

from proctor.wording import noun, plural


def test_one_is_singular_and_others_plural() -> None:
    assert plural(1, "submission") == "1 submission"
    assert plural(0, "submission") == "0 submissions"
    assert plural(3, "case") == "3 cases"


def test_an_irregular_plural_is_given() -> None:
    assert noun(1, "has", "have") == "has"
    assert noun(2, "has", "have") == "have"
    assert plural(2, "does", "do") == "2 do"
