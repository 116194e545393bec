"""A bundle's pages: which of Proctor's pages each one is, copied under ``pages/``."""

from __future__ import annotations

import shutil
from pathlib import Path

from proctor.services.local.bundle_import.reading import bundle_file
from proctor.spec.display import PAGE_SUFFIXES, PageName

PAGE_WORDS: tuple[tuple[PageName, tuple[str, ...]], ...] = (
    ("terms", ("terms", "rules", "condition")),
    ("evaluation", ("evaluat", "scoring", "metric")),
    ("data", ("data",)),
    ("overview", ("overview", "description", "home", "welcome", "about")),
)
"""The words of a bundle page's title (or CodaLab ``html:`` key) that name Proctor's page."""


def page_name(title: str) -> PageName | None:
    """Which of Proctor's pages (``spec.display``) a bundle page of this title is, or None."""
    lowered = title.lower()
    for name, words in PAGE_WORDS:
        if any(word in lowered for word in words):
            return name
    return None


def copy_pages(
    bundle: Path, pages: list[tuple[str, str]], dest: Path, warnings: list[str]
) -> dict[PageName, str]:
    """Copy the bundle's pages (title, file) under ``dest/pages``; the ``pages:`` mapping.

    A page is shown as the overview, data, evaluation or terms page its title names (the
    first unnamed one as the overview when no page is called so); any other page is copied
    and left out of the mapping with a warning.
    """
    found: dict[PageName, str] = {}
    unnamed: list[tuple[str, str]] = []
    for title, reference in pages:
        source = bundle_file(bundle, reference)
        if source is None or not source.is_file():
            warnings.append(f"page {title!r} ({reference}): no such file in the bundle: left out")
            continue
        if source.suffix.lower() not in PAGE_SUFFIXES:
            warnings.append(f"page {title!r} ({reference}): neither Markdown nor HTML, left out")
            continue
        target = dest / "pages" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        name, path = page_name(title), f"pages/{source.name}"
        if name is not None and found.get(name) == path:
            continue  # the same file named twice (v2's `terms:` and a Terms page): shown
        if name is None or name in found:
            unnamed.append((title, path))
        else:
            found[name] = path
    if unnamed and "overview" not in found:
        found["overview"] = unnamed.pop(0)[1]
    for title, path in unnamed:
        warnings.append(
            f"page {title!r}: copied to {path} but not shown (Proctor shows the overview, "
            "data, evaluation and terms pages)"
        )
    return found
