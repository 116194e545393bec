"""How a challenge's pages look: the digits shown per metric and the bundle's own pages.

::

    precision: {mae: 2, auroc: 3}      # digits after the decimal point on the pages
    pages:                              # Markdown (.md) or HTML (.html) files of the bundle
      overview: pages/overview.md
      data: pages/data.html
      evaluation: pages/evaluation.md
      terms: pages/terms.md

A metric without a precision shows 4 digits; a count (a metric of direction ``neutral``)
always shows as an integer. The pages are rendered sanitized (``web.pages.bundle_pages``):
no script, no style, no event handler survives.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from proctor.spec.protocols import LocatedError

PageName = Literal["overview", "data", "evaluation", "terms"]
PAGE_NAMES: tuple[PageName, ...] = ("overview", "data", "evaluation", "terms")
PAGE_SUFFIXES = (".md", ".markdown", ".html", ".htm")
DEFAULT_PRECISION = 4
MAX_PRECISION = 12


def check_precision(precision: dict[str, int], reported: set[str]) -> None:
    """Refuse a precision for a metric no task reports, or outside 0..12 digits."""
    for metric, digits in precision.items():
        if metric not in reported:
            raise LocatedError(
                f"no task reports metric {metric!r} (metrics: {', '.join(sorted(reported))})",
                f"precision.{metric}",
            )
        if isinstance(digits, bool) or not 0 <= digits <= MAX_PRECISION:
            raise LocatedError(
                f"{digits!r} is no number of digits: write 0 to {MAX_PRECISION}",
                f"precision.{metric}",
            )


def check_page_path(name: str, path: str) -> None:
    """Refuse a page path that leaves the bundle or is neither Markdown nor HTML."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        raise LocatedError(
            f"{path!r} leaves the challenge folder: name a file inside it", f"pages.{name}"
        )
    if pure.suffix.lower() not in PAGE_SUFFIXES:
        raise LocatedError(
            f"{path!r} is neither Markdown nor HTML: name a {'/'.join(PAGE_SUFFIXES)} file",
            f"pages.{name}",
        )
