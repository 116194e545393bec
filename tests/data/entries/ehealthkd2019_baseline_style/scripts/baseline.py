# coding: utf8
"""A gazetteer baseline run as the eHealth-KD 2019 organizers run theirs.

Written for Proctor's tests (not the organizers' code), with the same command line
(``python3 -m scripts.baseline [--skip-A|--skip-B] TRAINING TEST OUTPUT``) and calls: learn
every training keyphrase's label and the relation between labelled pairs, find the phrases with
``re.finditer`` on word boundaries, then the known relations between the phrases found.
"""

import argparse
import re
from pathlib import Path

from .utils import Collection, Keyphrase, Relation


def train(finput: Path):
    doc = Collection()
    doc.load(finput)
    phrases = {k.text.lower(): k.label for s in doc.sentences for k in s.keyphrases}
    relations = {}
    for sentence in doc.sentences:
        for r in sentence.relations:
            origin, destination = r.from_phrase, r.to_phrase
            if origin is None or destination is None:
                continue
            key = (origin.text.lower(), origin.label, destination.text.lower(), destination.label)
            relations[key] = r.label
    return phrases, relations


def test(finput: Path, model, skip_A, skip_B):
    phrases, relations = model
    doc = Collection()
    if skip_A:
        doc.load_keyphrases(finput)
    else:
        doc.load_input(finput)
        next_id = 0
        for phrase, label in phrases.items():
            for sentence in doc.sentences:
                for match in re.finditer(r"\b" + re.escape(phrase) + r"\b", sentence.text.lower()):
                    keyphrase = Keyphrase(sentence, label, next_id, [match.span()])
                    keyphrase.split()
                    next_id += 1
                    sentence.keyphrases.append(keyphrase)
    if not skip_B:
        for sentence in doc.sentences:
            for origin in sentence.keyphrases:
                for destination in sentence.keyphrases:
                    key = (origin.text.lower(), origin.label,
                           destination.text.lower(), destination.label)
                    if key in relations:
                        sentence.relations.append(
                            Relation(sentence, origin.id, destination.id, relations[key]))
            sentence.remove_dup_relations()
    return doc


def main(training_input, testing_input, foutput, skip_A, skip_B):
    doc = test(testing_input, train(training_input), skip_A, skip_B)
    doc.dump(foutput, skip_empty_sentences=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("training")
    parser.add_argument("test")
    parser.add_argument("output")
    parser.add_argument("--skip-A", action="store_true")
    parser.add_argument("--skip-B", action="store_true")
    args = parser.parse_args()
    main(Path(args.training), Path(args.test), Path(args.output), args.skip_A, args.skip_B)
