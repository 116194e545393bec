"""Naming what a bundle holds: Proctor names from titles, metric names from score keys."""

from __future__ import annotations

import re


def slug(text: str, fallback: str, length: int = 60) -> str:
    """A Proctor name from ``text``: lower case letters, digits and ``-`` (``fallback``: none)."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:length]
    return name or fallback


def derive_name(title: str, taken: set[str], fallback: str) -> str:
    """A Proctor name from a bundle's title (``Development Phase`` → ``development-phase``)."""
    base = slug(title, fallback, 56)
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    taken.add(name)
    return name


def is_metric_name(key: str) -> bool:
    """True when a score key is a Proctor metric name as it is (letters, digits, ``_``)."""
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9_]{0,63}$", key)) and key != "cases"


def metric_name(label: str, taken: set[str]) -> str:
    """A metric name for a score key or label that is none (``F1-score`` → ``F1_score``; unique)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_") or "metric"
    if not name[0].isalpha():
        name = f"m_{name}"
    name = name[:60]
    if name == "cases":
        name = "cases_"
    base, index = name, 2
    while name in taken:
        name, index = f"{base}_{index}", index + 1
    taken.add(name)
    return name
