"""eHealth-KD 2019 keyphrase and relation scoring, reproducing the official script's numbers.

Sentences are paired by position. Per pair, submitted keyphrases are matched to gold keyphrases in
three greedy passes (Correct, Incorrect, Partial), then submitted relations are matched to gold
relations through the Correct and Partial keyphrase matches. The counts feed a precision, recall
and F1 where a partial match counts one half.

Quirks of the official script reproduced here on purpose (its behaviour produced the published
figures, not the website's prose):

- A pair whose texts differ is skipped with an :class:`ExtractionWarning`; its gold items are not
  counted missing. Gold sentences beyond the submission's length are ignored, and gold sentences
  with neither keyphrases nor relations are skipped (whatever the submission put there is free).
- The Correct pass takes the *first* remaining gold phrase with the same spans and accepts it only
  if its label also agrees; the Incorrect pass then takes the first remaining one with the same
  spans whatever its label (the official ``assert`` on that label is treated as disabled).
- The Partial pass does not check labels. Overlap means a span of one phrase starts inside a span
  of the other (for non-empty spans: a non-empty intersection of half-open intervals).
- A relation whose end comes from an Incorrect match or a spurious phrase is spurious. A relation
  end given by ID means the first keyphrase of the sentence with that ID.
- Exact relation matches are tried before matches up to gold ``same-as`` equivalence classes;
  ``same-as`` also matches reversed. Exact duplicate relations are removed on both sides.
- A zero denominator gives the integer ``0`` (the official JSON prints ``0``, not ``0.0``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import NamedTuple

from proctor.metrics._validation import MetricInputError
from proctor.metrics.warning_capture import warn

KEYPHRASE_LABELS = ("Concept", "Action", "Predicate", "Reference")
RELATION_LABELS = (
    "is-a",
    "same-as",
    "part-of",
    "has-property",
    "causes",
    "entails",
    "in-context",
    "in-place",
    "in-time",
    "subject",
    "target",
    "domain",
    "arg",
)
SAME_AS = "same-as"

Span = tuple[int, int]
"""A half-open ``[start, end)`` interval of code points, local to its sentence."""


class ExtractionWarning(UserWarning):
    """Something was skipped or dropped exactly as the official script does; scores still hold."""


class Keyphrase(NamedTuple):
    """One annotated keyphrase: its file ID, label and sentence-local spans (already word-split)."""

    id: int
    label: str
    spans: tuple[Span, ...]


class Relation(NamedTuple):
    """One annotated relation between two keyphrases of the same sentence, by keyphrase ID."""

    label: str
    source: int
    target: int


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence with its keyphrases and relations, in file order.

    Every relation must name keyphrase IDs present in this sentence.
    """

    text: str
    keyphrases: tuple[Keyphrase, ...] = ()
    relations: tuple[Relation, ...] = ()

    def __post_init__(self) -> None:
        ids = {phrase.id for phrase in self.keyphrases}
        for relation in self.relations:
            for end in (relation.source, relation.target):
                if end not in ids:
                    raise MetricInputError(
                        f"relation {relation.label!r} {relation.source}->{relation.target} names "
                        f"keyphrase ID {end}, which is not in its sentence {self.text[:40]!r}"
                    )

    @property
    def annotated(self) -> bool:
        """Whether the sentence has any keyphrase or relation (unannotated gold is skipped)."""
        return bool(self.keyphrases or self.relations)


@dataclass(frozen=True, slots=True)
class ExtractionCounts:
    """The eight match counts; task B has no incorrect or partial relations."""

    correct_a: int = 0
    incorrect_a: int = 0
    partial_a: int = 0
    spurious_a: int = 0
    missing_a: int = 0
    correct_b: int = 0
    spurious_b: int = 0
    missing_b: int = 0

    def __add__(self, other: ExtractionCounts) -> ExtractionCounts:
        return ExtractionCounts(
            *(getattr(self, f.name) + getattr(other, f.name) for f in fields(self))
        )

    def as_dict(self) -> dict[str, int]:
        """The counts under the official key names (``correct_A`` …), in the official order."""
        return {f.name[:-2] + f.name[-2:].upper(): getattr(self, f.name) for f in fields(self)}


class Scenario(IntEnum):
    """The three evaluation scenarios: which counts enter the scores."""

    MAIN = 1  # keyphrases and relations
    TASK_A = 2  # keyphrases only
    TASK_B = 3  # relations only, on the gold keyphrases


@dataclass(frozen=True, slots=True)
class ScenarioScore:
    """Counts and the scores derived from them for one scenario (scores are unitless, 0–1)."""

    counts: ExtractionCounts
    precision: float
    recall: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        """The official result record: eight counts, ``recall``, ``precision`` and ``f1``."""
        record: dict[str, float] = dict(self.counts.as_dict())
        record.update(recall=self.recall, precision=self.precision, f1=self.f1)
        return record


def precision_recall_f1(
    counts: ExtractionCounts, *, scenario: Scenario
) -> tuple[float, float, float]:
    """Precision, recall and F1 of ``counts`` as the official script computes them.

    Scenario 1 adds the A and B counts, scenario 2 uses A only, scenario 3 B only. A partial
    match counts one half; any zero denominator gives ``0``. The arithmetic follows the official
    order of operations so results agree to the last bit.
    """
    correct = partial = incorrect = missing = spurious = 0
    if scenario != Scenario.TASK_B:
        correct += counts.correct_a
        incorrect += counts.incorrect_a
        partial += counts.partial_a
        missing += counts.missing_a
        spurious += counts.spurious_a
    if scenario != Scenario.TASK_A:
        correct += counts.correct_b
        missing += counts.missing_b
        spurious += counts.spurious_b
    hits = correct + 0.5 * partial
    recall_den = correct + partial + incorrect + missing
    precision_den = correct + partial + incorrect + spurious
    recall: float = hits / recall_den if recall_den > 0 else 0
    precision: float = hits / precision_den if precision_den > 0 else 0
    f1_den = recall + precision
    f1: float = 2 * recall * precision / f1_den if f1_den > 0 else 0
    return precision, recall, f1


def score_scenario(
    gold: Sequence[Sentence], submitted: Sequence[Sentence], *, scenario: Scenario
) -> ScenarioScore:
    """Match ``submitted`` against ``gold`` and score it for ``scenario``."""
    counts = extraction_counts(gold, submitted)
    precision, recall, f1 = precision_recall_f1(counts, scenario=scenario)
    return ScenarioScore(counts, precision, recall, f1)


def extraction_counts(gold: Sequence[Sentence], submitted: Sequence[Sentence]) -> ExtractionCounts:
    """Count keyphrase and relation matches over sentences paired by position.

    Emits an :class:`ExtractionWarning` for each pair whose texts differ (that pair is skipped).
    """
    total = [0] * 8
    for index, (gold_sentence, sub_sentence) in enumerate(zip(gold, submitted, strict=False)):
        if gold_sentence.text != sub_sentence.text:
            warn(
                f"sentence {index + 1} differs and is skipped: "
                f"gold={gold_sentence.text!r} vs submitted={sub_sentence.text!r}",
                ExtractionWarning,
            )
            continue
        if gold_sentence.annotated:
            for position, value in enumerate(_sentence_counts(gold_sentence, sub_sentence)):
                total[position] += value
    return ExtractionCounts(*total)


def _sentence_counts(gold: Sentence, submitted: Sentence) -> tuple[int, ...]:
    """The eight counts, in field order, for one sentence pair (equal texts, gold annotated)."""
    mapped, a_counts = _match_keyphrases(gold.keyphrases, submitted.keyphrases)
    return (*a_counts, *_match_relations(gold, submitted, mapped))


def spans_overlap(first: Sequence[Span], second: Sequence[Span]) -> bool:
    """Whether a span of one phrase starts inside a span of the other (the official test).

    For non-empty spans this is a non-empty intersection of half-open intervals; an empty span
    ``(5, 5)`` still overlaps ``(3, 8)`` because its start lies inside.
    """
    if len(first) == 1 and len(second) == 1:
        (a, b), (c, d) = first[0], second[0]
        return a <= c < b or c <= a < d
    return any(start <= x < end for start, end in first for x, _ in second) or any(
        start <= x < end for start, end in second for x, _ in first
    )


def _match_keyphrases(
    gold: Sequence[Keyphrase], submitted: Sequence[Keyphrase]
) -> tuple[dict[int, int], tuple[int, int, int, int, int]]:
    """Three greedy passes; returns submitted→gold index for Correct/Partial, and the A counts."""
    by_spans: dict[tuple[Span, ...], deque[int]] = {}
    for index, phrase in enumerate(gold):
        by_spans.setdefault(phrase.spans, deque()).append(index)
    taken = [False] * len(gold)
    mapped: dict[int, int] = {}
    unmatched: list[int] = []
    for index, phrase in enumerate(submitted):
        queue = by_spans.get(phrase.spans)
        if queue and gold[queue[0]].label == phrase.label:
            mapped[index] = queue.popleft()
            taken[mapped[index]] = True
        else:
            unmatched.append(index)
    correct = len(mapped)
    leftover: list[int] = []
    for index in unmatched:
        queue = by_spans.get(submitted[index].spans)
        if queue:
            taken[queue.popleft()] = True
        else:
            leftover.append(index)
    incorrect = len(unmatched) - len(leftover)
    remaining = [index for index, used in enumerate(taken) if not used]
    spurious = 0
    for index in leftover:
        spans = submitted[index].spans
        hit = next((k for k, g in enumerate(remaining) if spans_overlap(spans, gold[g].spans)), -1)
        if hit < 0:
            spurious += 1
        else:
            mapped[index] = remaining.pop(hit)
    partial = len(leftover) - spurious
    return mapped, (correct, incorrect, partial, spurious, len(remaining))


def _first_index_by_id(phrases: Iterable[Keyphrase]) -> dict[int, int]:
    first: dict[int, int] = {}
    for index, phrase in enumerate(phrases):
        first.setdefault(phrase.id, index)
    return first


def _class_roots(size: int, pairs: Iterable[tuple[int, int]]) -> list[int]:
    """Union-find over ``size`` items; returns each item's class representative."""
    parent = list(range(size))

    def find(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for a, b in pairs:
        parent[find(b)] = find(a)
    return [find(item) for item in range(size)]


_GoldRelation = tuple[str, int, int, int, int]  # label, source ID, target ID, source/target class


def _match_relations(
    gold: Sentence, submitted: Sentence, mapped: dict[int, int]
) -> tuple[int, int, int]:
    """Correct, spurious and missing relation counts for one sentence pair."""
    gold_first = _first_index_by_id(gold.keyphrases)
    gold_relations = list(dict.fromkeys(gold.relations))
    roots = _class_roots(
        len(gold.keyphrases),
        (
            (gold_first[r.source], gold_first[r.target])
            for r in gold_relations
            if r.label == SAME_AS
        ),
    )
    remaining: list[_GoldRelation] = [
        (r.label, r.source, r.target, roots[gold_first[r.source]], roots[gold_first[r.target]])
        for r in gold_relations
    ]
    sub_first = _first_index_by_id(submitted.keyphrases)
    correct = spurious = 0
    for relation in dict.fromkeys(submitted.relations):
        source = mapped.get(sub_first[relation.source])
        target = mapped.get(sub_first[relation.target])
        hit = -1
        if source is not None and target is not None:
            ids = (gold.keyphrases[source].id, gold.keyphrases[target].id)
            hit = _find_gold_relation(remaining, relation.label, ids, 1)
            if hit < 0:
                hit = _find_gold_relation(
                    remaining, relation.label, (roots[source], roots[target]), 3
                )
        if hit < 0:
            spurious += 1
        else:
            del remaining[hit]
            correct += 1
    return correct, spurious, len(remaining)


def _find_gold_relation(
    remaining: Sequence[_GoldRelation], label: str, ends: tuple[int, int], field: int
) -> int:
    """Index of the first gold relation with ``label`` and these ends, or ``-1``.

    ``field`` 1 compares keyphrase IDs, 3 compares equivalence classes; ``same-as`` is then tried
    reversed.
    """
    orders = [ends, ends[::-1]] if label == SAME_AS else [ends]
    for source, target in orders:
        for index, entry in enumerate(remaining):
            if entry[0] == label and entry[field] == source and entry[field + 1] == target:
                return index
    return -1
