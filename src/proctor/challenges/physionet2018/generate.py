"""Write the synthetic records of the ``physionet2018`` reference challenge.

Usage: ``python -m proctor.challenges.physionet2018.generate [OUTDIR] [--seconds S]
[--records N]`` writes, as the 2018 challenge distributed its data,

- ``OUTDIR/training/``: ``RECORDS``, and per record ``.hea`` + ``.mat`` (the 13 channels of 2018
  at 200 Hz as the MATLAB variable ``val``, channels × samples, WFDB format ``16+24``),
  ``.arousal`` (stage and region annotations) and ``-arousal.mat`` (MATLAB v7.3: the labels
  ``data/arousals`` and the six ``data/sleep_stages`` vectors): public, as in 2018;
- ``OUTDIR/test/``: ``RECORDS``, ``.hea``, ``.mat`` only (the hidden inputs);
- ``OUTDIR/test-reference/``: ``RECORDS``, ``.arousal`` and ``-arousal.mat`` (hidden references).

The bundled data are 60 s records, dense samplers of the event kinds; from an hour on
(``--seconds 27000``: 7.5-hour nights like the real ones, about 140 MB per record) a record is
a whole night at the published rates (``night``): wake periods, RERAs, apneas and hypopneas.
The shares of the labels (targets over scored time, not scored, wake) are printed per split.
The output is a pure function of the code and the parameters: every record draws from its own
seeded ``numpy.random.Generator`` and the label files carry no timestamps, so regenerating with
the defaults yields the same bytes as the committed ``data/`` folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.challenges.physionet2018.labels import arousal_labels, parse_annotations
from proctor.challenges.physionet2018.night import LabelShares, label_shares
from proctor.challenges.physionet2018.schedule import Scenario, draw_scenario
from proctor.challenges.physionet2018.signals import CHANNELS, synthesize, to_digital
from proctor.formats.arousal_mat import SLEEP_STAGES, write_arousal_reference
from proctor.formats.wfdb_mat import SignalSpec, write_mat_record


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
SECONDS = 60
"""Duration of every bundled record, seconds (a parameter of :func:`generate`)."""
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

    def names(self, count: int = N_RECORDS) -> list[str]:
        """Record names of this split: ``tr01-0001``, ``tr01-0002``, …."""
        return [f"{self.prefix}01-{i:04d}" for i in range(1, count + 1)]


TRAINING = Split("tr", 1, hidden=False)
TEST = Split("te", 2, hidden=True)


def make_scenario(
    split: Split, index: int, seconds: int = SECONDS
) -> tuple[Scenario, np.random.Generator]:
    """The scenario of record ``index`` (0-based) of ``split``, and its generator for signals."""
    rng = np.random.default_rng([SEED, split.stream, index])
    return draw_scenario(rng, length=seconds * FS, fs=FS), rng


def write_signals(directory: Path, name: str, digital: np.ndarray) -> None:
    """Write ``name.hea`` and ``name.mat`` (``val``, channels × samples; format ``16+24``)."""
    specs = [SignalSpec(c.name, c.units, c.gain, c.baseline) for c in CHANNELS]
    write_mat_record(directory, name, digital, fs=FS, signals=specs)


def sleep_stage_vectors(scenario: Scenario) -> dict[str, np.ndarray]:
    """The six 0/1 vectors of ``data/sleep_stages``; before the first stage mark: undefined."""
    stage = scenario.stage_at()
    staged = np.arange(scenario.length) >= scenario.stages[0][0]
    names = {"W": "wake", "N1": "nonrem1", "N2": "nonrem2", "N3": "nonrem3", "R": "rem"}
    vectors = {
        vector: ((stage == mark) & staged).astype(np.float64) for mark, vector in names.items()
    }
    vectors["undefined"] = (~staged).astype(np.float64)
    return {name: vectors[name] for name in SLEEP_STAGES}


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
    write_arousal_reference(
        directory / f"{name}-arousal.mat", labels, sleep_stage_vectors(scenario)
    )


def write_split(outdir: Path, split: Split, *, seconds: int, records: int) -> list[LabelShares]:
    """Write one split: inputs (and, for training, labels) or hidden inputs plus references.

    Returns each record's label shares (measured on its schedule).
    """
    inputs = outdir / ("test" if split.hidden else "training")
    references = outdir / "test-reference" if split.hidden else inputs
    names = split.names(records)
    for folder in {inputs, references}:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "RECORDS").write_text("".join(f"{n}\n" for n in names))
    shares = []
    for index, name in enumerate(names):
        scenario, rng = make_scenario(split, index, seconds)
        write_signals(inputs, name, to_digital(synthesize(scenario, rng)))
        write_annotations(references, name, scenario)
        write_labels(references, name, scenario)
        shares.append(label_shares(scenario.stages, scenario.events, length=scenario.length,
                                   fs=FS))  # fmt: skip
    return shares


def describe_shares(split: str, seconds: int, shares: Sequence[LabelShares]) -> str:
    """One line on a split's labels: target share of scored time, not scored, wake, events."""
    target = float(np.mean([s.target for s in shares]))
    return (
        f"{split}: {len(shares)} record{'' if len(shares) == 1 else 's'} of {seconds} s: "
        f"targets {100 * target:.1f} % of "
        f"the scored time (a real record: 3.2 %), not scored "
        f"{100 * float(np.mean([s.not_scored for s in shares])):.1f} %, wake "
        f"{100 * float(np.mean([s.wake for s in shares])):.1f} %; per record "
        f"{np.mean([s.reras for s in shares]):.1f} RERAs, "
        f"{np.mean([s.apneas_hypopneas for s in shares]):.1f} apneas and hypopneas, "
        f"{np.mean([s.other_arousals for s in shares]):.1f} other arousals"
    )


def write_training(dest: Path, seconds: int, records: int) -> str:
    """Write ``records`` training records of ``seconds`` into the new folder ``dest``.

    The folder holds what ``training/`` holds (``RECORDS``, signals, annotations, labels),
    and the same files again (hard links) as the 2018 download laid them out,
    ``training/RECORD/RECORD.*``, which the organizers' ``prepare-entry`` walks; returns the
    line describing their label shares. A participant's kit uses it for records longer than
    the bundled ones (the organizers' 2018 sample training script fits one classifier per
    record on 60 s windows: it needs records with at least two classes).
    """
    if seconds < 45 or records < 1:
        raise ValueError("records last at least 45 s and at least one is written")
    scratch = dest.with_name(f".{dest.name}.partial")
    with quiet_wfdb():
        shares = write_split(scratch, TRAINING, seconds=seconds, records=records)
    (scratch / "training").rename(dest)
    scratch.rmdir()
    link_download_layout(dest)
    return describe_shares("training", seconds, shares)


def link_download_layout(folder: Path) -> None:
    """Hard-link each record's files of ``folder`` into ``folder/training/RECORD/``.

    That is the layout of the 2018 download (one folder per record, ``RECORDS`` beside them).
    """
    names = (folder / "RECORDS").read_text().split()
    tree = folder / "training"
    tree.mkdir()
    os.link(folder / "RECORDS", tree / "RECORDS")
    for name in names:
        (tree / name).mkdir()
        for path in sorted(folder.glob(f"{name}*")):
            if path.is_file() and path.name[len(name)] in ".-":
                os.link(path, tree / name / path.name)


def generate(
    outdir: Path, *, seconds: int = SECONDS, records: int = N_RECORDS
) -> dict[str, list[LabelShares]]:
    """Write ``training/``, ``test/`` and ``test-reference/`` under ``outdir``.

    ``seconds`` is every record's duration (at least one 30 s epoch plus its lead-in: 45),
    ``records`` the number per split. Returns each split's label shares (``training``,
    ``test``).
    """
    if seconds < 45 or records < 1:
        raise ValueError("records last at least 45 s and each split holds at least one")
    with quiet_wfdb():
        return {
            "test" if split.hidden else "training": write_split(
                outdir, split, seconds=seconds, records=records
            )
            for split in (TRAINING, TEST)
        }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``python -m proctor.challenges.physionet2018.generate OUTDIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m proctor.challenges.physionet2018.generate",
        description="Write the synthetic physionet2018 records (training, test, test-reference).",
    )
    parser.add_argument(
        "outdir", type=Path, nargs="?", default=DATA_DIR, help=f"default: {DATA_DIR}"
    )
    parser.add_argument(
        "--seconds", type=int, default=SECONDS, help=f"record duration (default {SECONDS})"
    )
    parser.add_argument(
        "--records", type=int, default=N_RECORDS, help=f"records per split (default {N_RECORDS})"
    )
    args = parser.parse_args(argv)
    if args.seconds < 45 or args.records < 1:
        parser.error("--seconds must be at least 45 and --records at least 1")
    shares = generate(args.outdir, seconds=args.seconds, records=args.records)
    for split, measured in shares.items():
        print(describe_shares(split, args.seconds, measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
