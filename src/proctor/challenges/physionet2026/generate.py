"""Write the synthetic records of the ``physionet2026`` reference challenge.

Usage: ``python -m proctor.challenges.physionet2026.generate [OUTDIR]`` writes, in the layout
of the 2026 challenge's data (a table of the sessions, and EDF files per site)::

    FOLDER/demographics.csv        one row per session: SiteID, BDSPPatientID, CreationTime,
                                   BidsFolder, SessionID, Age, Sex, Race, Ethnicity, BMI (and,
                                   in the training folder only, Cognitive_Impairment and
                                   Time_to_Event)
    FOLDER/physiological_data/SITE/BIDS_ses-N.edf                          the PSG signals
    FOLDER/algorithmic_annotations/SITE/BIDS_ses-N_caisr_annotations.edf   1 Hz traces
    FOLDER/human_annotations/SITE/BIDS_ses-N_expert_annotations.edf        training only

Folders under ``OUTDIR``: ``public/training`` (labelled), ``public/supplementary`` (no labels:
the quiz), ``hidden/test`` (the exam) with its labels in ``reference/test.csv``, and the kit's
stand-in (``stand-in/inputs/holdout``, ``stand-in/references/holdout.csv``). The training
labels and ages, from which the reward takes the prevalence of impairment at each age, go
beside the scoring program (``scoring/prevalence.csv``): public data. Records are 60 s at
16 Hz (SpO2 at 1 Hz), so the data stay near 3 MB. A label is drawn from the age; positive
sessions have slower EEG and more respiratory events, so a model can learn something.
Seeded: the same bytes on every run.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.challenges.physionet2026 import CHALLENGE_DIR
from proctor.challenges.physionet2026.edf import EdfSignal, write_edf

SECONDS = 60
RATE = 16
SITES = ("S0001", "S0002")
EEG = ("F3", "F4", "C3", "C4", "O1", "O2")
RACES = ("White", "Black or African American", "Asian", "Other", "Unknown")
ETHNICITIES = ("Not Hispanic or Latino", "Hispanic or Latino", "Unknown")
DEMOGRAPHICS = "demographics.csv"
COLUMNS = ("SiteID", "BDSPPatientID", "CreationTime", "BidsFolder", "SessionID", "Age", "Sex",
           "Race", "Ethnicity", "BMI")  # fmt: skip
LABELS = ("Cognitive_Impairment", "Time_to_Event")
PREVALENCE = "prevalence.csv"


@dataclass(frozen=True, slots=True)
class Session:
    """One synthetic PSG session and its patient."""

    site: str
    patient: int
    age: int
    sex: str
    race: str
    ethnicity: str
    bmi: float
    impaired: bool
    days_to_event: int | None

    @property
    def bids(self) -> str:
        """The session's BIDS folder name, its identifier in the table."""
        return f"sub-{self.site}{self.patient}"

    def row(self, labelled: bool) -> list[str]:
        """The session's row of ``demographics.csv``."""
        row = [self.site, str(self.patient), "2016-05-01 22:00:00", self.bids, "1",
               str(self.age), self.sex, self.race, self.ethnicity, f"{self.bmi:.1f}"]  # fmt: skip
        if labelled:
            days = "" if self.days_to_event is None else str(self.days_to_event)
            row += ["True" if self.impaired else "False", days]
        return row


def draw_session(rng: np.random.Generator, patient: int) -> Session:
    """A patient of 50 to 89: the older, the likelier a later cognitive impairment."""
    age = int(rng.integers(50, 90))
    impaired = bool(rng.random() < 1 / (1 + np.exp(-(age - 74) / 12)))
    return Session(
        site=SITES[patient % len(SITES)],
        patient=patient,
        age=age,
        sex=str(rng.choice(("Female", "Male"))),
        race=str(rng.choice(RACES)),
        ethnicity=str(rng.choice(ETHNICITIES)),
        bmi=float(rng.normal(28, 4)),
        impaired=impaired,
        days_to_event=int(rng.integers(400, 2000)) if impaired else None,
    )


def _wave(rng: np.random.Generator, slow: float, amplitude: float) -> np.ndarray:
    """A noisy oscillation: more power at 1.5 Hz than 6 Hz as ``slow`` grows (0 to 1)."""
    t = np.arange(SECONDS * RATE) / RATE
    phase = rng.uniform(0, 2 * np.pi, 2)
    low = slow * np.sin(2 * np.pi * 1.5 * t + phase[0])
    high = (1 - slow) * np.sin(2 * np.pi * 6.0 * t + phase[1])
    wave: np.ndarray = amplitude * (low + high + 0.3 * rng.standard_normal(t.size))
    return wave


def physiological(rng: np.random.Generator, session: Session) -> list[EdfSignal]:
    """The PSG: six EEG leads, two mastoids, EOG, chin and leg EMG, ECG, airflow and SpO2."""
    slow = float(np.clip(0.4 + 0.12 * session.impaired + rng.normal(0, 0.15), 0.05, 0.95))
    signals = [EdfSignal(name, "uV", RATE, _wave(rng, slow, 40.0)) for name in EEG]
    signals += [EdfSignal(name, "uV", RATE, 5 * rng.standard_normal(SECONDS * RATE))
                for name in ("M1", "M2")]  # fmt: skip
    signals += [EdfSignal(name, "uV", RATE, _wave(rng, 0.8, 60.0)) for name in ("E1", "E2")]
    signals.append(EdfSignal("Chin", "uV", RATE, 10 * rng.standard_normal(SECONDS * RATE)))
    signals += [EdfSignal(name, "uV", RATE, 8 * rng.standard_normal(SECONDS * RATE))
                for name in ("LAT", "RAT")]  # fmt: skip
    t = np.arange(SECONDS * RATE) / RATE
    signals.append(EdfSignal("ECG", "mV", RATE, np.sin(2 * np.pi * 1.1 * t) ** 15))
    signals.append(EdfSignal("Airflow", "a.u.", RATE, np.sin(2 * np.pi * 0.25 * t)))
    spo2 = 95 - 0.5 * session.impaired + rng.normal(0, 1.0, SECONDS)
    signals.append(EdfSignal("SpO2", "%", 1, spo2))
    return signals


def _events(rng: np.random.Generator, count: int) -> np.ndarray:
    """A 1 Hz trace of ``count`` events of 5 s each (1 during an event, 0 elsewhere)."""
    trace = np.zeros(SECONDS)
    for start in rng.choice(np.arange(0, SECONDS - 5, 6), size=count, replace=False):
        trace[start : start + 5] = 1
    return trace


def _stages(rng: np.random.Generator, wake: float) -> np.ndarray:
    """A 1 Hz hypnogram over 30 s epochs: 5 wake, 4 REM, 3 N1, 2 N2, 1 N3."""
    shares = np.array([wake, 0.2, 0.1, 0.4, 0.3 - wake / 2])
    shares = np.clip(shares, 0.01, None) / np.clip(shares, 0.01, None).sum()
    epochs = rng.choice([5, 4, 3, 2, 1], size=SECONDS // 30, p=shares)
    stages: np.ndarray = np.repeat(epochs, 30).astype(float)
    return stages


def annotation_signals(rng: np.random.Generator, session: Session, who: str) -> list[EdfSignal]:
    """Respiratory, arousal and limb events and the hypnogram at 1 Hz (CAISR or expert)."""
    resp = int(rng.integers(1, 5)) + int(session.impaired)
    signals = [
        EdfSignal(f"resp_{who}", "", 1, _events(rng, resp)),
        EdfSignal(f"arousal_{who}", "", 1, _events(rng, int(rng.integers(0, 4)))),
        EdfSignal(f"limb_{who}", "", 1, _events(rng, int(rng.integers(0, 3)))),
        EdfSignal(f"stage_{who}", "", 1, _stages(rng, 0.1 + 0.15 * session.impaired)),
    ]
    if who == "caisr":
        for name in ("caisr_prob_w", "caisr_prob_n3", "caisr_prob_arous"):
            signals.append(EdfSignal(name, "", 1, rng.uniform(0, 1, SECONDS)))
    return signals


def write_folder(folder: Path, sessions: list[Session], seed: int, *, labelled: bool) -> None:
    """A data folder: the table and each session's EDF files (expert ones when labelled)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / DEMOGRAPHICS).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS + LABELS if labelled else COLUMNS)
        writer.writerows(session.row(labelled) for session in sessions)
    for index, session in enumerate(sessions):
        rng = np.random.default_rng([seed, index])
        stem = f"{session.bids}_ses-1"
        site = session.site
        write_edf(folder / "physiological_data" / site / f"{stem}.edf",
                  physiological(rng, session), seconds=SECONDS)  # fmt: skip
        write_edf(folder / "algorithmic_annotations" / site / f"{stem}_caisr_annotations.edf",
                  annotation_signals(rng, session, "caisr"), seconds=SECONDS)  # fmt: skip
        if labelled:
            write_edf(folder / "human_annotations" / site / f"{stem}_expert_annotations.edf",
                      annotation_signals(rng, session, "expert"), seconds=SECONDS)  # fmt: skip


def write_labels(path: Path, sessions: list[Session]) -> None:
    """A reference table: each session's identifiers, age, sex and label."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(("SiteID", "BDSPPatientID", "BidsFolder", "Age", "Sex",
                         "Cognitive_Impairment"))  # fmt: skip
        for s in sessions:
            writer.writerow((s.site, s.patient, s.bids, s.age, s.sex, s.impaired))


def generate(out: Path, prevalence: Path) -> None:
    """Write every folder of the challenge's data under ``out``, the prevalence table apart."""
    rng = np.random.default_rng(2026)
    counts = {"training": 40, "supplementary": 4, "test": 16, "holdout": 8}
    drawn: dict[str, list[Session]] = {}
    patient = 100000
    for split, count in counts.items():
        drawn[split] = [draw_session(rng, patient + i) for i in range(count)]
        patient += 1000
    write_folder(out / "public" / "training", drawn["training"], 1, labelled=True)
    write_folder(out / "public" / "supplementary", drawn["supplementary"], 2, labelled=False)
    write_folder(out / "hidden" / "test", drawn["test"], 3, labelled=False)
    write_folder(out / "stand-in" / "inputs" / "holdout", drawn["holdout"], 4, labelled=False)
    write_labels(out / "reference" / "test.csv", drawn["test"])
    write_labels(out / "stand-in" / "references" / "holdout.csv", drawn["holdout"])
    write_labels(prevalence, drawn["training"])


def main(argv: list[str]) -> int:
    """Write the data to ``argv[0]`` (default: the challenge's own ``data/``).

    The prevalence table goes to ``argv[0]/prevalence.csv`` (default: beside the scoring
    program, ``scoring/prevalence.csv``).
    """
    if argv:
        generate(Path(argv[0]), Path(argv[0]) / PREVALENCE)
    else:
        generate(CHALLENGE_DIR / "data", CHALLENGE_DIR / "scoring" / PREVALENCE)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
