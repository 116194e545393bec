"""Words that follow a count: ``1 case``, ``3 cases``, for pages, terminal output and errors."""

from __future__ import annotations


def noun(count: int, word: str, many: str | None = None) -> str:
    """``word`` in the number ``count`` asks for: ``case`` for 1, ``cases`` (or ``many``) else."""
    if count == 1:
        return word
    return many if many is not None else f"{word}s"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 case``, ``3 cases``: a count with its noun in the right number."""
    return f"{count} {noun(count, word, many)}"
