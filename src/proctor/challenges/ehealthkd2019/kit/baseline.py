"""The eHealth-KD baseline: a gazetteer and relation rules learned from the training split.

    python baseline.py TRAINING DATA ENTRY

reads ``TRAINING/input_training.txt`` with its ``output_a``/``output_b`` files, learns

- keyphrases: every annotated phrase (lowercased words) with its most frequent label, kept
  when the training text shows it annotated at least as often as not;
- relations: for two keyphrases one or two places apart, by their labels and that distance,
  the relation the training split shows most often, kept when it beats "no relation";

and writes predictions for every scenario folder of ``DATA/dev`` and ``DATA/test`` into
``ENTRY/dev`` and ``ENTRY/test`` (scenario 2: keyphrases only; scenario 3: relations between
the given keyphrases). Standard library only; the same input gives the same bytes.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

WORD = re.compile(r"\w+")
LONGEST = 3
NEAR = (-2, -1, 1, 2)


@dataclass(frozen=True, slots=True)
class Phrase:
    """A keyphrase of a sentence: ID, label and sentence-local span."""

    id: int
    label: str
    start: int
    end: int


Sentence = tuple[str, list[Phrase], list[tuple[str, int, int]]]
Key = tuple[str, str, int]


def read_sentences(path: Path) -> list[str]:
    """The stripped sentences of a sentence file, one a line."""
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]


def starts_of(texts: list[str]) -> list[int]:
    """The global offset where each sentence starts (each followed by one newline)."""
    starts, offset = [], 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + 1
    return starts


def read_phrases(path: Path, texts: list[str]) -> list[list[Phrase]]:
    """The keyphrases of ``output_a``, per sentence (by the first span's start)."""
    starts = starts_of(texts)
    phrases: list[list[Phrase]] = [[] for _ in texts]
    for line in path.read_text(encoding="utf-8").splitlines():
        raw_id, spans, label, _ = line.strip().split("\t")
        first, *_, last = [int(x) for part in spans.split(";") for x in part.split()]
        index = max(i for i, start in enumerate(starts) if start <= first)
        shift = starts[index]
        phrases[index].append(Phrase(int(raw_id), label, first - shift, last - shift))
    return phrases


def read_collection(folder: Path, stem: str, *, relations: bool) -> list[Sentence]:
    """Sentences with their keyphrases (and relations) from ``input_STEM.txt`` and friends."""
    texts = read_sentences(folder / f"input_{stem}.txt")
    phrases = read_phrases(folder / f"output_a_{stem}.txt", texts)
    links: list[list[tuple[str, int, int]]] = [[] for _ in texts]
    if relations:
        owner = {p.id: i for i, found in enumerate(phrases) for p in found}
        for line in (folder / f"output_b_{stem}.txt").read_text(encoding="utf-8").splitlines():
            label, source, target = line.strip().split("\t")
            links[owner[int(source)]].append((label, int(source), int(target)))
    return [(texts[i], phrases[i], links[i]) for i in range(len(texts))]


def words(text: str) -> list[tuple[str, int, int]]:
    """Lowercased words of ``text`` with their spans."""
    return [(m.group().lower(), m.start(), m.end()) for m in WORD.finditer(text)]


class Model:
    """The gazetteer and the relation rules."""

    def __init__(self, training: list[Sentence]) -> None:
        labels: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for text, phrases, _ in training:
            for phrase in phrases:
                key = tuple(w for w, _, _ in words(text[phrase.start : phrase.end]))
                labels[key][phrase.label] += 1
        seen: Counter[tuple[str, ...]] = Counter()
        for text, _, _ in training:
            tokens = [w for w, _, _ in words(text)]
            for size in range(1, LONGEST + 1):
                for i in range(len(tokens) - size + 1):
                    seen[tuple(tokens[i : i + size])] += 1
        self.gazetteer = {
            key: sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]
            for key, counts in labels.items()
            if 2 * sum(counts.values()) >= seen[key]
        }
        self.rules = _learn_rules(training)

    def keyphrases(self, text: str, first_id: int) -> list[Phrase]:
        """Longest gazetteer matches, left to right, numbered from ``first_id``."""
        tokens, i = words(text), 0
        found: list[Phrase] = []
        while i < len(tokens):
            for size in range(min(LONGEST, len(tokens) - i), 0, -1):
                key = tuple(w for w, _, _ in tokens[i : i + size])
                if key in self.gazetteer:
                    start, end = tokens[i][1], tokens[i + size - 1][2]
                    found.append(Phrase(first_id + len(found), self.gazetteer[key], start, end))
                    i += size
                    break
            else:
                i += 1
        return found

    def relations(self, phrases: list[Phrase]) -> list[tuple[str, int, int]]:
        """The relations the rules give between keyphrases close to each other."""
        ordered = sorted(phrases, key=lambda p: (p.start, p.id))
        out = []
        for i, source in enumerate(ordered):
            for distance in NEAR:
                j = i + distance
                if 0 <= j < len(ordered):
                    label = self.rules.get((source.label, ordered[j].label, distance))
                    if label is not None:
                        out.append((label, source.id, ordered[j].id))
        return out


def _learn_rules(training: list[Sentence]) -> dict[Key, str]:
    votes: dict[Key, Counter[str]] = defaultdict(Counter)
    for _, phrases, links in training:
        ordered = sorted(phrases, key=lambda p: (p.start, p.id))
        linked = {(s, t): label for label, s, t in links}
        for i, source in enumerate(ordered):
            for distance in NEAR:
                j = i + distance
                if 0 <= j < len(ordered):
                    target = ordered[j]
                    label = linked.get((source.id, target.id), "")
                    votes[(source.label, target.label, distance)][label] += 1
    rules = {}
    for key, counts in votes.items():
        best = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]
        if best:
            rules[key] = best
    return rules


def write_predictions(model: Model, source: Path, target: Path) -> None:
    """Predictions for one scenario folder (``scenarioN-...``) of ``source`` into ``target``."""
    number = int(source.name[len("scenario")])
    stem = f"scenario{number}.txt"
    texts = read_sentences(source / f"input_{stem}")
    target.mkdir(parents=True, exist_ok=True)
    (target / f"output_{stem}").write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
    if number == 3:  # relations between the given keyphrases, which keep their IDs
        given = source / f"output_a_{stem}"
        phrases = read_phrases(given, texts)
        (target / f"output_a_{stem}").write_bytes(given.read_bytes())
    else:
        phrases, next_id = [], 1
        for text in texts:
            phrases.append(model.keyphrases(text, next_id))
            next_id += len(phrases[-1])
        _write_phrases(target / f"output_a_{stem}", texts, phrases)
    links = [] if number == 2 else [r for found in phrases for r in model.relations(found)]
    lines = "".join(f"{label}\t{s}\t{t}\n" for label, s, t in links)
    (target / f"output_b_{stem}").write_text(lines, encoding="utf-8")


def _write_phrases(path: Path, texts: list[str], phrases: list[list[Phrase]]) -> None:
    lines = []
    for start, text, found in zip(starts_of(texts), texts, phrases, strict=True):
        for p in found:
            span = f"{start + p.start} {start + p.end}"
            lines.append(f"{p.id}\t{span}\t{p.label}\t{text[p.start : p.end]}\n")
    path.write_text("".join(lines), encoding="utf-8")


def main(argv: list[str]) -> int:
    """Learn from TRAINING, predict every scenario of DATA/dev and DATA/test into ENTRY."""
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    training, data, entry = (Path(arg) for arg in argv)
    model = Model(read_collection(training, "training", relations=True))
    for split in ("dev", "test"):
        for folder in sorted((data / split).iterdir()):
            write_predictions(model, folder, entry / split / folder.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
