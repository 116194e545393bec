"""Baseline arousal detector of the physionet2018 reference challenge (standard library only).

Usage: ``python3 classify.py RECORD`` reads ``RECORD.hea`` and its signal file ``RECORD.mat``
(WFDB format ``16+24``: format 16 after the 24-byte MATLAB v4 header) from the current
directory, where the sandbox puts the record's files as the 2018 challenge did (else from
``$PROCTOR_DATA``), and writes ``RECORD.vec`` in the current directory: one arousal probability
per sample, ``%.3f``. The model is a logistic regression (coefficients in ``model.json`` beside this
file, fitted by ``train.py``) on five features computed in blocks of 0.25 s:

- ``emg``: log power of the chin EMG over 2 s, minus its median over the record;
- ``hf``: log power of the EEG's first difference (a high-frequency proxy) over 2 s, likewise;
- ``hf_ratio``: log of that difference power over the EEG power, likewise (a frequency shift
  independent of amplitude);
- ``emg_past`` and ``hf_past``: the mean of ``emg`` and ``hf`` over the preceding 10 s, because
  the target region of a RERA lasts 10 s after the arousal ends.

Subtracting the record's median makes the features independent of electrode gain.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import sys
from array import array
from pathlib import Path

BLOCK = 50
"""Samples per feature block (0.25 s at 200 Hz)."""
WINDOW = 8
"""Blocks in the centred power window (2 s)."""
PAST = 40
"""Blocks in the trailing window of the ``*_past`` features (10 s)."""
EEG = "C3-M2"
EMG = "Chin1-Chin2"
FEATURES = ("emg", "hf", "hf_ratio", "emg_past", "hf_past")
"""Feature names, in the order of the model's weights."""
HERE = Path(__file__).resolve().parent


class RecordError(Exception):
    """A record cannot be read as a single-segment, format-16 WFDB record."""


class Header:
    """What this detector needs from a ``.hea`` file: length, file, offset, channel positions."""

    def __init__(self, path: Path) -> None:
        lines = [ln.split() for ln in path.read_text().splitlines()]
        lines = [ln for ln in lines if ln and not ln[0].startswith("#")]
        if len(lines) < 2 or len(lines[0]) < 4:
            raise RecordError(f"{path}: expected 'name nsig fs nsamp' and signal lines")
        self.nsig = int(lines[0][1])
        self.length = int(lines[0][3])
        signals = lines[1 : 1 + self.nsig]
        if len(signals) != self.nsig or any(len(s) < 9 for s in signals):
            raise RecordError(f"{path}: {self.nsig} signal lines with 9 fields expected")
        formats = {s[1] for s in signals}
        if len(formats) != 1 or len({s[0] for s in signals}) != 1:
            raise RecordError(f"{path}: one signal file and one format for all signals expected")
        fmt, _, offset = formats.pop().partition("+")
        if fmt != "16" or not (offset or "0").isdigit():
            raise RecordError(f"{path}: only WFDB format 16 (with a byte offset) is read")
        self.offset = int(offset or "0")
        self.dat = path.parent / signals[0][0]
        self.names = [" ".join(s[8:]) for s in signals]

    def channel(self, name: str) -> int:
        """Index of the channel called ``name``; RecordError if the record lacks it."""
        if name not in self.names:
            raise RecordError(f"{self.dat.stem}: no channel {name!r} among {self.names}")
        return self.names.index(name)


def read_channels(header: Header, names: tuple[str, ...]) -> list[array[int]]:
    """The digital samples of the named channels (one interleaved little-endian int16 file)."""
    data: array[int] = array("h")
    raw = header.dat.read_bytes()[header.offset :]
    data.frombytes(raw[: len(raw) - len(raw) % 2])
    if sys.byteorder == "big":
        data.byteswap()
    if len(data) < header.length * header.nsig:
        raise RecordError(f"{header.dat}: shorter than the {header.length} samples announced")
    return [data[header.channel(n) :: header.nsig][: header.length] for n in names]


def block_powers(x: array[int], diff: bool) -> list[float]:
    """Mean square per block of ``x`` (of its first difference if ``diff``), about the mean."""
    out: list[float] = []
    for start in range(0, len(x), BLOCK):
        seg = x[max(start - 1, 0) : start + BLOCK] if diff else x[start : start + BLOCK]
        values = [b - a for a, b in itertools.pairwise(seg)] if diff else list(seg)
        if not values:
            values = [0]
        mean = sum(values) / len(values)
        out.append(sum((v - mean) ** 2 for v in values) / len(values))
    return out


def window_mean(x: list[float], before: int, after: int) -> list[float]:
    """Mean of ``x[i-before .. i+after]`` for every ``i``, clipped at the ends."""
    cumulative = [0.0]
    for v in x:
        cumulative.append(cumulative[-1] + v)
    n = len(x)
    out = []
    for i in range(n):
        lo, hi = max(i - before, 0), min(i + after + 1, n)
        out.append((cumulative[hi] - cumulative[lo]) / (hi - lo))
    return out


def centred_log(power: list[float]) -> list[float]:
    """Log of the 2 s mean power, minus its median over the record."""
    smoothed = window_mean(power, WINDOW // 2, WINDOW // 2 - 1)
    logs = [math.log(max(p, 1e-6)) for p in smoothed]
    middle = statistics.median(logs)
    return [v - middle for v in logs]


def features(eeg: array[int], emg: array[int]) -> list[list[float]]:
    """One feature row (in ``FEATURES`` order) per block of ``BLOCK`` samples."""
    emg_f = centred_log(block_powers(emg, diff=False))
    hf_f = centred_log(block_powers(eeg, diff=True))
    total = centred_log(block_powers(eeg, diff=False))
    ratio = [h - t for h, t in zip(hf_f, total, strict=True)]
    emg_past = window_mean(emg_f, PAST, 0)
    hf_past = window_mean(hf_f, PAST, 0)
    return [list(row) for row in zip(emg_f, hf_f, ratio, emg_past, hf_past, strict=True)]


def record_features(data_dir: Path, record: str) -> tuple[int, list[list[float]]]:
    """Record length in samples and its feature rows; the entry point ``train.py`` shares."""
    header = Header(data_dir / f"{record}.hea")
    eeg, emg = read_channels(header, (EEG, EMG))
    return header.length, features(eeg, emg)


def load_model(path: Path) -> tuple[float, list[float]]:
    """Intercept and weights (in ``FEATURES`` order) of the logistic model in ``path``."""
    model = json.loads(path.read_text())
    if not isinstance(model, dict) or model.get("features") != list(FEATURES):
        raise RecordError(f"{path}: an object with features {list(FEATURES)} expected")
    weights = model.get("weights")
    if not isinstance(weights, list) or len(weights) != len(FEATURES):
        raise RecordError(f"{path}: 'weights' must list {len(FEATURES)} numbers")
    return float(model["intercept"]), [float(w) for w in weights]


def probabilities(rows: list[list[float]], intercept: float, weights: list[float]) -> list[float]:
    """Logistic model output per feature row."""
    out = []
    for row in rows:
        z = intercept + sum(w * f for w, f in zip(weights, row, strict=True))
        out.append(1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0))))
    return out


def classify(data_dir: Path, record: str, out_dir: Path) -> Path:
    """Write ``out_dir/RECORD.vec`` with one probability per sample; return its path."""
    intercept, weights = load_model(HERE / "model.json")
    length, rows = record_features(data_dir, record)
    per_block = probabilities(rows, intercept, weights)
    text = "".join(f"{per_block[i // BLOCK]:.3f}\n" for i in range(length))
    out = out_dir / f"{record}.vec"
    out.write_text(text)
    return out


def data_folder(record: str) -> Path:
    """Where the record's files are: the current directory, else ``$PROCTOR_DATA``."""
    if Path(f"{record}.hea").is_file():
        return Path(".")
    return Path(os.environ.get("PROCTOR_DATA", "."))


def main(argv: list[str]) -> int:
    """``classify.py RECORD``: the record from ``.`` (or ``$PROCTOR_DATA``), output in ``.``."""
    if len(argv) != 2:
        print("usage: classify.py RECORD", file=sys.stderr)
        return 2
    data_dir = data_folder(argv[1])
    try:
        classify(data_dir, argv[1], Path.cwd())
    except (OSError, ValueError, RecordError) as exc:
        print(f"classify.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
