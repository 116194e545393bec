"""Polysomnography-like waveforms synthesized from a scenario: the 13 channels of 2018.

Each EEG band is band-limited Gaussian noise whose amplitude follows the sleep stage (alpha when
awake, delta in N3, spindles in N2). During an arousal the chin EMG grows 1.5–4 times louder,
the EEG gains alpha and beta power and loses delta, each scaled by a random intensity, so some
arousals are faint. Apneas and hypopneas flatten the airflow and end with an arousal-like burst
(which falls in the not-scored window); a RERA is preceded by flow limitation. Distractors keep
the task honest: muscle twitches, beta bursts and spindles outside arousals, and a per-record
gain on every channel. The six EEG derivations share one cortical signal (C3-M2) mixed with
their own noise; the EOG carries slow and (in REM) rapid eye movements; the abdominal and chest
effort follow the breathing (flat in a central apnea only); SaO2 dips some 20 s after an apnea or
hypopnea; the ECG beats faster during an arousal. Amplitudes are in microvolts, SaO2 in percent,
the ECG in millivolts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from proctor.challenges.physionet2018 import physiology
from proctor.challenges.physionet2018.labels import EXCLUDED_RESPIRATORY, is_target
from proctor.challenges.physionet2018.physiology import EEG_NAMES, band_noise
from proctor.challenges.physionet2018.schedule import Scenario

Signal = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Channel:
    """One written channel: WFDB description, units, ADC gain and baseline.

    The gain is ADC units per physical unit, the baseline the ADC value of physical zero.
    """

    name: str
    units: str
    gain: float
    baseline: int = 0


CHANNELS = (
    *(Channel(name, "uV", 1.0) for name in EEG_NAMES),
    Channel("E1-M2", "uV", 1.0),
    Channel("Chin1-Chin2", "uV", 1.0),
    Channel("ABD", "uV", 1.0),
    Channel("CHEST", "uV", 1.0),
    Channel("AIRFLOW", "uV", 1.0),
    Channel("SaO2", "%", 655.35, -32768),
    Channel("ECG", "mV", 1000.0),
)
"""The 13 channels of every record, in the order and with the header conventions of the 2018
files: ``1/uV`` for the EEG, EOG, EMG and effort channels, ``655.35(-32768)/%`` for SaO2 (100 %
is ADC 32767), ``1000/mV`` for the ECG."""

BANDS_HZ = {
    "delta": (0.5, 2.0),
    "theta": (4.0, 7.0),
    "alpha": (8.0, 12.0),
    "sigma": (12.0, 15.0),
    "beta": (16.0, 35.0),
}
EEG_RMS: dict[str, dict[str, float]] = {
    "W": {"delta": 8, "theta": 6, "alpha": 14, "sigma": 2, "beta": 4},
    "N1": {"delta": 12, "theta": 14, "alpha": 5, "sigma": 2, "beta": 3},
    "N2": {"delta": 22, "theta": 12, "alpha": 4, "sigma": 3, "beta": 2.5},
    "N3": {"delta": 55, "theta": 10, "alpha": 3, "sigma": 2, "beta": 2},
    "R": {"delta": 10, "theta": 12, "alpha": 5, "sigma": 2, "beta": 4},
}
"""RMS amplitude (µV) of each EEG band in each sleep stage."""
EEG_AROUSAL_GAIN: dict[str, float] = {
    "delta": -0.5,
    "theta": 0.3,
    "alpha": 2.5,
    "sigma": 0.0,
    "beta": 3.5,
}
"""Relative change of each band's amplitude at full arousal intensity."""
EMG_RMS = {"W": 9.0, "N1": 8.0, "N2": 6.0, "N3": 5.0, "R": 2.5}
"""RMS amplitude (µV) of the chin EMG in each sleep stage."""
EMG_AROUSAL_GAIN = 3.0
BREATH_HZ = 0.25
FLOW_UV = 150.0


def synthesize(scenario: Scenario, rng: np.random.Generator) -> Signal:
    """The physical signals of one record, shape ``(length, len(CHANNELS))``, in their units."""
    arousal = _arousal_envelope(scenario, rng)
    stage = scenario.stage_at()
    eeg = _eeg(scenario, stage, arousal, rng)
    emg = _emg(scenario, stage, arousal, rng)
    flow, phase, depth = _airflow(scenario, stage, rng)
    montage = physiology.eeg_montage(eeg, stage, rng, scenario.fs)
    eye = physiology.eog(scenario, stage, eeg, rng)
    abd, chest = physiology.effort(scenario, phase, depth, rng)
    oxygen = physiology.sao2(scenario, rng)
    heart = physiology.ecg(scenario, arousal, rng)
    return np.stack([*montage, eye, emg, abd, chest, flow, oxygen, heart], axis=1)


def smooth(x: Signal, width: int) -> Signal:
    """Moving average over ``width`` samples (same length; edges see a shorter window)."""
    if width <= 1:
        return x
    kernel = np.ones(width) / width
    ones = np.convolve(np.ones_like(x), kernel, mode="same")
    out: Signal = np.convolve(x, kernel, mode="same") / ones
    return out


def _trapezoid(n: int, start: int, end: int, ramp: int) -> Signal:
    """1 on ``[start, end]``, linear ramps of ``ramp`` samples outside it, 0 elsewhere."""
    t = np.arange(n, dtype=np.float64)
    rise = np.clip((t - (start - ramp)) / ramp, 0.0, 1.0)
    fall = np.clip(((end + ramp) - t) / ramp, 0.0, 1.0)
    return np.minimum(rise, fall)


def _arousal_envelope(scenario: Scenario, rng: np.random.Generator) -> Signal:
    """Arousal intensity per sample: each arousal (and each apnea's end) at its own strength."""
    fs, n = scenario.fs, scenario.length
    envelope = np.zeros(n)
    for event in scenario.events:
        if is_target(event.kind):
            strength = rng.uniform(0.35, 1.4)
            envelope += strength * _trapezoid(n, event.start, event.end, fs // 2)
        elif event.kind in EXCLUDED_RESPIRATORY:
            strength = rng.uniform(0.6, 1.4)
            envelope += strength * _trapezoid(n, event.end - 2 * fs, event.end + 3 * fs, fs // 2)
    return envelope


def _bursts(scenario: Scenario, rng: np.random.Generator, mean: float, seconds: float) -> Signal:
    """Envelope of a Poisson number of short bursts (≤ ``seconds`` long) at random places."""
    fs, n = scenario.fs, scenario.length
    envelope = np.zeros(n)
    for _ in range(int(rng.poisson(mean))):
        start = int(rng.integers(0, n))
        end = start + round(rng.uniform(0.3, seconds) * fs)
        envelope += rng.uniform(0.5, 1.5) * _trapezoid(n, start, end, fs // 10)
    return envelope


def _stage_amplitude(stage: npt.NDArray[np.str_], table: dict[str, float], fs: int) -> Signal:
    values = np.array([table[s] for s in stage.tolist()], dtype=np.float64)
    return smooth(values, 2 * fs)


def _eeg(
    scenario: Scenario, stage: npt.NDArray[np.str_], arousal: Signal, rng: np.random.Generator
) -> Signal:
    fs, n = scenario.fs, scenario.length
    capped = np.minimum(arousal, 1.5)
    beta_bursts = _bursts(scenario, rng, mean=2.0, seconds=2.0)
    spindles = _bursts(scenario, rng, mean=3.0, seconds=1.5) * (stage == "N2")
    eeg = np.zeros(n)
    for band, (low, high) in BANDS_HZ.items():
        table = {s: EEG_RMS[s][band] for s in EEG_RMS}
        amplitude = _stage_amplitude(stage, table, fs)
        amplitude *= np.maximum(1.0 + EEG_AROUSAL_GAIN[band] * capped, 0.2)
        if band == "beta":
            amplitude *= 1.0 + 2.0 * beta_bursts
        if band == "sigma":
            amplitude *= 1.0 + 5.0 * spindles
        eeg += amplitude * band_noise(rng, n, fs, low, high)
    eeg += 2.0 * rng.standard_normal(n)
    return eeg * rng.uniform(0.7, 1.4)


def _emg(
    scenario: Scenario, stage: npt.NDArray[np.str_], arousal: Signal, rng: np.random.Generator
) -> Signal:
    fs, n = scenario.fs, scenario.length
    amplitude = _stage_amplitude(stage, EMG_RMS, fs)
    amplitude *= 1.0 + EMG_AROUSAL_GAIN * arousal
    amplitude *= 1.0 + 2.5 * _bursts(scenario, rng, mean=3.0, seconds=1.5)
    amplitude *= np.exp(0.15 * smooth(rng.standard_normal(n), 2 * fs) * np.sqrt(2 * fs))
    emg = amplitude * band_noise(rng, n, fs, 15.0, 95.0) + 0.5 * rng.standard_normal(n)
    return emg * rng.uniform(0.6, 1.6)


def _airflow(
    scenario: Scenario, stage: npt.NDArray[np.str_], rng: np.random.Generator
) -> tuple[Signal, Signal, Signal]:
    """Nasal airflow, and the breathing phase and depth the effort channels follow."""
    fs, n = scenario.fs, scenario.length
    rate = BREATH_HZ * rng.uniform(0.8, 1.2) * (1.0 + 0.08 * band_noise(rng, n, fs, 0.0, 0.05))
    phase = 2.0 * np.pi * np.cumsum(rate) / fs + rng.uniform(0.0, 2.0 * np.pi)
    depth = np.where(stage == "W", 1.2, 1.0)
    for event in scenario.events:
        if event.kind in EXCLUDED_RESPIRATORY:
            factor = 0.35 if event.kind == "resp_hypopnea" else 0.05
            depth[event.start : event.end] *= factor
            depth[event.end : event.end + 4 * fs] *= 1.6
        elif event.kind == "arousal_rera":
            depth[max(event.start - 12 * fs, 0) : event.start] *= 0.6
            depth[event.start : event.start + 4 * fs] *= 1.5
    depth = smooth(depth, fs)
    flow = FLOW_UV * depth * np.sin(phase) + 8.0 * rng.standard_normal(n)
    return flow * rng.uniform(0.7, 1.3), phase, depth


def to_digital(signals: Signal) -> npt.NDArray[np.int16]:
    """ADC conversion with each channel's gain and baseline, clipped to the format-16 range."""
    gains = np.array([c.gain for c in CHANNELS])
    baselines = np.array([c.baseline for c in CHANNELS], dtype=np.float64)
    adc = np.round(signals * gains + baselines)
    digital: npt.NDArray[np.int16] = np.clip(adc, -32767, 32767).astype(np.int16)
    return digital
