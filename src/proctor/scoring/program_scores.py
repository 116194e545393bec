"""A scoring program's finished run judged: its exit, then its scores file.

:func:`judge` turns a run into scores or a :class:`ScoringProgramError` (the organizer's
failure, with the program's output tails for the organizer's log). The scores file is
``scores.json``, or CodaLab's ``scores.txt``. Every declared metric must be a finite number
(``computed`` ones are made here from the written ones; with ``missing_metrics: empty`` one
not written has no value, as on Codabench; ``score_keys`` names the key a metric is written
under where that is no metric name); keys the YAML does not declare, and cases the
task does not have, are left out with a warning for the organizer's log. A document that
cannot be used is a ``ValueError`` naming what is wrong: the scoring program's (the
organizer's) failure.
"""

from __future__ import annotations

import decimal
import json
import math
from collections.abc import Sequence
from typing import Any

from proctor.formats.bounded_yaml import YamlBounds, YamlDocumentError, load_text
from proctor.scoring.base import TaskScores
from proctor.spec.programs import SCORES_FILE, ProgramResult
from proctor.spec.scorer import ScoringProgram
from proctor.wording import noun

SCORES_TXT_BOUNDS = YamlBounds(max_bytes=16 * 1024**2, max_nodes=100_000, max_depth=20)
"""A ``scores.txt`` at most: 16 MiB, 100,000 values once its aliases are expanded, 20 levels."""
MAX_JSON_VALUES = 1_000_000
"""A ``scores.json`` holds at most this many values (counted as its ``,``, ``[`` and ``{``)."""


class ScoringProgramError(Exception):
    """The scoring program failed: ``reason`` (one line) and ``log`` (its output's tails).

    Both are for the organizer only: the program has read the hidden references.
    """

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = log


def judge(
    spec: ScoringProgram, result: ProgramResult, cases: Sequence[str], pages: dict[str, str]
) -> TaskScores:
    """The scores of a finished run; a ``ScoringProgramError`` when it failed or wrote none."""
    problem = result.problem()
    if problem is not None:
        raise ScoringProgramError(f"the scoring program {problem}", result.log())
    if result.scores_problem is not None:
        raise ScoringProgramError(result.scores_problem, result.log())
    if result.scores_file is None:
        names = " or ".join(spec.scores_files)
        raise ScoringProgramError(
            f"the scoring program wrote no {names} in {spec.mounts.scores}", result.log()
        )
    try:
        found = parse_scores_file(result.scores_file, result.scores_name)
        summary, per_case, warnings = read_scores(found, spec, cases)
    except ValueError as err:
        raise ScoringProgramError(f"{result.scores_name}: {err}", result.log()) from None
    notes = "".join(f"warning: {text}\n" for text in warnings)
    return TaskScores(summary, per_case, log=notes + result.log(), pages=pages)


def _number(value: Any, where: str, spec: ScoringProgram) -> float:
    """``value`` as a finite float, as the spec reads scores; ``ValueError`` naming ``where``."""
    if isinstance(value, bool) and spec.booleans == "numbers":
        return float(value)
    if isinstance(value, str) and spec.strings == "numbers":
        return _spelled(value, where)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} is {type(value).__name__}, not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{where} is {value}, not a finite number")
    return number


def _spelled(text: str, where: str) -> float:
    """The finite number ``text`` spells (``"0.91"``, ``"1e-05"``), as a decimal column reads it."""
    try:
        number = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise ValueError(f"{where} is the text {text[:40]!r}, not a number") from None
    if not (number.is_finite() and math.isfinite(float(number))):  # 1e999: finite, not a float
        raise ValueError(f"{where} is {text[:40]!r}, not a finite number")
    return float(number)


def _json_constant(name: str) -> float:
    """NaN and Infinity parse (to be refused as not finite, naming the metric)."""
    return float(name.lower().replace("infinity", "inf"))


def parse_scores_file(data: bytes, name: str = SCORES_FILE) -> Any:
    """The document a program wrote: JSON, or ``key: value`` YAML for a ``.txt`` file.

    ``scores.txt`` is CodaLab's form (``accuracy: 0.91`` per line); it is read as YAML as
    Codabench reads it, within :data:`SCORES_TXT_BOUNDS` (aliases expanding past them are
    refused before a value is built); JSON within :data:`MAX_JSON_VALUES`. ``ValueError``
    when the bytes are not such a document.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        kind = "`key: value` lines" if name.endswith(".txt") else "a JSON document"
        raise ValueError(f"not {kind}: not UTF-8 text ({err})") from None
    if name.endswith(".txt"):
        try:
            return load_text(text, SCORES_TXT_BOUNDS)
        except YamlDocumentError as err:
            raise ValueError(f"not `key: value` lines: {err}") from None
    values = text.count(",") + text.count("[") + text.count("{")
    if values > MAX_JSON_VALUES:
        raise ValueError(
            f"more than {MAX_JSON_VALUES} values (counted as its `,`, `[` and `{{`): "
            "write the metrics and their per-case rows only"
        )
    try:
        return json.loads(text, parse_constant=_json_constant)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"not a JSON document: {err}") from None


def _operate(operation: str, values: list[float]) -> float:
    """avg, sum, min or max of ``values``."""
    if operation == "avg":
        return sum(values) / len(values)
    if operation == "sum":
        return float(sum(values))
    return float(min(values) if operation == "min" else max(values))


def _computed(
    spec: ScoringProgram, summary: dict[str, float], warnings: list[str]
) -> dict[str, float]:
    """The ``computed`` metrics (avg, sum, min, max of written ones).

    One computed from a metric without value has none either (a warning).
    """
    made = {}
    for name, computed in spec.computed.items():
        absent = [key for key in computed.of if key not in summary]
        if absent:
            warnings.append(f"{name!r}: computed from {', '.join(absent)}, which has no value")
            continue
        made[name] = _operate(computed.operation, [summary[key] for key in computed.of])
    return made


def read_scores(
    found: Any, spec: ScoringProgram, cases: Sequence[str]
) -> tuple[dict[str, float], dict[str, dict[str, float]], list[str]]:
    """(summary, per-case scores, warnings) from the parsed scores; ``ValueError`` if unusable.

    Every declared metric (but the ``computed`` ones, made here) must be a finite number; with
    ``missing_metrics: empty`` one not written has no value (a warning), as long as one is
    written. Keys the YAML does not declare (and cases the task does not have) are left out
    with a warning.
    """
    found = _by_metric(found, spec)
    warnings = [
        f"{key!r} is not a metric the YAML declares: left out"
        for key in found
        if key not in spec.metrics and key != "cases"
    ]
    summary = _summary(found, spec, warnings)
    per_case = _per_case(found.get("cases", {}), spec, cases, warnings)
    return summary, per_case, warnings


def _by_metric(found: Any, spec: ScoringProgram) -> dict[str, Any]:
    """The scores as a mapping with string keys, a ``score_keys`` key under its metric name."""
    if isinstance(found, bytes):
        found = parse_scores_file(found)
    if not isinstance(found, dict):
        raise ValueError(
            'must be a JSON object {"METRIC": number, ...} (scores.txt: `METRIC: number` lines)'
        )
    named: dict[str, Any] = {str(key): value for key, value in found.items()}
    for name, key in spec.score_keys.items():  # a key that is no metric name, read as one
        if key in named:
            named[name] = named.pop(key)
    return named


def _summary(found: dict[str, Any], spec: ScoringProgram, warnings: list[str]) -> dict[str, float]:
    """The declared metrics' values (the computed ones made here), in declared order."""
    declared = spec.metrics
    written = [name for name in declared if name not in spec.computed]
    missing = [name for name in written if name not in found]
    if missing and (spec.missing_metrics == "refused" or len(missing) == len(written)):
        raise ValueError(f"declared {noun(len(missing), 'metric')} missing: {', '.join(missing)}")
    warnings += [
        f"{name!r}: declared but not written: no value (missing_metrics: empty)" for name in missing
    ]
    summary = {
        name: _number(found[name], f"metric {name!r}", spec) for name in written if name in found
    }
    summary.update(_computed(spec, summary, warnings))
    return {name: summary[name] for name in declared if name in summary}


def _per_case(
    rows: Any, spec: ScoringProgram, cases: Sequence[str], warnings: list[str]
) -> dict[str, dict[str, float]]:
    """The ``cases`` object's rows of the task's cases, declared metrics only."""
    if not isinstance(rows, dict):
        raise ValueError('"cases" must be an object {CASE: {METRIC: number}}')
    declared = spec.metrics
    known = set(cases)
    per_case: dict[str, dict[str, float]] = {}
    for case, row in rows.items():
        if case not in known:
            warnings.append(f"case {case!r} is not a case of the task: left out")
            continue
        if not isinstance(row, dict):
            raise ValueError(f"cases.{case} must be an object {{METRIC: number}}")
        per_case[case] = {
            name: _number(value, f"cases.{case}.{name}", spec)
            for name, value in row.items()
            if name in declared
        }
        warnings += [
            f"cases.{case}.{name}: not a declared metric: left out"
            for name in row
            if name not in declared
        ]
    return per_case
