"""A test entry laid out as python-example-2026, written for Proctor's tests.

A logistic regression on age and BMI (missing values imputed by the median), saved with
joblib. It is only meant to run, in an image built from its Dockerfile.
"""

import os

import joblib
import numpy as np
from helper_code import (
    DEMOGRAPHICS_FILE,
    HEADERS,
    find_patients,
    load_age,
    load_bmi,
    load_demographics,
    load_diagnoses,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

MODEL_FILE = "age_bmi.sav"


def train_model(data_folder, model_folder, verbose):
    """Fit the regression on every labelled session of the training folder."""
    table = os.path.join(data_folder, DEMOGRAPHICS_FILE)
    features, labels = [], []
    for record in find_patients(table):
        try:
            labels.append(load_diagnoses(table, record[HEADERS["bids_folder"]]))
        except ValueError:
            continue
        features.append(_features(record, data_folder))
    if verbose:
        print(f"fitting on {len(labels)} sessions")
    with open("/opt/built-by-run.txt") as marker:  # written by the Dockerfile's RUN
        if verbose:
            print(f"the image says: {marker.read().strip()}")
    model = make_pipeline(SimpleImputer(strategy="median"), LogisticRegression())
    model.fit(np.asarray(features), np.asarray(labels, dtype=bool))
    os.makedirs(model_folder, exist_ok=True)
    joblib.dump(model, os.path.join(model_folder, MODEL_FILE))


def load_model(model_folder, verbose):
    """The fitted regression."""
    return joblib.load(os.path.join(model_folder, MODEL_FILE))


def run_model(model, record, data_folder, verbose):
    """The binary output and the probability of cognitive impairment of one session."""
    probability = float(model.predict_proba([_features(record, data_folder)])[0][1])
    return int(probability >= 0.5), probability


def _features(record, data_folder):
    data = load_demographics(
        os.path.join(data_folder, DEMOGRAPHICS_FILE),
        record[HEADERS["bids_folder"]],
        record[HEADERS["session_id"]],
    )
    return [load_age(data), load_bmi(data)]
