# coding: utf8
"""The eHealth-KD 2019 files as the organizers' helper module reads and writes them.

Written for Proctor's tests (not the organizers' code), with the same classes and calls:
``Collection().load`` (training: sentences, keyphrases, relations), ``load_input``,
``load_keyphrases`` (the ``output_a_`` file beside the input), ``dump`` (the sentence file and
its ``output_a_``/``output_b_`` siblings, offsets over the whole file), ``Keyphrase.split``,
``Sentence.remove_dup_relations``.
"""

from pathlib import Path


class Keyphrase:
    def __init__(self, sentence, label, id, spans):
        self.sentence = sentence
        self.label = label
        self.id = id
        self.spans = spans

    @property
    def text(self):
        return " ".join(self.sentence.text[start:end] for start, end in self.spans)

    def split(self):
        """One span per word, as the official files write multi-word phrases."""
        words = []
        for start, end in self.spans:
            offset = start
            for word in self.sentence.text[start:end].split(" "):
                if word:
                    words.append((offset, offset + len(word)))
                offset += len(word) + 1
        self.spans = words


class Relation:
    def __init__(self, sentence, origin, destination, label):
        self.sentence = sentence
        self.origin = origin
        self.destination = destination
        self.label = label

    @property
    def from_phrase(self):
        return self.sentence.find_keyphrase(self.origin)

    @property
    def to_phrase(self):
        return self.sentence.find_keyphrase(self.destination)


class Sentence:
    def __init__(self, text):
        self.text = text
        self.keyphrases = []
        self.relations = []

    def find_keyphrase(self, id):
        return next((k for k in self.keyphrases if k.id == id), None)

    def remove_dup_relations(self):
        seen, kept = set(), []
        for relation in self.relations:
            key = (relation.label, relation.origin, relation.destination)
            if key not in seen:
                seen.add(key)
                kept.append(relation)
        self.relations = kept


def _sibling(finput: Path, kind):
    return finput.parent / ("output_%s_" % kind + finput.name.split("_")[1])


class Collection:
    def __init__(self):
        self.sentences = []

    def load_input(self, finput: Path):
        lines = finput.open(encoding="utf8").read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.sentences = [Sentence(line.strip()) for line in lines]

    def _starts(self):
        starts, offset = [], 0
        for sentence in self.sentences:
            starts.append(offset)
            offset += len(sentence.text) + 1
        return starts

    def load_keyphrases(self, finput: Path):
        self.load_input(finput)
        starts = self._starts()
        for line in _sibling(finput, "a").open(encoding="utf8"):
            if not line.strip():
                continue
            id, spans, label, _ = line.rstrip("\n").split("\t")
            spans = [tuple(int(x) for x in part.split()) for part in spans.split(";")]
            index = max(i for i, start in enumerate(starts) if start <= spans[0][0])
            base = starts[index]
            sentence = self.sentences[index]
            relative = [(start - base, end - base) for start, end in spans]
            sentence.keyphrases.append(Keyphrase(sentence, label, int(id), relative))

    def load(self, finput: Path):
        self.load_keyphrases(finput)
        owner = {k.id: s for s in self.sentences for k in s.keyphrases}
        for line in _sibling(finput, "b").open(encoding="utf8"):
            if not line.strip():
                continue
            label, origin, destination = line.rstrip("\n").split("\t")
            sentence = owner.get(int(origin))
            if sentence is not None:
                sentence.relations.append(Relation(sentence, int(origin), int(destination), label))

    def dump(self, finput: Path, skip_empty_sentences=True):
        starts = self._starts()
        with finput.open("w", encoding="utf8") as texts, \
                _sibling(finput, "a").open("w", encoding="utf8") as phrases, \
                _sibling(finput, "b").open("w", encoding="utf8") as relations:
            for sentence, base in zip(self.sentences, starts):
                if skip_empty_sentences and not sentence.keyphrases:
                    continue
                texts.write("{}\n".format(sentence.text))
                for k in sentence.keyphrases:
                    spans = ";".join("%d %d" % (base + s, base + e) for s, e in k.spans)
                    phrases.write("{0}\t{1}\t{2}\t{3}\n".format(k.id, spans, k.label, k.text))
                for r in sentence.relations:
                    relations.write("{0}\t{1}\t{2}\n".format(r.label, r.origin, r.destination))
