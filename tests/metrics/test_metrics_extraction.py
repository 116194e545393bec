"""eHealth-KD 2019 scoring: every rule and quirk of the official script, on hand-made files.

Expected counts are derived by hand from the rules in /work/shared/specs/ehealthkd2019.md. The
official public data are used only when PROCTOR_EHEALTHKD_DATA names the official repository's
``data`` folder (with ``testing/`` and ``submissions/baseline/``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.formats.brat import (
    SCENARIO_FOLDERS,
    ExtractionFormatError,
    read_collection,
    read_gold,
    word_spans,
)
from proctor.metrics.extraction import (
    ExtractionCounts,
    ExtractionWarning,
    Keyphrase,
    Relation,
    Scenario,
    Sentence,
    extraction_counts,
    precision_recall_f1,
    score_scenario,
)
from proctor.scoring.ehealthkd import score_submission


def write_collection(
    folder: Path,
    sentences: Sequence[str],
    a_lines: Sequence[str],
    b_lines: Sequence[str] = (),
    *,
    name: str = "x",
) -> Path:
    """Write input/output_a/output_b files, one item a line, and return the input file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, lines in [("input", sentences), ("output_a", a_lines), ("output_b", b_lines)]:
        text = "".join(f"{line}\n" for line in lines)
        (folder / f"{prefix}_{name}.txt").write_text(text, encoding="utf-8")
    return folder / f"input_{name}.txt"


def counts_of(tmp_path: Path, gold: tuple, submitted: tuple) -> ExtractionCounts:
    gold_sentences = read_collection(write_collection(tmp_path / "gold", *gold))
    sub_sentences = read_collection(write_collection(tmp_path / "sub", *submitted))
    return extraction_counts(gold_sentences, sub_sentences)


TWO = ["ab cd", "efg hi"]  # sentence 1 starts at offset 6; offset 5 is the newline


def test_offsets_become_local_to_the_sentence_holding_the_first_span(tmp_path: Path) -> None:
    sentences = read_collection(write_collection(tmp_path, TWO, ["1\t6 9\tConcept\tefg"]))
    assert sentences[0].keyphrases == ()
    assert sentences[1].keyphrases == (Keyphrase(1, "Concept", ((0, 3),)),)


def test_an_offset_on_a_newline_belongs_to_the_next_sentence(tmp_path: Path) -> None:
    sentences = read_collection(write_collection(tmp_path, TWO, ["1\t5 9\tConcept\tx"]))
    # local start -1; the official word split slices "efg hi"[-1:3] == "" and finds no space
    assert sentences[1].keyphrases[0].spans == ((-1, 3),)


def test_every_line_is_a_sentence_and_is_stripped(tmp_path: Path) -> None:
    path = write_collection(tmp_path, ["  ab ", "", "cd\t"], ["1\t4 6\tConcept\tcd"])
    sentences = read_collection(path)
    assert [s.text for s in sentences] == ["ab", "", "cd"]
    assert sentences[2].keyphrases[0].spans == ((0, 2),)


def test_spans_keep_file_order_in_sentence_zero_and_are_sorted_elsewhere(tmp_path: Path) -> None:
    a_lines = ["1\t3 5;0 2\tConcept\tcd ab", "2\t10 12;6 9\tConcept\thi efg"]
    sentences = read_collection(write_collection(tmp_path, TWO, a_lines))
    assert sentences[0].keyphrases[0].spans == ((3, 5), (0, 2))
    assert sentences[1].keyphrases[0].spans == ((0, 3), (4, 6))


def test_reversed_spans_in_sentence_zero_match_only_partially(tmp_path: Path) -> None:
    counts = counts_of(
        tmp_path, (TWO, ["1\t0 2;3 5\tConcept\tx"]), (TWO, ["1\t3 5;0 2\tConcept\tx"])
    )
    assert (counts.correct_a, counts.partial_a) == (0, 1)


def test_a_single_span_is_split_into_words_and_equals_the_multi_span_form(tmp_path: Path) -> None:
    gold = (["ab cd ef"], ["1\t0 8\tConcept\tab cd ef"])
    counts = counts_of(tmp_path, gold, (["ab cd ef"], ["7\t0 2;3 5;6 8\tConcept\tab cd ef"]))
    assert counts == ExtractionCounts(correct_a=1)


def test_word_spans_cut_at_every_single_space() -> None:
    assert word_spans("ab  cd", 0, 6) == ((0, 2), (3, 3), (4, 6))
    assert word_spans("xx ab cd", 3, 8) == ((3, 5), (6, 8))


def test_partial_matches_ignore_the_label(tmp_path: Path) -> None:
    counts = counts_of(
        tmp_path, (["ab cd"], ["1\t0 5\tConcept\tx"]), (["ab cd"], ["1\t3 5\tAction\tx"])
    )
    assert counts == ExtractionCounts(partial_a=1)
    assert precision_recall_f1(counts, scenario=Scenario.TASK_A) == (0.5, 0.5, 0.5)


def test_same_spans_with_another_label_are_incorrect(tmp_path: Path) -> None:
    counts = counts_of(
        tmp_path, (["ab cd"], ["1\t0 2\tConcept\tx"]), (["ab cd"], ["1\t0 2\tAction\tx"])
    )
    assert counts == ExtractionCounts(incorrect_a=1)


def test_a_duplicate_submitted_phrase_is_spurious(tmp_path: Path) -> None:
    phrase = "1\t0 2\tConcept\tab"
    counts = counts_of(tmp_path, (["ab cd"], [phrase]), (["ab cd"], [phrase, phrase]))
    assert counts == ExtractionCounts(correct_a=1, spurious_a=1)


def test_the_first_gold_phrase_with_the_same_spans_decides_correct_or_incorrect(
    tmp_path: Path,
) -> None:
    gold = (["ab cd"], ["1\t0 2\tConcept\tab", "2\t0 2\tAction\tab"])
    counts = counts_of(tmp_path, gold, (["ab cd"], ["1\t0 2\tAction\tab"]))
    # the Action gold phrase is not matched: the first gold phrase on these spans is a Concept
    assert counts == ExtractionCounts(incorrect_a=1, missing_a=1)


def test_a_sentence_whose_text_differs_is_skipped_with_a_warning(tmp_path: Path) -> None:
    gold = (["ab cd", "xy"], ["1\t0 2\tConcept\tab", "2\t6 8\tConcept\txy"])
    sub = (["ab ce", "xy"], ["1\t0 2\tConcept\tab", "2\t6 8\tConcept\txy"])
    with pytest.warns(ExtractionWarning, match="sentence 1 differs"):
        counts = counts_of(tmp_path, gold, sub)
    assert counts == ExtractionCounts(correct_a=1)


def test_unannotated_gold_sentences_are_skipped(tmp_path: Path) -> None:
    counts = counts_of(tmp_path, (TWO, ["1\t6 9\tConcept\tefg"]), (TWO, ["1\t0 2\tConcept\tab"]))
    # the submitted phrase in gold-empty sentence 0 counts for nothing; the gold one is missing
    assert counts == ExtractionCounts(missing_a=1)


def test_gold_sentences_beyond_the_submission_are_ignored(tmp_path: Path) -> None:
    gold = (TWO, ["1\t0 2\tConcept\tab", "2\t6 9\tConcept\tefg"])
    counts = counts_of(tmp_path, gold, (TWO[:1], []))
    assert counts == ExtractionCounts(missing_a=1)


GOLD_RELATED = (
    ["ab cd ef"],
    ["1\t0 2\tConcept\tab", "2\t3 5\tConcept\tcd", "3\t6 8\tConcept\tef"],
)


def test_relations_through_an_incorrect_match_are_spurious(tmp_path: Path) -> None:
    gold = (*GOLD_RELATED, ["is-a\t1\t2"])
    sub = (["ab cd ef"], ["1\t0 2\tAction\tab", "2\t3 5\tConcept\tcd"], ["is-a\t1\t2"])
    counts = counts_of(tmp_path, gold, sub)
    assert (counts.correct_b, counts.spurious_b, counts.missing_b) == (0, 1, 1)


def test_relations_through_a_partial_match_can_be_correct(tmp_path: Path) -> None:
    gold = (["ab cd ef"], ["1\t0 5\tConcept\tab cd", "2\t6 8\tAction\tef"], ["target\t2\t1"])
    sub = (["ab cd ef"], ["4\t0 2\tConcept\tab", "5\t6 8\tAction\tef"], ["TARGET\t5\t4"])
    counts = counts_of(tmp_path, gold, sub)
    assert counts == ExtractionCounts(correct_a=1, partial_a=1, correct_b=1)


def test_same_as_classes_let_an_equivalent_end_match(tmp_path: Path) -> None:
    gold = (*GOLD_RELATED, ["same-as\t1\t2", "is-a\t3\t1"])
    counts = counts_of(tmp_path, gold, (*GOLD_RELATED, ["is-a\t3\t2"]))
    assert (counts.correct_b, counts.spurious_b, counts.missing_b) == (1, 0, 1)


def test_same_as_matches_reversed_but_other_labels_do_not(tmp_path: Path) -> None:
    gold = (*GOLD_RELATED, ["same-as\t1\t2", "is-a\t1\t3"])
    counts = counts_of(tmp_path, gold, (*GOLD_RELATED, ["same-as\t2\t1", "is-a\t3\t1"]))
    assert (counts.correct_b, counts.spurious_b, counts.missing_b) == (1, 1, 1)


def test_duplicate_relations_are_removed_on_both_sides(tmp_path: Path) -> None:
    gold = (*GOLD_RELATED, ["is-a\t1\t2", "is-a\t1\t2", "causes\t2\t3"])
    counts = counts_of(tmp_path, gold, (*GOLD_RELATED, ["is-a\t1\t2", "IS-A\t1\t2"]))
    assert (counts.correct_b, counts.spurious_b, counts.missing_b) == (1, 0, 1)


def test_a_relation_across_sentences_is_dropped_with_a_warning(tmp_path: Path) -> None:
    path = write_collection(
        tmp_path, TWO, ["1\t0 2\tConcept\tab", "2\t6 9\tConcept\tefg"], ["is-a\t1\t2"]
    )
    with pytest.warns(ExtractionWarning, match=r"output_b_x.txt line 1: .* crosses sentence"):
        sentences = read_collection(path)
    assert [s.relations for s in sentences] == [(), ()]


def test_an_unknown_keyphrase_id_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = write_collection(tmp_path, TWO, ["1\t0 2\tConcept\tab"], ["is-a\t1\t1", "is-a\t1\t9"])
    with pytest.raises(ExtractionFormatError, match=r"output_b_x.txt line 2: keyphrase ID 9"):
        read_collection(path)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1\t0 2\tConcept", "expected 4 tab-separated fields, found 3"),
        ("1\t0 2\tConcept\t", "expected 4 tab-separated fields, found 3"),
        ("1\t0 2\t\tConcept\tab", "expected 4 tab-separated fields, found 5"),
        ("one\t0 2\tConcept\tab", "the keyphrase ID must be an integer, not 'one'"),
        ("1\t0 2 3\tConcept\tab", "span '0 2 3' must be 'START END'"),
        ("1\t99 100\tConcept\tab", "offset 99 lies beyond the last sentence"),
    ],
)
def test_a_malformed_keyphrase_line_names_file_and_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    folder = tmp_path / "scenario1-main"
    folder.mkdir()
    (folder / "input_scenario1.txt").write_text("ab cd\n", encoding="utf-8")
    good = [f"{n}\t0 2\tConcept\tab" for n in range(1, 7)]
    (folder / "output_a_scenario1.txt").write_text("\n".join([*good, line]), encoding="utf-8")
    (folder / "output_b_scenario1.txt").write_text("", encoding="utf-8")
    with pytest.raises(ExtractionFormatError) as caught:
        read_collection(folder / "input_scenario1.txt")
    assert f"output_a_scenario1.txt line 7: {problem}" in str(caught.value)


def test_a_missing_relation_file_is_an_error(tmp_path: Path) -> None:
    path = write_collection(tmp_path, TWO, [])
    (tmp_path / "output_b_x.txt").unlink()
    with pytest.raises(ExtractionFormatError, match=r"output_b_x\.txt: file not found"):
        read_collection(path)


def test_zero_denominators_give_integer_zero() -> None:
    scores = precision_recall_f1(ExtractionCounts(), scenario=Scenario.MAIN)
    assert scores == (0, 0, 0)
    assert all(type(value) is int for value in scores)
    only_spurious = precision_recall_f1(ExtractionCounts(spurious_a=2), scenario=Scenario.TASK_A)
    assert only_spurious == (0.0, 0, 0)


def test_each_scenario_adds_its_own_counts() -> None:
    counts = ExtractionCounts(1, 2, 3, 4, 5, 6, 7, 8)
    # A: hits 1+1.5, recall den 1+3+2+5, precision den 1+3+2+4; B: hits 6, dens 14 and 13
    assert precision_recall_f1(counts, scenario=Scenario.TASK_A)[:2] == (2.5 / 10, 2.5 / 11)
    assert precision_recall_f1(counts, scenario=Scenario.TASK_B)[:2] == (6 / 13, 6 / 14)
    assert precision_recall_f1(counts, scenario=Scenario.MAIN)[:2] == (8.5 / 23, 8.5 / 25)


def test_scenario_three_scores_relations_on_the_reused_gold_keyphrases(tmp_path: Path) -> None:
    gold = tmp_path / "gold"
    sub = tmp_path / "sub"
    for scenario, folder in SCENARIO_FOLDERS.items():
        name = f"scenario{scenario.value}"
        write_collection(gold / folder, *GOLD_RELATED, ["is-a\t1\t2", "causes\t2\t3"], name=name)
        # the submission's sentence file may keep the gold name input_scenarioN.txt
        write_collection(sub / folder, *GOLD_RELATED, ["is-a\t1\t2"], name=name)
    result = score_submission(sub, read_gold(gold))[Scenario.TASK_B]
    assert result.counts == ExtractionCounts(correct_a=3, correct_b=1, missing_b=1)
    assert (result.precision, result.recall) == (1.0, 0.5)


# Properties over generated sentences -------------------------------------------------------------

spans = st.tuples(st.integers(0, 20), st.integers(0, 20)).map(lambda t: (min(t), max(t) + 1))
phrases = st.lists(
    st.tuples(st.lists(spans, min_size=1, max_size=2).map(tuple), st.sampled_from(["C", "A"])),
    max_size=6,
)


def build(items: list[tuple[tuple[tuple[int, int], ...], str]], relations: list[int]) -> Sentence:
    keyphrases = tuple(Keyphrase(i + 1, label, s) for i, (s, label) in enumerate(items))
    n = len(keyphrases)
    rels = tuple(
        Relation(("same-as", "is-a")[r % 2], r % n + 1, (r // 2) % n + 1) for r in relations if n
    )
    return Sentence("t", keyphrases, rels)


@given(phrases, phrases, st.lists(st.integers(0, 50), max_size=5), st.lists(st.integers(0, 50)))
def test_every_item_is_counted_exactly_once(
    gold_items: list, sub_items: list, gold_rels: list[int], sub_rels: list[int]
) -> None:
    gold, sub = build(gold_items, gold_rels), build(sub_items, sub_rels)
    c = extraction_counts([gold], [sub])
    if not gold.annotated:
        assert c == ExtractionCounts()
        return
    assert c.correct_a + c.incorrect_a + c.partial_a + c.spurious_a == len(sub.keyphrases)
    assert c.correct_a + c.incorrect_a + c.partial_a + c.missing_a == len(gold.keyphrases)
    assert c.correct_b + c.spurious_b == len(set(sub.relations))
    assert c.correct_b + c.missing_b == len(set(gold.relations))
    for scenario in Scenario:
        assert all(0 <= value <= 1 for value in precision_recall_f1(c, scenario=scenario))


@given(phrases, st.lists(st.integers(0, 50), max_size=5))
def test_gold_scored_against_itself_is_perfect_when_span_lists_are_unique(
    items: list, rels: list[int]
) -> None:
    unique = list({s: (s, label) for s, label in items}.values())
    gold = build(unique, rels)
    result = score_scenario([gold], [gold], scenario=Scenario.MAIN)
    assert result.counts.correct_a == len(unique)
    assert result.counts.correct_b == len(set(gold.relations))
    assert result.f1 == (1.0 if unique else 0)


def test_a_relation_naming_an_absent_keyphrase_is_rejected() -> None:
    with pytest.raises(ValueError, match="keyphrase ID 2"):
        Sentence("ab", (Keyphrase(1, "Concept", ((0, 2),)),), (Relation("is-a", 1, 2),))


# Official public data (optional) -----------------------------------------------------------------

OFFICIAL = os.environ.get("PROCTOR_EHEALTHKD_DATA")


@pytest.mark.skipif(
    not OFFICIAL,
    reason="set PROCTOR_EHEALTHKD_DATA to the official ehealthkd-2019 repository's data/ folder",
)
def test_the_public_baseline_scores_exactly_as_published() -> None:
    data = Path(str(OFFICIAL))
    results = score_submission(data / "submissions" / "baseline", read_gold(data / "testing"))
    main, task_a, task_b = (results[s] for s in Scenario)
    assert (main.f1, main.precision, main.recall) == (
        0.43091787439613516,
        0.5204200700116686,
        0.3676834295136026,
    )
    assert task_a.f1 == 0.5466377440347071
    assert task_b.f1 == 0.12307692307692308
