"""The 2018 generator at night length: the published rates, measured on the label schedule alone.

The 2018 paper counts, over 1,983 records of about 7.7 h, 43,822 RERAs, 56,936 hypopneas and
58,000 apneas; target arousals are 3.2 % of a real record's scored time and wake about 30 %.
No waveform is synthesized here: the schedule and the label rules are enough.
"""

from __future__ import annotations

import numpy as np
import pytest

from proctor.challenges.physionet2018.generate import FS, TEST, TRAINING, main, make_scenario
from proctor.challenges.physionet2018.labels import (
    EXCLUDED_RESPIRATORY,
    arousal_labels,
    parse_annotations,
    wake_ups,
)
from proctor.challenges.physionet2018.night import label_shares
from proctor.challenges.physionet2018.schedule import Scenario

NIGHT_S = 27000
RECORDS = 6


@pytest.fixture(scope="module")
def nights() -> list[Scenario]:
    return [make_scenario(split, i, NIGHT_S)[0] for split in (TRAINING, TEST)
            for i in range(RECORDS // 2)]  # fmt: skip


def labels_of(scenario: Scenario) -> np.ndarray:
    samples, notes = scenario.annotations()
    return arousal_labels(parse_annotations(samples, notes), length=scenario.length, fs=FS)


def test_targets_are_two_to_six_percent_of_the_scored_time_of_a_night(
    nights: list[Scenario],
) -> None:
    labels = np.concatenate([labels_of(night) for night in nights])
    share = (labels == 1).sum() / (labels >= 0).sum()
    assert 0.02 <= share <= 0.06, share


def test_events_come_at_the_published_rates_per_night(nights: list[Scenario]) -> None:
    hours = NIGHT_S / 3600
    reras = np.mean([sum(e.kind == "arousal_rera" for e in n.events) for n in nights])
    breathing = np.mean([sum(e.kind in EXCLUDED_RESPIRATORY for e in n.events) for n in nights])
    assert 0.5 < reras / (43822 / 1983 / 7.7 * hours) < 1.5
    assert 0.5 < breathing / ((56936 + 58000) / 1983 / 7.7 * hours) < 1.5


def test_a_night_has_wake_periods_of_about_thirty_percent(nights: list[Scenario]) -> None:
    shares = [label_shares(n.stages, n.events, length=n.length, fs=FS).wake for n in nights]
    assert 0.2 <= float(np.mean(shares)) <= 0.4, shares
    for night in nights:
        stages = [stage for _, stage in night.stages]
        runs = "".join("W" if s == "W" else "s" for s in stages)
        assert "WWWWWWWWWW" in runs  # wake periods, not single wake epochs
        assert wake_ups(night.stages)


def test_apneas_hypopneas_and_wake_ups_are_not_scored_ten_seconds_around(
    nights: list[Scenario],
) -> None:
    margin = 10 * FS
    for night in nights:
        labels = labels_of(night)
        breathing = [e for e in night.events if e.kind in EXCLUDED_RESPIRATORY]
        assert breathing
        for event in breathing:
            assert (labels[event.start - margin : event.end + margin + 1] == -1).all()
        for sample in wake_ups(night.stages):
            assert (labels[max(sample - margin, 0) : sample + margin + 1] == -1).all()


def test_the_generator_prints_the_label_shares(tmp_path, capsys) -> None:
    assert main([str(tmp_path / "out"), "--seconds", "3600", "--records", "1"]) == 0
    printed = capsys.readouterr().out
    assert "training: 1 record of 3600 s: targets " in printed
    assert "% of the scored time" in printed and "wake " in printed


REAL_GAINS = {"SaO2": "655.35(-32768)/%", "ECG": "1000/mV"}
"""The 2018 training headers: every other channel is ``1/uV``."""


@pytest.mark.parametrize("split", ["training", "test"])
def test_the_bundled_headers_use_the_real_2018_gains_and_baselines(split: str) -> None:
    from proctor.challenges.physionet2018 import CHALLENGE_DIR
    from proctor.challenges.physionet2018.generate import quiet_wfdb

    folder = CHALLENGE_DIR / "data" / split
    for header in sorted(folder.glob("*.hea")):
        lines = header.read_text().splitlines()[1:]
        for line in lines:
            fields = line.split()
            assert fields[2] == REAL_GAINS.get(fields[8], "1/uV"), f"{header.name}: {line}"
    with quiet_wfdb():
        import wfdb

        record = wfdb.rdrecord(str(sorted(folder.glob("*.hea"))[0].with_suffix("")))
    sao2 = record.p_signal[:, record.sig_name.index("SaO2")]
    assert 80 < float(np.median(sao2)) <= 100  # percent, read through gain and baseline


def windows_classes(labels: np.ndarray) -> set[float]:
    """The classes the organizers' 2018 sample training script sees in one record: the maximum
    label of each whole 60 s window (it fits one classifier per record on them)."""
    step = 60 * FS
    return {float(labels[k : k + step].max()) for k in range(0, len(labels) - step + 1, step)}


def test_kit_writes_training_records_long_enough_for_the_sample_training_script(
    tmp_path, capsys
) -> None:
    from typer.testing import CliRunner

    from proctor.cli.main import build_app
    from proctor.formats.arousal_mat import read_arousal_reference

    kit = tmp_path / "kit"
    done = CliRunner().invoke(build_app(), ["kit", "physionet2018", str(kit), "--seconds", "3600",
                                            "--records", "2"])  # fmt: skip
    assert done.exit_code == 0, done.stdout
    assert "targets " in done.stdout and "% of the scored time" in done.stdout
    records = (kit / "data" / "RECORDS").read_text().split()
    assert records == ["tr01-0001", "tr01-0002"]
    for record in records:
        labels = read_arousal_reference(kit / "data" / f"{record}-arousal.mat")
        assert len(labels) == 3600 * FS
        assert len(windows_classes(labels)) >= 2, record
    assert not list(kit.rglob("te01-*")), "the kit holds no hidden record"


def test_kit_without_options_ships_the_bundled_records(tmp_path) -> None:
    from proctor.challenges.physionet2018 import CHALLENGE_DIR
    from proctor.services.local.catalog import write_kit

    write_kit("physionet2018", tmp_path / "kit")
    shipped = sorted(p.name for p in (tmp_path / "kit" / "data").iterdir())
    assert shipped == sorted(p.name for p in (CHALLENGE_DIR / "data" / "training").iterdir())


def test_kit_records_are_also_laid_out_as_the_2018_download_one_folder_each(tmp_path) -> None:
    """The organizers' ``prepare-entry`` finds training records by walking ``./training/``
    for a folder per record (``training/tr03-0005/tr03-0005.hea``), as the 2018 data came."""
    import os

    from proctor.services.local.catalog import FreshRecords, write_kit_with

    kit = tmp_path / "kit"
    write_kit_with("physionet2018", kit, FreshRecords(seconds=3600, records=2))
    headers, labels, signals = [], [], []
    root = str(kit / "data")
    for folder, _, names in os.walk(root, followlinks=True):
        if folder.startswith(os.path.join(root, "training", "")):
            headers += [n for n in names if n.endswith(".hea")]
            labels += [n for n in names if n.endswith("-arousal.mat")]
            signals += [n for n in names if n.endswith(".mat") and "arousal" not in n]
    assert sorted(headers) == ["tr01-0001.hea", "tr01-0002.hea"]
    assert sorted(labels) == ["tr01-0001-arousal.mat", "tr01-0002-arousal.mat"]
    assert sorted(signals) == ["tr01-0001.mat", "tr01-0002.mat"]
    one = kit / "data" / "training" / "tr01-0001"
    assert (one / "tr01-0001.mat").read_bytes() == (kit / "data" / "tr01-0001.mat").read_bytes()
    assert (kit / "data" / "RECORDS").read_text().split() == ["tr01-0001", "tr01-0002"]
