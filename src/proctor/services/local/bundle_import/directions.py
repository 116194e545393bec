"""A column's direction where a bundle does not give one: read from its name.

Codabench's ``sorting``, CodaLab's ``sort`` and EvalAI's ``sort_ascending`` (or a split's
``is_leaderboard_order_descending``) say which way a column ranks; where the bundle says
nothing, the platforms rank it descending, higher first. A column named as an error, a loss
or a distance (``Difference``, ``RMSE``, ``log_loss``, ``hd95``) is better lower: it is
imported as ``lower`` and a warning names it, so an organizer sees the guess.
"""

from __future__ import annotations

import re

LOWER_WORDS = frozenset(
    {
        "difference", "diff", "error", "errors", "err", "loss", "distance", "dist",
        "mae", "mse", "rmse", "rmsle", "msle", "mape", "smape", "wape", "mase", "nll",
        "logloss", "brier", "hausdorff", "hd", "hd95", "assd", "asd", "wer", "cer", "ber",
        "eer", "fpr", "fnr", "perplexity", "deviation", "penalty", "regret", "cost",
        "runtime", "latency", "residual", "misclassification", "chamfer", "emd",
    }
)  # fmt: skip
"""Words of a column's name that make it lower-is-better (matched whole, any case)."""


def words(name: str) -> list[str]:
    """A name's words, lower case: split at anything not a letter or digit and at camelCase."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def reads_lower(*names: str) -> bool:
    """Whether any of a column's names (key, title) reads as an error, a loss or a distance."""
    for name in names:
        found = words(name)
        joined = "".join(found)
        if joined in LOWER_WORDS or any(word in LOWER_WORDS for word in found):
            return True
    return False


def unsaid_direction(names: tuple[str, ...], where: str, said: str, warnings: list[str]) -> str:
    """The direction of a column whose bundle gives none: ``lower`` (warned) or ``higher``.

    ``where`` is the column's place in the bundle and ``said`` the key that would give its
    direction; a name read as an error is ``lower``, anything else ``higher``, as the
    platforms rank it.
    """
    if not reads_lower(*names):
        return "higher"
    shown = " / ".join(dict.fromkeys(repr(name) for name in names if name))
    warnings.append(
        f"{where} {shown}: the bundle gives no {said}; imported as lower-is-better (its name "
        f"reads as an error, a loss or a distance): set {said} if higher is better"
    )
    return "lower"
