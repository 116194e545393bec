"""Benchmark: Proctor's eHealth-KD scorer against a plain version of the official matching loop.

Both read the same files and score them in the same run; the plain version below follows the
official algorithm the direct way (object lists, linear searches, list removals, a node-based
disjoint set). Prints both times and the ratio (target: Proctor at least as fast, ratio >= 1).

Data: the official public baseline when PROCTOR_EHEALTHKD_DATA names the official repository's
``data/`` folder, else a synthetic collection (fixed seed) of the same shape, scaled up.
"""

from __future__ import annotations

import bisect
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

from proctor.formats.brat import read_collection
from proctor.metrics.extraction import Scenario, extraction_counts, precision_recall_f1

REPEATS = 5

# A plain version of the official loop ----------------------------------------------------------


class Phrase:
    def __init__(self, pid: int, label: str, spans: list[tuple[int, int]]) -> None:
        self.id, self.label, self.spans = pid, label, spans


class Rel:
    def __init__(self, owner: Doc, label: str, src: int, dst: int) -> None:
        self.owner, self.label, self.src, self.dst = owner, label, src, dst

    def ends(self) -> tuple[Phrase | None, Phrase | None]:
        return self.owner.by_id(self.src), self.owner.by_id(self.dst)


class Doc:
    def __init__(self, text: str) -> None:
        self.text, self.phrases, self.rels = text, list[Phrase](), list[Rel]()

    def by_id(self, pid: int) -> Phrase | None:
        return next((p for p in self.phrases if p.id == pid), None)

    def by_spans(self, spans: list[tuple[int, int]]) -> Phrase | None:
        return next((p for p in self.phrases if p.spans == spans), None)


class Node:
    def __init__(self, value: Phrase) -> None:
        self.value, self.parent = value, self

    def root(self) -> Node:
        if self.parent is not self:
            self.parent = self.parent.root()
        return self.parent


def plain_load(path: Path) -> list[Doc]:
    docs = [Doc(line.strip()) for line in path.open(encoding="utf-8").readlines()]
    ends, total = [], -1
    for doc in docs:
        total += len(doc.text) + 1
        ends.append(total)
    owner: dict[int, Doc] = {}
    tail = path.name.split("_")[1]
    for line in (path.parent / f"output_a_{tail}").open(encoding="utf-8").readlines():
        pid_text, span_text, label, _ = line.strip().split("\t")
        spans = [(int(s), int(e)) for s, e in (p.split() for p in span_text.split(";"))]
        k = bisect.bisect(ends, spans[0][0])
        if k:
            spans = sorted(
                [(s - ends[k - 1] - 1, e - ends[k - 1] - 1) for s, e in spans], key=lambda t: t[0]
            )
        if len(spans) == 1:
            start, end = spans[0]
            cuts = [start]
            for i, ch in enumerate(docs[k].text[start:end]):
                if ch == " ":
                    cuts += [start + i, start + i + 1]
            spans = list(zip(cuts[::2], [*cuts[1::2], end], strict=False))
        docs[k].phrases.append(Phrase(int(pid_text), label, spans))
        owner[int(pid_text)] = docs[k]
    for line in (path.parent / f"output_b_{tail}").open(encoding="utf-8").readlines():
        label, src, dst = line.strip().split("\t")
        if owner[int(src)] is owner[int(dst)]:
            owner[int(src)].rels.append(Rel(owner[int(src)], label.lower(), int(src), int(dst)))
    return docs


def plain_overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    return any(s <= x < e for s, e in a for x, _ in b) or any(
        s <= x < e for s, e in b for x, _ in a
    )


def plain_counts(gold: list[Doc], sub: list[Doc]) -> list[int]:
    c = [
        0
    ] * 8  # correct, incorrect, partial, spurious, missing (A); correct, spurious, missing (B)
    for g, s in zip(gold, sub, strict=False):
        if g.text != s.text or not (g.phrases or g.rels):
            continue
        left, todo, mapped = list(g.phrases), list(s.phrases), dict[int, Phrase]()
        for kind in (0, 1, 2):
            for p in todo[:]:
                m = left_by_spans(left, p.spans) if kind < 2 else None
                if kind == 2:
                    m = next((q for q in left if plain_overlap(p.spans, q.spans)), None)
                if m is None or (kind == 0 and m.label != p.label):
                    continue
                if kind != 1:
                    mapped[id(p)] = m
                c[kind] += 1
                left.remove(m)
                todo.remove(p)
        c[3] += len(todo)
        c[4] += len(left)
        plain_relations(g, s, mapped, c)
    return c


def left_by_spans(left: list[Phrase], spans: list[tuple[int, int]]) -> Phrase | None:
    return next((q for q in left if q.spans == spans), None)


def plain_relations(g: Doc, s: Doc, mapped: dict[int, Phrase], c: list[int]) -> None:
    golds = list({(r.label, r.src, r.dst): r for r in g.rels}.values())
    subs = list({(r.label, r.src, r.dst): r for r in s.rels}.values())
    nodes = {id(p): Node(p) for p in g.phrases}
    for r in golds:
        a, b = r.ends()
        if r.label == "same-as" and a and b:
            nodes[id(b)].root().parent = nodes[id(a)].root()

    def rep(p: Phrase) -> Phrase:
        return nodes[id(p)].root().value

    for r in subs:
        a, b = r.ends()
        ga, gb = (mapped.get(id(a)) if a else None), (mapped.get(id(b)) if b else None)
        if ga is None or gb is None:
            c[6] += 1
            continue
        pairs = [(ga, gb), (gb, ga)] if r.label == "same-as" else [(ga, gb)]
        hit = next(
            (
                x
                for o, d in pairs
                for x in golds
                if (x.label, x.src, x.dst) == (r.label, o.id, d.id)
            ),
            None,
        )
        if hit is None:
            for o, d in pairs:
                ro, rd = rep(o), rep(d)
                hit = hit or next(
                    (
                        x
                        for x in golds
                        if x.label == r.label and (rep(x.ends()[0]), rep(x.ends()[1])) == (ro, rd)
                    ),  # type: ignore[arg-type]
                    None,
                )
        if hit is None:
            c[6] += 1
        else:
            golds.remove(hit)
            c[5] += 1
    c[7] += len(golds)


# Data -------------------------------------------------------------------------------------------

WORDS = [
    "el",
    "la",
    "de",
    "un",
    "dolor",
    "cáncer",
    "pulmón",
    "asma",
    "tos",
    "fiebre",
    "sangre",
    "causa",
    "afecta",
    "puede",
]


def synthetic(folder: Path, seed: int, sentences: int) -> Path:
    """Same texts whatever the seed (from a fixed text generator); annotations drawn by ``seed``."""
    rng, text_rng = random.Random(seed), random.Random(0)
    texts, a_lines, b_lines, offset, pid = [], [], [], 0, 0
    for _ in range(sentences):
        words = [text_rng.choice(WORDS) for _ in range(text_rng.randint(8, 25))]
        text = " ".join(words)
        starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words))]
        ids = []
        for _ in range(rng.randint(2, 8)):
            i = rng.randrange(len(words))
            j = min(len(words), i + rng.choice((1, 1, 2, 3)))
            pid += 1
            ids.append(pid)
            label = rng.choice(("Concept", "Action", "Predicate", "Reference"))
            span = f"{offset + starts[i]} {offset + starts[j - 1] + len(words[j - 1])}"
            a_lines.append(f"{pid}\t{span}\t{label}\t{' '.join(words[i:j])}")
        for _ in range(rng.randint(1, 6)):
            label = rng.choice(("same-as", "is-a", "target", "subject", "causes"))
            b_lines.append(f"{label}\t{rng.choice(ids)}\t{rng.choice(ids)}")
        texts.append(text)
        offset += len(text) + 1
    folder.mkdir(parents=True)
    (folder / "input_bench.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    (folder / "output_a_bench.txt").write_text("".join(x + "\n" for x in a_lines), encoding="utf-8")
    (folder / "output_b_bench.txt").write_text("".join(x + "\n" for x in b_lines), encoding="utf-8")
    return folder / "input_bench.txt"


def pairs(root: Path) -> list[tuple[Path, Path]]:
    data = os.environ.get("PROCTOR_EHEALTHKD_DATA")
    if data:
        folders = ("scenario1-main", "scenario2-taskA", "scenario3-taskB")
        return [
            (
                Path(data) / "testing" / f / f"input_scenario{n}.txt",
                Path(data) / "submissions" / "baseline" / f / f"output_scenario{n}.txt",
            )
            for n, f in enumerate(folders, start=1)
        ]
    return [(synthetic(root / "gold", 1, 3000), synthetic(root / "sub", 2, 3000))]


def best_time(function: object) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        function()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        files = pairs(Path(tmp))
        if len(files) == 1:  # synthetic: also score the gold against itself (all Correct)
            files.append((files[0][0], files[0][0]))

        def ours() -> list[list[int]]:
            out = []
            for gold, sub in files:
                counts = extraction_counts(read_collection(gold), read_collection(sub))
                precision_recall_f1(counts, scenario=Scenario.MAIN)
                out.append(list(counts.as_dict().values()))
            return out

        def plain() -> list[list[int]]:
            return [plain_counts(plain_load(gold), plain_load(sub)) for gold, sub in files]

        if ours() != plain():
            print("MISMATCH between Proctor and the plain loop:", ours(), plain())
            return 1
        t_ours, t_plain = best_time(ours), best_time(plain)
    print(f"proctor {t_ours * 1000:.1f} ms, plain official loop {t_plain * 1000:.1f} ms")
    print(f"ratio plain/proctor = {t_plain / t_ours:.2f} (>= 1 means Proctor is at least as fast)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
