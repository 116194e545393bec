"""``proctor.scoring.physionet2018``: one ``.vec`` file scored as the official command line does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proctor.errors import InputFileError
from proctor.formats.arousal_mat import write_arousal_reference
from proctor.formats.vec import VecFormatError
from proctor.metrics.physionet2018 import ArousalTally
from proctor.scoring.physionet2018 import (
    record_name,
    reference_file,
    score_task,
    score_vec_file,
)

RECORDS = ("tr03-0005", "tr03-0029")


def labels() -> np.ndarray:
    values = np.zeros(120)
    values[30:60] = 1
    values[100:110] = -1
    return values


@pytest.fixture
def flat(tmp_path: Path) -> tuple[Path, Path]:
    """References in one folder (REFDIR/REC-arousal.mat) and a folder of REC.vec outputs."""
    references, outputs = tmp_path / "references", tmp_path / "outputs"
    references.mkdir()
    outputs.mkdir()
    rng = np.random.default_rng(7)
    for record in RECORDS:
        truth = labels()
        write_arousal_reference(references / f"{record}-arousal.mat", truth)
        predictions = np.clip(0.4 * (truth > 0) + 0.6 * rng.random(truth.size), 0, 1)
        (outputs / f"{record}.vec").write_text("".join(f"{p:.3f}\n" for p in predictions))
    return references, outputs


def test_a_vec_file_scores_as_the_pipeline_scores_the_same_record(
    flat: tuple[Path, Path],
) -> None:
    references, outputs = flat
    tally = ArousalTally()
    rows = {}
    for record in RECORDS:
        score, warned = score_vec_file(tally, str(outputs / f"{record}.vec"), references)
        assert not warned
        rows[record] = {"auprc": float(score.auprc), "auroc": float(score.auroc)}
    task = score_task(outputs, references, RECORDS, "{record}.vec")
    assert rows == task.per_record
    assert float(tally.gross_auprc()) == task.summary["auprc"]


def test_the_nested_official_layout_wins_over_a_flat_reference(tmp_path: Path) -> None:
    assert reference_file(tmp_path, "r1") == tmp_path / "r1" / "r1-arousal.mat"
    (tmp_path / "r1-arousal.mat").touch()
    assert reference_file(tmp_path, "r1") == tmp_path / "r1-arousal.mat"
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "r1-arousal.mat").touch()
    assert reference_file(tmp_path, "r1") == tmp_path / "r1" / "r1-arousal.mat"


def test_the_record_is_the_file_name_without_vec_as_given() -> None:
    assert record_name("some/dir/tr03-0005.vec") == "tr03-0005"
    assert record_name("tr03-0005.txt") == "tr03-0005.txt"


def test_a_short_file_is_scored_with_the_length_warning(flat: tuple[Path, Path]) -> None:
    references, outputs = flat
    short = outputs / "tr03-0005.vec"
    short.write_text("0.5\n" * 10)
    score, warned = score_vec_file(ArousalTally(), str(short), references)
    assert warned
    assert 0 <= score.auprc <= 1


def test_a_bad_value_raises_and_adds_nothing_to_the_tally(flat: tuple[Path, Path]) -> None:
    references, outputs = flat
    bad = outputs / "tr03-0005.vec"
    bad.write_text("0.5\nnan\n")
    tally = ArousalTally()
    with pytest.raises(VecFormatError, match="line 2") as caught:
        score_vec_file(tally, str(bad), references)
    assert caught.value.length_notes  # two lines for 120 samples: the warning comes first
    assert np.isnan(tally.gross_auprc())


def test_a_missing_reference_is_an_input_file_error(flat: tuple[Path, Path]) -> None:
    references, outputs = flat
    (outputs / "tr03-9999.vec").write_text("0.5\n")
    with pytest.raises(InputFileError, match="reference file not found"):
        score_vec_file(ArousalTally(), str(outputs / "tr03-9999.vec"), references)
