"""The channels of a synthetic record beyond EEG C3-M2, chin EMG and airflow (``signals.py``).

They make the records look like the 2018 polysomnograms to code written for them (13 channels in
the 2018 order) and carry weaker evidence of the events: the other EEG derivations repeat the
cortical signal with their own noise, the effort belts keep moving in an obstructive apnea,
SaO2 falls after each apnea or hypopnea, and the heart beats faster during an arousal.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from proctor.challenges.physionet2018.labels import EXCLUDED_RESPIRATORY
from proctor.challenges.physionet2018.schedule import Scenario

Signal = npt.NDArray[np.float64]

EEG_NAMES = ("F3-M2", "F4-M1", "C3-M2", "C4-M1", "O1-M2", "O2-M1")
"""The EEG derivations of 2018, in their order; C3-M2 is the reference cortical signal."""
SAO2_BASE = (95.0, 98.0)
"""Uniform range of a record's resting oxygen saturation, percent."""
DESATURATION_DELAY_S = 20.0
"""Seconds from the end of an apnea to the lowest SaO2 (circulation delay)."""


def band_noise(rng: np.random.Generator, n: int, fs: float, low: float, high: float) -> Signal:
    """Gaussian noise of unit RMS with its spectrum confined to ``[low, high]`` Hz."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, d=1.0 / fs)
    spectrum[(freqs < low) | (freqs > high)] = 0.0
    noise = np.fft.irfft(spectrum, n=n)
    rms = float(np.sqrt(np.mean(noise**2)))
    return noise / rms if rms > 0 else noise


def eeg_montage(
    eeg: Signal, stage: npt.NDArray[np.str_], rng: np.random.Generator, fs: int
) -> list[Signal]:
    """The six EEG derivations: C3-M2 itself, the others mixed with their own noise.

    Occipital leads carry more alpha while awake, as real ones do.
    """
    n = eeg.size
    scale = float(np.std(eeg)) if n else 0.0
    awake = (stage == "W").astype(np.float64)
    out = []
    for name in EEG_NAMES:
        if name == "C3-M2":
            out.append(eeg)
            continue
        mix = rng.uniform(0.55, 0.85)
        own = scale * band_noise(rng, n, fs, 0.5, 30.0)
        lead = mix * eeg + (1.0 - mix) * own
        if name.startswith("O"):
            lead = lead + 0.5 * scale * awake * band_noise(rng, n, fs, 8.0, 12.0)
        out.append(lead * rng.uniform(0.8, 1.25))
    return out


def eog(
    scenario: Scenario, stage: npt.NDArray[np.str_], eeg: Signal, rng: np.random.Generator
) -> Signal:
    """E1-M2: slow eye movements (awake, N1), rapid ones in REM, and frontal EEG leaking in."""
    fs, n = scenario.fs, scenario.length
    slow = 40.0 * band_noise(rng, n, fs, 0.1, 0.6) * np.isin(stage, ("W", "N1"))
    rapid = 60.0 * band_noise(rng, n, fs, 1.0, 3.0) * (stage == "R")
    out: Signal = slow + rapid + 0.3 * eeg + 3.0 * rng.standard_normal(n)
    return out


def effort(
    scenario: Scenario, phase: Signal, depth: Signal, rng: np.random.Generator
) -> tuple[Signal, Signal]:
    """Abdominal and chest belts: the breathing rhythm, flat only in a central apnea."""
    n = scenario.length
    drive = np.ones(n)
    for event in scenario.events:
        if event.kind == "resp_centralapnea":
            drive[event.start : event.end] = 0.1
    # obstructed breathing strains against the airway: the belts keep moving (out of phase)
    strain = np.clip(depth, 0.3, None) * drive
    abd = 120.0 * strain * np.sin(phase + 0.3) + 6.0 * rng.standard_normal(n)
    chest = 90.0 * strain * np.sin(phase - 0.2) + 6.0 * rng.standard_normal(n)
    return abd * rng.uniform(0.7, 1.3), chest * rng.uniform(0.7, 1.3)


def sao2(scenario: Scenario, rng: np.random.Generator) -> Signal:
    """Oxygen saturation in percent: a resting level with dips after apneas and hypopneas."""
    fs, n = scenario.fs, scenario.length
    level = np.full(n, rng.uniform(*SAO2_BASE))
    t = np.arange(n, dtype=np.float64)
    for event in scenario.events:
        if event.kind in EXCLUDED_RESPIRATORY:
            depth = rng.uniform(2.0, 6.0) * (0.6 if event.kind == "resp_hypopnea" else 1.0)
            centre = event.end + DESATURATION_DELAY_S * fs
            level -= depth * np.exp(-0.5 * ((t - centre) / (8.0 * fs)) ** 2)
    wander = 0.3 * band_noise(rng, n, fs, 0.0, 0.02)
    return np.clip(level + wander + 0.05 * rng.standard_normal(n), 50.0, 100.0)


def ecg(scenario: Scenario, arousal: Signal, rng: np.random.Generator) -> Signal:
    """A lead-II-like ECG in millivolts whose rate rises with the arousal intensity."""
    fs, n = scenario.fs, scenario.length
    rate_hz = rng.uniform(0.9, 1.2) * (1.0 + 0.25 * np.minimum(arousal, 1.5))
    beats = np.flatnonzero(np.diff(np.floor(np.cumsum(rate_hz) / fs), prepend=0.0) > 0)
    impulses = np.zeros(n)
    impulses[beats] = rng.uniform(0.9, 1.1, size=beats.size)
    offsets = np.arange(-fs // 4, fs // 2) / fs
    template = (
        0.12 * np.exp(-0.5 * ((offsets + 0.16) / 0.02) ** 2)  # P
        - 0.1 * np.exp(-0.5 * ((offsets + 0.025) / 0.008) ** 2)  # Q
        + 1.1 * np.exp(-0.5 * (offsets / 0.01) ** 2)  # R
        - 0.2 * np.exp(-0.5 * ((offsets - 0.03) / 0.01) ** 2)  # S
        + 0.3 * np.exp(-0.5 * ((offsets - 0.25) / 0.045) ** 2)  # T
    )
    trace = np.convolve(impulses, template, mode="full")[fs // 4 : fs // 4 + n]
    return trace + 0.1 * band_noise(rng, n, fs, 0.05, 0.5) + 0.02 * rng.standard_normal(n)
