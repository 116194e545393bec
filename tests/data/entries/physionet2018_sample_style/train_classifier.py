#!/usr/bin/env python3
"""Train one classifier per training record, as the 2018 sample's training script does.

Written for Proctor's tests (not the organizers' code): ``train_classifier.py RECORD...``
(record paths without extension) fits a logistic regression per record on the variance of
SaO2 over 60 s windows against the window's highest label, skips records without arousals,
and saves ``models/NAME_model.pkl`` with joblib.
"""

import glob
import os
import sys

import joblib
import numpy as np
from sklearn.linear_model import LogisticRegression

import physionetchallenge2018_lib as phyc


def init():
    os.makedirs("models", exist_ok=True)
    for old in glob.glob("models/*_model.pkl"):
        os.remove(old)


def preprocess_record(record_name):
    names, fs, samples = phyc.import_signal_names(record_name + ".hea")
    frame = phyc.get_subject_data(
        record_name + "-arousal.mat", record_name + ".mat", list(np.append(names, "arousals"))
    )
    sao2 = frame.get(["SaO2"]).values
    labels = frame.get(["arousals"]).values
    step = window = fs * 60
    features = np.zeros([samples // step, 1])
    targets = np.zeros([samples // step, 1])
    for row, start in enumerate(range(0, samples - step + 1, step)):
        features[row, :] = np.var(np.transpose(sao2[start : start + window]), axis=1)
        targets[row] = np.max(labels[start : start + window])
    if not np.any(targets):
        sys.stderr.write("no arousals found in %s\n" % record_name)
        return
    classifier = LogisticRegression()
    classifier.fit(features, np.ravel(targets))
    joblib.dump(classifier, "models/%s_model.pkl" % os.path.basename(record_name))


if __name__ == "__main__":
    init()
    for record in sys.argv[1:]:
        preprocess_record(record)
