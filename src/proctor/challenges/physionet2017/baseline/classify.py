"""Baseline rhythm classifier of the physionet2017 reference challenge (standard library only).

Usage: ``python3 classify.py RECORD`` reads ``RECORD.hea`` and ``RECORD.mat`` (one ECG lead,
WFDB format ``16+24``: format 16 after the 24-byte MATLAB v4 header) from the current directory,
where the sandbox puts the record's files as the 2017 challenge did (else from
``$PROCTOR_DATA``), and prints ``RECORD,LABEL`` (N, A, O or ~); ``next.sh`` appends that line to
``answers.txt``.

It finds the QRS complexes (peaks of the smoothed absolute slope, polarity-free, 250 ms apart at
least) and computes four features: ``busy`` (the share of samples whose slope is QRS-like: high
in a noisy record), ``irregular`` (median successive RR change over the median RR: high in AF),
``jumps`` (the share of RR changes above 20%: premature beats) and ``rate`` (bpm). The
thresholds in ``model.json`` (fitted by ``train.py``) decide, in order: noise, AF, other, normal.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
from array import array
from pathlib import Path

FEATURES = ("busy", "irregular", "jumps", "rate")
THRESHOLDS = ("busy", "irregular", "jumps", "rate_low", "rate_high")
"""Names of the fitted thresholds, as ``model.json`` holds them."""
REFRACTORY_S = 0.25
SMOOTH_S = 0.03
HERE = Path(__file__).resolve().parent


class RecordError(Exception):
    """A record cannot be read as a one-signal format-16 WFDB record."""


def read_record(folder: Path, record: str) -> tuple[float, list[float]]:
    """Sampling frequency and samples (mV) of ``folder/RECORD``."""
    lines = [ln.split() for ln in (folder / f"{record}.hea").read_text().splitlines()]
    lines = [ln for ln in lines if ln and not ln[0].startswith("#")]
    if len(lines) < 2 or len(lines[0]) < 4 or len(lines[1]) < 3:
        raise RecordError(f"{record}.hea: expected 'name nsig fs nsamp' and a signal line")
    fs, length = float(lines[0][2]), int(lines[0][3])
    fmt, _, offset = lines[1][1].partition("+")
    if fmt != "16":
        raise RecordError(f"{record}.hea: only WFDB format 16 is read")
    gain = float(lines[1][2].split("/")[0].split("(")[0] or "200")
    raw = (folder / lines[1][0]).read_bytes()[int(offset or "0") :]
    samples: array[int] = array("h")
    samples.frombytes(raw[: 2 * length])
    if sys.byteorder == "big":
        samples.byteswap()
    return fs, [value / gain for value in samples]


def moving_mean(x: list[float], width: int) -> list[float]:
    """Centred mean over ``width`` samples (shorter at the ends)."""
    cumulative = [0.0]
    for v in x:
        cumulative.append(cumulative[-1] + v)
    half, n = width // 2, len(x)
    return [
        (cumulative[min(i + half + 1, n)] - cumulative[max(i - half, 0)])
        / (min(i + half + 1, n) - max(i - half, 0))
        for i in range(n)
    ]


def detect_beats(fs: float, ecg: list[float]) -> tuple[list[int], float]:
    """QRS positions (sample indices) and the share of samples above the QRS threshold."""
    slope = [0.0] + [abs(ecg[i + 1] - ecg[i - 1]) for i in range(1, len(ecg) - 1)] + [0.0]
    energy = moving_mean(slope, max(int(SMOOTH_S * fs), 1))
    if not energy:
        return [], 1.0
    threshold = 0.35 * sorted(energy)[int(0.98 * (len(energy) - 1))]
    refractory = int(REFRACTORY_S * fs)
    beats: list[int] = []
    above = 0
    for i in range(1, len(energy) - 1):
        if energy[i] <= threshold:
            continue
        above += 1
        if energy[i] >= energy[i - 1] and energy[i] > energy[i + 1]:
            if beats and i - beats[-1] < refractory:
                if energy[i] > energy[beats[-1]]:
                    beats[-1] = i
            else:
                beats.append(i)
    return beats, above / len(energy)


def features(fs: float, ecg: list[float]) -> dict[str, float]:
    """The four features of one record (see the module docstring)."""
    beats, busy = detect_beats(fs, ecg)
    rr = [(b - a) / fs for a, b in itertools.pairwise(beats)]
    if len(rr) < 3:
        return {"busy": 1.0, "irregular": 0.0, "jumps": 0.0, "rate": 0.0}
    middle = statistics.median(rr)
    changes = [abs(b - a) / middle for a, b in itertools.pairwise(rr)]
    return {
        "busy": busy,
        "irregular": statistics.median(changes),
        "jumps": sum(c > 0.2 for c in changes) / len(changes),
        "rate": 60.0 / middle,
    }


def decide(values: dict[str, float], model: dict[str, float]) -> str:
    """The label the thresholds give: noise first, then AF, then other rhythms, else normal."""
    if values["busy"] > model["busy"]:
        return "~"
    if values["irregular"] > model["irregular"]:
        return "A"
    rate = values["rate"]
    if values["jumps"] > model["jumps"] or not model["rate_low"] <= rate <= model["rate_high"]:
        return "O"
    return "N"


def load_model(path: Path) -> dict[str, float]:
    """The thresholds of ``model.json``."""
    model = json.loads(path.read_text())
    if not isinstance(model, dict) or sorted(model) != sorted(THRESHOLDS):
        raise RecordError(f"{path}: an object with the thresholds {list(THRESHOLDS)} expected")
    return {name: float(model[name]) for name in THRESHOLDS}


def data_folder(record: str) -> Path:
    """Where the record's files are: the current directory, else ``$PROCTOR_DATA``."""
    if Path(f"{record}.hea").is_file():
        return Path(".")
    return Path(os.environ.get("PROCTOR_DATA", "."))


def main(argv: list[str]) -> int:
    """``classify.py RECORD``: print ``RECORD,LABEL``."""
    if len(argv) != 2:
        print("usage: classify.py RECORD", file=sys.stderr)
        return 2
    record = argv[1]
    try:
        values = features(*read_record(data_folder(record), record))
        label = decide(values, load_model(HERE / "model.json"))
    except (OSError, ValueError, RecordError) as exc:
        print(f"classify.py: {exc}", file=sys.stderr)
        return 1
    print(f"{record},{label}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
