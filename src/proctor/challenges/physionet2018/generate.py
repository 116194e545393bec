"""Write the synthetic records of the ``physionet2018`` reference challenge.

Usage: ``python -m proctor.challenges.physionet2018.generate OUTDIR`` writes

- ``OUTDIR/training/``: ``RECORDS``, and per record ``.hea``, ``.dat`` (format 16), ``.arousal``
  (stage and region annotations) and ``-arousal.mat`` (labels): public, as in 2018;
- ``OUTDIR/test/``: ``RECORDS``, ``.hea``, ``.dat`` only (the hidden inputs);
- ``OUTDIR/test-reference/``: ``RECORDS``, ``.arousal`` and ``-arousal.mat`` (hidden references).

The output is a pure function of the code: every record draws from its own seeded
``numpy.random.Generator`` and the label files carry no timestamps, so regenerating yields the
same bytes as the committed ``data/`` folder.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.challenges.physionet2018.labels import arousal_labels, parse_annotations
from proctor.challenges.physionet2018.schedule import Scenario, draw_scenario
from proctor.challenges.physionet2018.signals import CHANNELS, synthesize, to_digital
from proctor.formats.arousal_mat import write_arousal_reference


@contextmanager
def quiet_wfdb() -> Iterator[None]:
    """Silence the pandas ≥ 3.1 deprecation of ``inplace=`` that wfdb 4.3 triggers."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The inplace keyword", DeprecationWarning)
        yield


with quiet_wfdb():
    import wfdb

SEED = 2018
"""Root seed of every record's random generator."""
FS = 200
"""Sampling frequency, Hz."""
SECONDS = 100
"""Duration of every record, seconds."""
N_RECORDS = 8
"""Records per split."""
DATA_DIR = Path(__file__).parent / "data"
"""Where the committed data live."""


@dataclass(frozen=True)
class Split:
    """A set of records: its record-name prefix, its seed stream and whether it is hidden."""

    prefix: str
    stream: int
    hidden: bool

    def names(self) -> list[str]:
        """Record names of this split: ``tr01-0001``, ``tr01-0002``, …."""
        return [f"{self.prefix}01-{i:04d}" for i in range(1, N_RECORDS + 1)]


TRAINING = Split("tr", 1, hidden=False)
TEST = Split("te", 2, hidden=True)


def make_scenario(split: Split, index: int) -> tuple[Scenario, np.random.Generator]:
    """The scenario of record ``index`` (0-based) of ``split``, and its generator for signals."""
    rng = np.random.default_rng([SEED, split.stream, index])
    return draw_scenario(rng, length=SECONDS * FS, fs=FS), rng


def write_signals(directory: Path, name: str, digital: np.ndarray) -> None:
    """Write ``name.hea`` and ``name.dat`` (format 16, one interleaved file)."""
    wfdb.wrsamp(
        name,
        fs=FS,
        units=[c.units for c in CHANNELS],
        sig_name=[c.name for c in CHANNELS],
        d_signal=digital,
        fmt=["16"] * len(CHANNELS),
        adc_gain=[c.gain for c in CHANNELS],
        baseline=[0] * len(CHANNELS),
        write_dir=str(directory),
    )


def write_annotations(directory: Path, name: str, scenario: Scenario) -> None:
    """Write ``name.arousal`` (comment annotations whose aux notes carry stages and regions)."""
    samples, notes = scenario.annotations()
    wfdb.wrann(
        name,
        "arousal",
        np.array(samples, dtype=np.int64),
        symbol=['"'] * len(samples),
        aux_note=notes,
        write_dir=str(directory),
    )


def write_labels(directory: Path, name: str, scenario: Scenario) -> None:
    """Write ``name-arousal.mat``: the per-sample labels derived from the annotations."""
    samples, notes = scenario.annotations()
    labels = arousal_labels(parse_annotations(samples, notes), length=scenario.length, fs=FS)
    write_arousal_reference(directory / f"{name}-arousal.mat", labels)


def write_split(outdir: Path, split: Split) -> None:
    """Write one split: inputs (and, for training, labels) or hidden inputs plus references."""
    inputs = outdir / ("test" if split.hidden else "training")
    references = outdir / "test-reference" if split.hidden else inputs
    for folder in {inputs, references}:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "RECORDS").write_text("".join(f"{n}\n" for n in split.names()))
    for index, name in enumerate(split.names()):
        scenario, rng = make_scenario(split, index)
        write_signals(inputs, name, to_digital(synthesize(scenario, rng)))
        write_annotations(references, name, scenario)
        write_labels(references, name, scenario)


def generate(outdir: Path) -> None:
    """Write ``training/``, ``test/`` and ``test-reference/`` under ``outdir``."""
    with quiet_wfdb():
        for split in (TRAINING, TEST):
            write_split(outdir, split)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``python -m proctor.challenges.physionet2018.generate OUTDIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m proctor.challenges.physionet2018.generate",
        description="Write the synthetic physionet2018 records (training, test, test-reference).",
    )
    parser.add_argument(
        "outdir", type=Path, nargs="?", default=DATA_DIR, help=f"default: {DATA_DIR}"
    )
    args = parser.parse_args(argv)
    generate(args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
