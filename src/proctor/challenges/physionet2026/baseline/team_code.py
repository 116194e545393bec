#!/usr/bin/env python
"""The physionet2026 baseline: a random forest on simple features (Proctor's port).

Laid out as the organizers' python-example-2026 entry, with the same three required functions
and calls: features from the demographics (age, sex, race, BMI), from the PSG signals (seven
time-domain statistics per lead type: EEG, EOG, chin, leg, ECG, respiration, SpO2) and from the
CAISR annotations (event rates, sleep stage shares, mean probabilities); a median imputer then a
random forest. Like the example, it is not meant to perform well.
"""

import os

import joblib
import numpy as np
from helper_code import (
    ALGORITHMIC_ANNOTATIONS_SUBFOLDER,
    DEMOGRAPHICS_FILE,
    HEADERS,
    PHYSIOLOGICAL_DATA_SUBFOLDER,
    derive_bipolar_signal,
    find_patients,
    load_age,
    load_bmi,
    load_demographics,
    load_diagnoses,
    load_race,
    load_rename_rules,
    load_sex,
    load_signal_data,
    standardize_channel_names_rename_only,
)
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline

CHANNEL_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "channel_table.csv")
LEADS = {
    "eeg": ["f3-m2", "f4-m1", "c3-m2", "c4-m1"],
    "eog": ["e1-m2", "e2-m1"],
    "chin": ["chin1-chin2", "chin"],
    "leg": ["lat", "rat"],
    "ecg": ["ecg", "ekg"],
    "resp": ["airflow", "ptaf", "abd", "chest"],
    "spo2": ["spo2", "sao2"],
}
BIPOLAR = [("f3-m2", "f3", "m2"), ("f4-m1", "f4", "m1"), ("c3-m2", "c3", "m2"),
           ("c4-m1", "c4", "m1"), ("o1-m2", "o1", "m2"), ("o2-m1", "o2", "m1"),
           ("e1-m2", "e1", "m2"), ("e2-m1", "e2", "m1")]  # fmt: skip
PHYSIOLOGICAL_FEATURES = 7 * len(LEADS)
ALGORITHMIC_FEATURES = 12


################################################################################
# Required functions: train_model, load_model, run_model.
################################################################################


def train_model(data_folder, model_folder, verbose):
    """Extract the features of every labelled session, fit the forest, save it."""
    table = os.path.join(data_folder, DEMOGRAPHICS_FILE)
    records = find_patients(table)
    if not records:
        raise FileNotFoundError("No data were provided.")
    if verbose:
        print(f"Extracting features from {len(records)} sessions...")
    features, labels = [], []
    for record in records:
        patient = record[HEADERS["bids_folder"]]
        try:
            label = load_diagnoses(table, patient)
            features.append(session_features(record, data_folder))
            labels.append(label)
        except Exception as err:  # a broken session is left out, as the example does
            print(f"  ! {patient}: {err}")
    if verbose:
        print("Training the model...")
    model = Pipeline([
        ("imputer", SimpleImputer(strategy="median")),
        ("classifier", RandomForestClassifier(n_estimators=12, max_leaf_nodes=34, random_state=56)),
    ])  # fmt: skip
    model.fit(np.asarray(features, dtype=np.float32), np.asarray(labels, dtype=bool))
    os.makedirs(model_folder, exist_ok=True)
    joblib.dump({"model": model}, os.path.join(model_folder, "model.sav"), protocol=0)
    if verbose:
        print("Done.")


def load_model(model_folder, verbose):
    """The saved model."""
    return joblib.load(os.path.join(model_folder, "model.sav"))


def run_model(model, record, data_folder, verbose):
    """The binary output and the probability of cognitive impairment for one session."""
    features = session_features(record, data_folder).reshape(1, -1)
    forest = model["model"]
    binary = forest.predict(features)[0]
    probability = forest.predict_proba(features)[0][1]
    return binary, probability


################################################################################
# Optional functions.
################################################################################


def session_features(record, data_folder):
    """Demographic, physiological and algorithmic-annotation features of one session."""
    patient = record[HEADERS["bids_folder"]]
    site = record[HEADERS["site_id"]]
    session = record[HEADERS["session_id"]]
    data = load_demographics(os.path.join(data_folder, DEMOGRAPHICS_FILE), patient, session)
    stem = f"{patient}_ses-{session}"
    signals = os.path.join(data_folder, PHYSIOLOGICAL_DATA_SUBFOLDER, site, f"{stem}.edf")
    caisr = os.path.join(data_folder, ALGORITHMIC_ANNOTATIONS_SUBFOLDER, site,
                         f"{stem}_caisr_annotations.edf")  # fmt: skip
    if os.path.exists(signals):
        physiological = physiological_features(*load_signal_data(signals))
    else:
        physiological = np.full(PHYSIOLOGICAL_FEATURES, np.nan)
    if os.path.exists(caisr):
        algorithmic = algorithmic_features(load_signal_data(caisr)[0])
    else:
        algorithmic = np.full(ALGORITHMIC_FEATURES, np.nan)
    return np.hstack([demographic_features(data), physiological, algorithmic])


def demographic_features(data):
    """Age, sex (3 one-hot), race (5 one-hot), BMI."""
    sex = np.zeros(3)
    sex[{"Female": 0, "Male": 1}.get(load_sex(data), 2)] = 1
    race = np.zeros(5)
    races = {"Asian": 0, "Black": 1, "Others": 2, "Unavailable": 3, "White": 4}
    race[races.get(load_race(data), 2)] = 1
    return np.concatenate([[load_age(data)], sex, race, [load_bmi(data)]])


def physiological_features(signals, rates):
    """Seven statistics of the first available channel of each lead type (NaN when none)."""
    rules = load_rename_rules(CHANNEL_TABLE)
    rename, dropped = standardize_channel_names_rename_only(list(signals), rules)
    channels = {rename.get(label, label): values for label, values in signals.items()
                if label not in dropped}  # fmt: skip
    for target, positive, negative in BIPOLAR:
        if target not in channels and positive in channels and negative in channels:
            derived = derive_bipolar_signal(channels[positive], channels[negative])
            if derived is not None:
                channels[target] = derived
    features = []
    for candidates in LEADS.values():
        signal = next((channels[c] for c in candidates if c in channels), None)
        features.extend(signal_statistics(signal))
    return np.array(features)


def signal_statistics(signal):
    """SD, mean absolute value, zero-crossing rate, RMS, variance, Hjorth mobility, complexity."""
    if signal is None or len(signal) < 3:
        return [np.nan] * 7
    first, second = np.diff(signal), np.diff(signal, n=2)
    activity = np.var(signal)
    mobility = np.sqrt(np.var(first) / activity) if activity > 0 else 0.0
    complexity = (np.sqrt(np.var(second) / np.var(first)) / mobility
                  if np.var(first) > 0 and mobility > 0 else 0.0)  # fmt: skip
    return [np.std(signal), np.mean(np.abs(signal)), np.mean(np.diff(np.sign(signal)) != 0),
            np.sqrt(np.mean(signal**2)), activity, mobility, complexity]  # fmt: skip


def algorithmic_features(traces):
    """Event rates per hour, sleep stage shares and efficiency, mean CAISR probabilities."""
    if not traces:
        return np.full(ALGORITHMIC_FEATURES, np.nan)
    hours = len(traces.get("resp_caisr", [])) / 3600.0

    def rate(name):
        if name not in traces or hours <= 0:
            return np.nan
        events = (traces[name] > 0).astype(int)
        return np.count_nonzero(np.diff(events, prepend=0) == 1) / hours

    stages = traces.get("stage_caisr", np.array([]))
    stages = stages[stages < 9.0]
    if len(stages):
        shares = [np.mean(stages == s) for s in (5, 3, 2, 1, 4)]
        shares.append(np.mean((stages >= 1) & (stages <= 4)))
    else:
        shares = [np.nan] * 6
    probabilities = [np.mean(traces.get(n, [np.nan]))
                     for n in ("caisr_prob_w", "caisr_prob_n3", "caisr_prob_arous")]  # fmt: skip
    probabilities = [p if p < 1.0 else np.nan for p in probabilities]
    return np.array([rate("resp_caisr"), rate("arousal_caisr"), rate("limb_caisr"),
                     *shares, *probabilities])  # fmt: skip
