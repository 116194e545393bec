"""Single-lead ECG-like records of the four 2017 classes, synthesized beat by beat.

- ``N`` normal sinus rhythm: 55-95 bpm, RR varying a few percent with breathing, P waves;
- ``A`` atrial fibrillation: irregularly irregular RR (each interval drawn afresh), no P wave,
  small fibrillatory waves at 5-8 Hz;
- ``O`` other rhythms: sinus rhythm with premature beats (some wide, ventricular) followed by a
  compensatory pause, or a regular tachycardia or bradycardia;
- ``~`` too noisy to classify: any rhythm under motion artefacts and muscle noise.

Every record also gets baseline wander, a little white noise and a random gain; a tenth are
inverted (the handheld device was held the other way round), as in the 2017 data.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Signal = npt.NDArray[np.float64]

FS = 300
"""Sampling frequency of the 2017 records, Hz."""
LABELS = ("N", "A", "O", "~")


def _wave(t: Signal, centre: float, width: float, height: float) -> Signal:
    return height * np.exp(-0.5 * ((t - centre) / width) ** 2)


def beat(t: Signal, *, p_wave: bool, wide: bool) -> Signal:
    """One heartbeat (mV) at times ``t`` (s) relative to its R peak."""
    qrs_width = 0.028 if wide else 0.011
    wave = (
        _wave(t, -0.025, 0.008, -0.12)
        + _wave(t, 0.0, qrs_width, 1.0 if not wide else 0.8)
        + _wave(t, 0.03 if not wide else 0.06, 0.012, -0.25)
        + _wave(t, 0.28 if not wide else 0.34, 0.05, 0.3 if not wide else -0.35)
    )
    if p_wave:
        wave += _wave(t, -0.17, 0.022, 0.13)
    return wave


def rr_intervals(label: str, rng: np.random.Generator, seconds: float) -> tuple[Signal, Signal]:
    """RR intervals (s) of the record's rhythm and a 0/1 mark of ectopic (wide) beats."""
    n = int(seconds * 3.5) + 4
    if label == "A":
        mean = 60.0 / rng.uniform(75, 140)
        rr = mean * rng.uniform(0.55, 1.45, size=n) ** rng.uniform(0.8, 1.3)
        return np.clip(rr, 0.28, 2.0), np.zeros(n)
    if label == "O" and rng.uniform() < 0.35:
        bpm = rng.uniform(105, 140) if rng.uniform() < 0.6 else rng.uniform(35, 48)
        return _sinus(60.0 / bpm, n, rng), np.zeros(n)
    rr = _sinus(60.0 / rng.uniform(55, 95), n, rng)
    ectopic = np.zeros(n)
    if label == "O":
        chance = rng.uniform(0.12, 0.35)
        for i in range(1, n - 1):
            if rng.uniform() < chance and not ectopic[i - 1]:
                ectopic[i] = 1.0 if rng.uniform() < 0.5 else 0.5
                shortened = rr[i] * rng.uniform(0.55, 0.75)
                rr[i + 1] += rr[i] - shortened  # compensatory pause
                rr[i] = shortened
    return rr, ectopic


def _sinus(mean: float, n: int, rng: np.random.Generator) -> Signal:
    breathing = np.sin(2 * np.pi * np.arange(n) * mean / rng.uniform(3.5, 5.5))
    rr: Signal = mean * (1.0 + 0.03 * breathing + 0.015 * rng.standard_normal(n))
    return rr


def synthesize(label: str, rng: np.random.Generator, seconds: float) -> Signal:
    """The record's ECG in mV, ``round(seconds * FS)`` samples, of rhythm ``label``."""
    underlying = str(rng.choice(("N", "A", "O"), p=(0.6, 0.2, 0.2))) if label == "~" else label
    n = round(seconds * FS)
    rr, ectopic = rr_intervals(underlying, rng, seconds)
    t = np.arange(n) / FS
    ecg = np.zeros(n)
    peaks = rng.uniform(0.2, 0.8) + np.concatenate([[0.0], np.cumsum(rr)])
    for index, peak in enumerate(peaks[:-1]):
        if peak > seconds + 0.5:
            break
        near = (t > peak - 0.35) & (t < peak + 0.6)
        wide = bool(ectopic[index] == 1.0)
        p_wave = underlying != "A" and not wide
        ecg[near] += rng.uniform(0.9, 1.1) * beat(t[near] - peak, p_wave=p_wave, wide=wide)
    if underlying == "A":
        ecg += rng.uniform(0.03, 0.08) * _band(rng, n, 5.0, 8.0)
    ecg += 0.12 * _band(rng, n, 0.05, 0.5) + rng.uniform(0.01, 0.04) * rng.standard_normal(n)
    if label == "~":
        ecg = ecg * rng.uniform(0.3, 0.8) + _artefacts(rng, n)
    ecg *= rng.uniform(0.5, 2.0) * (-1.0 if rng.uniform() < 0.1 else 1.0)
    return ecg


def _band(rng: np.random.Generator, n: int, low: float, high: float) -> Signal:
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, d=1.0 / FS)
    spectrum[(freqs < low) | (freqs > high)] = 0.0
    noise = np.fft.irfft(spectrum, n=n)
    rms = float(np.sqrt(np.mean(noise**2)))
    out: Signal = noise / rms if rms > 0 else noise
    return out


def _artefacts(rng: np.random.Generator, n: int) -> Signal:
    """Motion artefacts (large 1-6 Hz bursts) and muscle noise over part of the record."""
    envelope = np.zeros(n)
    for _ in range(int(rng.integers(2, 6))):
        start = int(rng.integers(0, n))
        length = int(rng.uniform(1.0, 5.0) * FS)
        envelope[start : start + length] = rng.uniform(0.6, 1.8)
    motion = _band(rng, n, 1.0, 6.0) * envelope
    muscle = rng.uniform(0.15, 0.4) * _band(rng, n, 20.0, 100.0)
    return motion + muscle
