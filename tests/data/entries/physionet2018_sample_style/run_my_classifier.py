#!/usr/bin/env python3
"""Classify records with every trained model, as the 2018 sample's classifier script does.

Written for Proctor's tests (not the organizers' code): ``run_my_classifier.py RECORD`` reads
``RECORD.hea``/``RECORD.mat`` from the current directory, averages ``predict_proba`` of every
``models/*_model.pkl`` over 60 s windows of SaO2 variance, spreads each window's probability over
its samples (zeros after the last whole window) and writes ``RECORD.vec`` with ``%.3f``.
"""

import glob
import os
import sys

import joblib
import numpy as np

import physionetchallenge2018_lib as phyc


def run_classifier(header_file, signal_file, model_file):
    names, fs, samples = phyc.import_signal_names(header_file)
    frame = phyc.get_subject_data_test(signal_file, names)
    sao2 = frame.get(["SaO2"]).values
    step = window = fs * 60
    features = np.zeros([samples // step, 1])
    for row, start in enumerate(range(0, samples - step + 1, step)):
        features[row, :] = np.var(np.transpose(sao2[start : start + window]), axis=1)
    probabilities = joblib.load(model_file).predict_proba(features)[:, 1]
    spread = np.concatenate([p * np.ones([window]) for p in probabilities])
    return np.append(spread, np.zeros(np.size(frame, 0) - np.size(spread, 0)))


def classify_record(record_name):
    models = glob.glob("models/*_model.pkl")
    total = 0.0
    for model in models:
        total += run_classifier(record_name + ".hea", record_name + ".mat", model)
    return total / len(models)


if __name__ == "__main__":
    for record in sys.argv[1:]:
        np.savetxt(os.path.basename(record) + ".vec", classify_record(record), fmt="%.3f")
