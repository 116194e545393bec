"""Write the synthetic records of the ``physionet2017`` reference challenge.

Usage: ``python -m proctor.challenges.physionet2017.generate [OUTDIR] [--records N]`` writes, as
the 2017 challenge distributed its data,

- ``OUTDIR/training/``: ``RECORDS``, ``REFERENCE.csv`` (``RECORD,LABEL``) and per record
  ``.hea`` + ``.mat`` (one ECG lead at 300 Hz, the MATLAB variable ``val``, 1 × samples, WFDB
  format ``16+24``, gain 1000/mV): public;
- ``OUTDIR/test/``: ``RECORDS``, ``.hea``, ``.mat`` (the hidden inputs);
- ``OUTDIR/test-reference/``: ``RECORDS`` and ``REFERENCE.csv`` (the hidden references).

Each split holds the four classes in fixed shares (more A, O and ~ than the 2017 data, so that
a small set still scores every class), shuffled by a seeded generator; every record draws its
rhythm, duration (9-20 s) and noise from its own seeded ``numpy.random.Generator``, so the
output is a pure function of the code and the parameters.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.challenges.physionet2017.rhythms import FS, synthesize
from proctor.formats.wfdb_mat import SignalSpec, write_mat_record

SEED = 2017
"""Root seed of every random generator of this challenge."""
N_RECORDS = 48
"""Records per split (bundled default)."""
SHARES = {"N": 0.46, "A": 0.2, "O": 0.23, "~": 0.11}
"""Share of each class in a split."""
SECONDS = (9, 20)
"""Range of record durations, whole seconds."""
GAIN = 1000.0
"""ADC units per mV, as in the 2017 headers."""
DATA_DIR = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Split:
    """A set of records: name prefix, seed stream, and whether it is hidden."""

    prefix: str
    stream: int
    hidden: bool

    def names(self, count: int = N_RECORDS) -> list[str]:
        """Record names of this split: ``A00001``, ``A00002``, …."""
        return [f"{self.prefix}{i:05d}" for i in range(1, count + 1)]


TRAINING = Split("A", 1, hidden=False)
TEST = Split("T", 2, hidden=True)


def split_labels(split: Split, count: int) -> list[str]:
    """The class of every record of ``split``, in record order (fixed shares, shuffled)."""
    counts = {label: round(share * count) for label, share in SHARES.items()}
    counts["N"] += count - sum(counts.values())
    labels = [label for label, n in counts.items() for _ in range(n)]
    order = np.random.default_rng([SEED, split.stream, 0]).permutation(count)
    return [labels[i] for i in order]


def record_signal(split: Split, index: int, label: str) -> np.ndarray:
    """The digital samples (samples × 1, int16) of record ``index`` (0-based) of ``split``."""
    rng = np.random.default_rng([SEED, split.stream, index + 1])
    seconds = int(rng.integers(SECONDS[0], SECONDS[1] + 1))
    ecg = synthesize(label, rng, seconds)
    digital = np.clip(np.round(ecg * GAIN), -32767, 32767).astype(np.int16)
    return digital.reshape(-1, 1)


def write_split(outdir: Path, split: Split, count: int) -> None:
    """Write one split's inputs, and its labels beside them (training) or apart (test)."""
    inputs = outdir / ("test" if split.hidden else "training")
    references = outdir / "test-reference" if split.hidden else inputs
    names = split.names(count)
    labels = split_labels(split, count)
    for folder in {inputs, references}:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "RECORDS").write_text("".join(f"{n}\n" for n in names))
    reference = "".join(f"{n},{label}\n" for n, label in zip(names, labels, strict=True))
    (references / "REFERENCE.csv").write_text(reference)
    for index, (name, label) in enumerate(zip(names, labels, strict=True)):
        write_mat_record(
            inputs,
            name,
            record_signal(split, index, label),
            fs=FS,
            signals=[SignalSpec("ECG", "mV", GAIN)],
        )


def generate(outdir: Path, *, records: int = N_RECORDS) -> None:
    """Write ``training/``, ``test/`` and ``test-reference/`` under ``outdir``."""
    if records < len(SHARES):
        raise ValueError(f"each split holds at least {len(SHARES)} records (one per class)")
    for split in (TRAINING, TEST):
        write_split(outdir, split, records)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``python -m proctor.challenges.physionet2017.generate [OUTDIR]``."""
    parser = argparse.ArgumentParser(
        prog="python -m proctor.challenges.physionet2017.generate",
        description="Write the synthetic physionet2017 records (training, test, test-reference).",
    )
    parser.add_argument(
        "outdir", type=Path, nargs="?", default=DATA_DIR, help=f"default: {DATA_DIR}"
    )
    parser.add_argument(
        "--records", type=int, default=N_RECORDS, help=f"records per split (default {N_RECORDS})"
    )
    args = parser.parse_args(argv)
    if args.records < len(SHARES):
        parser.error(f"--records must be at least {len(SHARES)}")
    generate(args.outdir, records=args.records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
