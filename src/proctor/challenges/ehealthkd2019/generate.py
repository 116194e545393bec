"""Write the bundled eHealth-KD corpus (:mod:`corpus`) as the official BRAT-like files.

Run as ``python -m proctor.challenges.ehealthkd2019.generate`` to rewrite ``data/`` and
``kit/training/``, then ``python kit/baseline.py kit/training data baseline`` to refresh the
baseline entry. The output depends on nothing but :mod:`corpus` (same bytes every time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from proctor.challenges.ehealthkd2019.corpus import DEV, TEST, TRAINING, Annotated

HERE = Path(__file__).resolve().parent
LABELS = {"C": "Concept", "A": "Action", "P": "Predicate", "R": "Reference"}
FOLDERS = {1: "scenario1-main", 2: "scenario2-taskA", 3: "scenario3-taskB"}
MARK = re.compile(r"\[([^\]]+)\]\{([CAPR]):(\w+)\}")


@dataclass(frozen=True, slots=True)
class Phrase:
    """A keyphrase: its key in the sentence, label and sentence-local span."""

    key: str
    label: str
    start: int
    end: int


def parse(marked: str) -> tuple[str, list[Phrase]]:
    """The plain sentence and its keyphrases, from ``[text]{L:key}`` marks."""
    text, phrases, last = "", [], 0
    for match in MARK.finditer(marked):
        text += marked[last : match.start()]
        start = len(text)
        text += match.group(1)
        phrases.append(Phrase(match.group(3), LABELS[match.group(2)], start, len(text)))
        last = match.end()
    return text + marked[last:], phrases


def brat_files(sentences: tuple[Annotated, ...]) -> tuple[str, str, str]:
    """The sentence file, ``output_a`` and ``output_b`` texts of ``sentences``."""
    lines, a_lines, b_lines = [], [], []
    offset, next_id = 0, 1
    for marked, relations in sentences:
        text, phrases = parse(marked)
        ids = {}
        for phrase in phrases:
            ids[phrase.key] = next_id
            span = f"{offset + phrase.start} {offset + phrase.end}"
            a_lines.append(f"{next_id}\t{span}\t{phrase.label}\t{text[phrase.start : phrase.end]}")
            next_id += 1
        for relation in filter(None, (part.strip() for part in relations.split(";"))):
            label, source, target = relation.split()
            b_lines.append(f"{label}\t{ids[source]}\t{ids[target]}")
        lines.append(text)
        offset += len(text) + 1
    return ("".join(f"{line}\n" for line in lines), _text(a_lines), _text(b_lines))


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def write_collection(folder: Path, stem: str, sentences: tuple[Annotated, ...], *,
                     annotations: bool = True, keyphrases: bool = False) -> None:  # fmt: skip
    """``input_STEM.txt`` with both annotation files, only ``output_a`` or neither."""
    folder.mkdir(parents=True, exist_ok=True)
    text, a_text, b_text = brat_files(sentences)
    (folder / f"input_{stem}").write_text(text, encoding="utf-8")
    if annotations or keyphrases:
        (folder / f"output_a_{stem}").write_text(a_text, encoding="utf-8")
    if annotations:
        (folder / f"output_b_{stem}").write_text(b_text, encoding="utf-8")


def generate(root: Path = HERE) -> None:
    """Write ``data/{dev,test,test-reference}`` and ``kit/training`` under ``root``."""
    write_collection(root / "kit" / "training", "training.txt", TRAINING)
    for number, folder in FOLDERS.items():
        stem = f"scenario{number}.txt"  # input_scenarioN.txt
        write_collection(root / "data" / "dev" / folder, stem, DEV[number])
        write_collection(root / "data" / "test-reference" / folder, stem, TEST[number])
        write_collection(root / "data" / "test" / folder, stem, TEST[number],
                         annotations=False, keyphrases=number == 3)  # fmt: skip


if __name__ == "__main__":
    generate()
