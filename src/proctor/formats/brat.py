"""Read eHealth-KD 2019 sentence and annotation files with the official script's exact offset rules.

A sentence file holds one sentence a line; every line (empty ones too) is a sentence, stripped of
surrounding whitespace. Offsets in ``output_a`` are code points over the stripped sentences each
followed by one newline. A keyphrase belongs to the sentence holding its first span's start (an
offset on a newline belongs to the next sentence). Spans become sentence-local and are sorted by
start, except in sentence 0, where they keep file order. A single span is split into one span per
space-separated word; several spans stay as written. Relations in ``output_b`` are by keyphrase
ID; a relation between two sentences is dropped with an :class:`ExtractionWarning`.

Labels are not checked against the official lists, as the official script does not check them
(an unknown keyphrase label simply never matches; relation labels are lowercased).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

from proctor.metrics._validation import MetricInputError
from proctor.metrics.extraction import (
    ExtractionWarning,
    Keyphrase,
    Relation,
    Scenario,
    Sentence,
    Span,
)
from proctor.metrics.warning_capture import warn

SCENARIO_FOLDERS = {
    Scenario.MAIN: "scenario1-main",
    Scenario.TASK_A: "scenario2-taskA",
    Scenario.TASK_B: "scenario3-taskB",
}
"""The folder of each scenario, in a gold folder and in every submission folder."""


class ExtractionFormatError(MetricInputError):
    """A sentence or annotation file is malformed; the message names file, line and fix."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        where = f"{path} line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


@dataclass(slots=True)
class _Draft:
    """A sentence being read: keyphrases and relations are appended in file order."""

    text: str
    keyphrases: list[Keyphrase] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def read_sentence_texts(path: Path) -> list[str]:
    """The stripped sentences of a sentence file, one per line (universal newlines, UTF-8)."""
    return [line.strip() for line in _lines(path)]


def annotation_paths(sentence_path: Path) -> tuple[Path, Path]:
    """The ``output_a`` and ``output_b`` files next to a sentence file.

    Named from the part between the first and second underscore of the sentence file's name, as
    the official script does: ``input_scenario1.txt`` → ``output_a_scenario1.txt``.
    """
    parts = sentence_path.name.split("_")
    if len(parts) < 2:
        raise ExtractionFormatError(
            sentence_path, None, "the file name needs an underscore, e.g. input_scenario1.txt"
        )
    folder = sentence_path.parent
    return folder / f"output_a_{parts[1]}", folder / f"output_b_{parts[1]}"


def read_collection(sentence_path: Path) -> list[Sentence]:
    """Read a sentence file and its two annotation files into sentences.

    Raises :class:`ExtractionFormatError` for a missing or malformed file, and warns with
    :class:`ExtractionWarning` for each relation dropped because it crosses sentences.
    """
    a_path, b_path = annotation_paths(sentence_path)
    drafts = [_Draft(text) for text in read_sentence_texts(sentence_path)]
    owner_by_id = _read_keyphrases(a_path, drafts)
    _read_relations(b_path, drafts, owner_by_id)
    return [Sentence(d.text, tuple(d.keyphrases), tuple(d.relations)) for d in drafts]


def read_gold(gold_root: Path) -> dict[Scenario, list[Sentence]]:
    """The gold sentences of every scenario: ``GOLD/<scenario folder>/input_scenarioN.txt``."""
    return {
        scenario: read_collection(gold_root / folder / f"input_scenario{scenario.value}.txt")
        for scenario, folder in SCENARIO_FOLDERS.items()
    }


def submission_sentence_file(folder: Path, scenario: Scenario) -> Path:
    """A submission's sentence file for ``scenario``: ``output_scenarioN.txt``, else ``input_…``."""
    scenario_folder = folder / SCENARIO_FOLDERS[scenario]
    for stem in ("output", "input"):
        candidate = scenario_folder / f"{stem}_scenario{scenario.value}.txt"
        if candidate.exists():
            return candidate
    raise ExtractionFormatError(
        scenario_folder,
        None,
        f"no output_scenario{scenario.value}.txt (or input_scenario{scenario.value}.txt) found; "
        "each submission folder needs scenario1-main/, scenario2-taskA/ and scenario3-taskB/",
    )


def word_spans(text: str, start: int, end: int) -> tuple[Span, ...]:
    """Split the single span ``[start, end)`` of ``text`` at every space, as the official script.

    ``word_spans("a bb c", 0, 4)`` is ``((0, 1), (2, 4))``. Offsets outside the text follow
    Python slicing, like the official script (so its quirks on such offsets are kept).
    """
    piece = text[start:end]
    at = piece.find(" ")
    if at < 0:
        return ((start, end),)
    cuts = [start]
    while at >= 0:
        cuts += (start + at, start + at + 1)
        at = piece.find(" ", at + 1)
    cuts.append(end)
    return tuple(zip(cuts[::2], cuts[1::2], strict=True))


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open(encoding="utf-8") as stream:
            yield from stream.readlines()
    except FileNotFoundError:
        raise ExtractionFormatError(
            path, None, "file not found (it must exist, even empty)"
        ) from None
    except UnicodeDecodeError as err:
        raise ExtractionFormatError(path, None, f"not UTF-8 text ({err.reason})") from None
    except OSError as err:
        raise ExtractionFormatError(path, None, f"cannot be read ({err.strerror})") from None


def _fields(path: Path, number: int, line: str, expected: int, layout: str) -> list[str]:
    parts = line.strip().split("\t")
    if len(parts) != expected:
        raise ExtractionFormatError(
            path,
            number,
            f"expected {expected} tab-separated fields, found {len(parts)} (layout: {layout})",
        )
    return parts


def _integer(path: Path, number: int, value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ExtractionFormatError(
            path, number, f"{what} must be an integer, not {value!r}"
        ) from None


def _parse_spans(path: Path, number: int, value: str) -> list[Span]:
    spans: list[Span] = []
    for piece in value.split(";"):
        bounds = piece.split()
        if len(bounds) != 2:
            raise ExtractionFormatError(
                path, number, f"span {piece!r} must be 'START END' (spans joined by ';')"
            )
        spans.append(
            (_integer(path, number, bounds[0], "START"), _integer(path, number, bounds[1], "END"))
        )
    return spans


def _newline_offsets(drafts: list[_Draft]) -> list[int]:
    """Global offset of the newline that ends each sentence."""
    ends: list[int] = []
    position = -1
    for draft in drafts:
        position += len(draft.text) + 1
        ends.append(position)
    return ends


def _read_keyphrases(path: Path, drafts: list[_Draft]) -> dict[int, int]:
    """Append each keyphrase to its sentence; returns keyphrase ID → sentence index (last wins)."""
    ends = _newline_offsets(drafts)
    owner_by_id: dict[int, int] = {}
    for number, line in enumerate(_lines(path), start=1):
        try:  # the fast path; a failing line is parsed again below to explain what is wrong
            raw_id, raw_spans, label, _text = line.strip().split("\t")
            spans = [(int(s), int(e)) for s, e in map(str.split, raw_spans.split(";"))]
            phrase_id = int(raw_id)
        except ValueError:
            phrase_id, spans, label = _explain_keyphrase_line(path, number, line)
        first = spans[0][0]
        index = bisect.bisect(ends, first)
        if index >= len(drafts):
            raise ExtractionFormatError(
                path,
                number,
                f"offset {first} lies beyond the last sentence of the sentence file "
                f"({len(drafts)} sentences): offsets count code points over the sentence file",
            )
        if index > 0:
            shift = ends[index - 1] + 1
            spans = sorted([(s - shift, e - shift) for s, e in spans], key=itemgetter(0))
        draft = drafts[index]
        local = word_spans(draft.text, *spans[0]) if len(spans) == 1 else tuple(spans)
        draft.keyphrases.append(Keyphrase(phrase_id, label, local))
        owner_by_id[phrase_id] = index
    return owner_by_id


def _explain_keyphrase_line(path: Path, number: int, line: str) -> tuple[int, list[Span], str]:
    """Parse an ``output_a`` line the slow way, raising an error that says what is wrong."""
    layout = "ID<TAB>START END[;START END]*<TAB>LABEL<TAB>TEXT"
    raw_id, raw_spans, label, _text = _fields(path, number, line, 4, layout)
    phrase_id = _integer(path, number, raw_id, "the keyphrase ID")
    return phrase_id, _parse_spans(path, number, raw_spans), label


def _read_relations(path: Path, drafts: list[_Draft], owner_by_id: dict[int, int]) -> None:
    for number, line in enumerate(_lines(path), start=1):
        label, raw_source, raw_target = _fields(
            path, number, line, 3, "LABEL<TAB>SRC_ID<TAB>DST_ID"
        )
        ends = [_integer(path, number, raw, "a keyphrase ID") for raw in (raw_source, raw_target)]
        owners = []
        for end in ends:
            if end not in owner_by_id:
                raise ExtractionFormatError(
                    path, number, f"keyphrase ID {end} is not defined in the output_a file"
                )
            owners.append(owner_by_id[end])
        if owners[0] != owners[1]:
            warn(
                f"{path} line {number}: relation {label!r} between {ends[0]} and {ends[1]} "
                "crosses sentence boundaries and has been ignored",
                ExtractionWarning,
            )
            continue
        drafts[owners[0]].relations.append(Relation(label.lower(), ends[0], ends[1]))
