"""Readers for the 2018 record files, laid out as the 2018 sample entry's helper module.

Written for Proctor's tests (not the organizers' code): the same calls on the same files --
the header's signal names as the ninth field of each signal line, ``val`` from the ``.mat``
through ``scipy.io.loadmat``, the labels from ``data/arousals`` of ``-arousal.mat`` through
``h5py``, one pandas column per signal name.
"""

import h5py
import numpy as np
import pandas as pd
import scipy.io


def import_signal_names(header_file):
    """Signal names, sampling frequency and sample count from a WFDB header."""
    with open(header_file, "r") as handle:
        fields = [line.split() for line in handle.read().split("\n")]
    count, fs, samples = int(fields[0][1]), int(fields[0][2]), int(fields[0][3])
    names = [fields[1 + i][8] for i in range(count)]
    return names, fs, samples


def import_signals(signal_file):
    """The samples x channels matrix of a record."""
    return np.transpose(scipy.io.loadmat(signal_file)["val"])


def import_arousals(arousal_file):
    """The per-sample labels of a training record, shape (samples, 1)."""
    with h5py.File(arousal_file, "r") as handle:
        return np.array(handle["data"]["arousals"])


def get_subject_data(arousal_file, signal_file, signal_names):
    """Signals and labels of a training record as one data frame."""
    both = np.append(import_signals(signal_file), import_arousals(arousal_file), axis=1)
    return pd.DataFrame(both, index=None, columns=signal_names)


def get_subject_data_test(signal_file, signal_names):
    """Signals of a record as a data frame."""
    return pd.DataFrame(import_signals(signal_file), index=None, columns=signal_names)
