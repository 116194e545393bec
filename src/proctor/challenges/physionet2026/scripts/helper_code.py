#!/usr/bin/env python
"""Helpers for PhysioNet 2026 entries, the challenge's own: this file replaces an entry's copy.

Written for Proctor's synthetic physionet2026 challenge with the names and calls of the
organizers' helper_code.py (python-example-2026), so team code written against theirs runs
here: the data layout's constants, the table readers, the EDF reader and the checks of values.
EDF files are read here with numpy alone.
"""

import os

import numpy as np
import pandas as pd

DEMOGRAPHICS_FILE = "demographics.csv"
PHYSIOLOGICAL_DATA_SUBFOLDER = "physiological_data"
ALGORITHMIC_ANNOTATIONS_SUBFOLDER = "algorithmic_annotations"
HUMAN_ANNOTATIONS_SUBFOLDER = "human_annotations"

# The columns of demographics.csv (inputs) and of the table run_model.py writes (outputs).
HEADERS = {
    "site_id": "SiteID",
    "patient_id": "BDSPPatientID",
    "creation_time": "CreationTime",
    "bids_folder": "BidsFolder",
    "session_id": "SessionID",
    "age": "Age",
    "sex": "Sex",
    "race": "Race",
    "ethnicity": "Ethnicity",
    "bmi": "BMI",
    "time_to_event": "Time_to_Event",
    "label": "Cognitive_Impairment",
    "prediction_binary": "Cognitive_Impairment",
    "prediction_prob": "Cognitive_Impairment_Probability",
}

UNAVAILABLE = (
    "unknown",
    "unavailable",
    "declined",
    "unreported",
    "nan",
    "none",
    "not specified",
    "prefer not to say",
)


# --- the sessions table ---------------------------------------------------------------------


def find_patients(patient_data_file):
    """Each session of the table as a dict of its BidsFolder, SiteID and SessionID."""
    table = pd.read_csv(patient_data_file)
    keys = [HEADERS["bids_folder"], HEADERS["site_id"], HEADERS["session_id"]]
    return table[keys].drop_duplicates().to_dict("records")


def load_demographics(metadata_file, patient_id, session_id):
    """The table's row of one session as a dict (empty when it has none)."""
    table = pd.read_csv(metadata_file)
    found = table[
        (table[HEADERS["bids_folder"]] == patient_id) & (table[HEADERS["session_id"]] == session_id)
    ]
    return found.iloc[0].to_dict() if len(found) else {}


def load_diagnoses(metadata_file, patient_id):
    """The training label of a patient: 1 (cognitive impairment) or 0."""
    table = pd.read_csv(metadata_file)
    found = table.loc[table[HEADERS["bids_folder"]] == patient_id, HEADERS["label"]]
    if found.empty:
        raise ValueError(f"{patient_id} is not in {metadata_file}")
    value = found.values[0]
    if pd.isna(value):
        raise ValueError(f"{patient_id} has no label in {metadata_file}")
    if isinstance(value, str):
        return int(value.strip().casefold() == "true")
    return int(bool(value))


def load_label(data):
    """The label of a row dict (training only); ValueError when missing or unreadable."""
    value = sanitize_boolean_value(data.get(HEADERS["label"]))
    if is_nan(value):
        raise ValueError("the row has no readable label")
    return int(value)


def load_site_id(data):
    return data.get(HEADERS["site_id"], "Unknown")


def load_session(data):
    return data.get(HEADERS["session_id"], "Unknown")


def load_age(data):
    """The age as a float (NaN when missing)."""
    value = data.get(HEADERS["age"])
    return float(value) if is_number(value) else float("nan")


def load_bmi(data):
    """The BMI as a float (NaN when missing)."""
    value = data.get(HEADERS["bmi"])
    return float(value) if is_number(value) else float("nan")


def load_sex(data, standardize=True):
    """``Female``, ``Male`` or ``Unknown`` (the raw text when not standardized)."""
    raw = str(data.get(HEADERS["sex"], "")).strip()
    if not standardize:
        return raw
    folded = raw.casefold()
    return "Female" if folded.startswith("f") else "Male" if folded.startswith("m") else "Unknown"


def load_race(data, standardize=True):
    """``White``, ``Black``, ``Asian``, ``Unavailable`` or ``Others``."""
    raw = str(data.get(HEADERS["race"], "")).strip()
    if not standardize:
        return raw
    folded = raw.casefold()
    if "white" in folded or "caucasian" in folded:
        return "White"
    if "black" in folded or "african american" in folded:
        return "Black"
    if "asian" in folded:
        return "Asian"
    if not folded or any(word in folded for word in UNAVAILABLE):
        return "Unavailable"
    return "Others"


def load_ethnicity(data, standardize=True):
    """``Hispanic``, ``Not Hispanic`` or ``Unavailable``."""
    raw = str(data.get(HEADERS["ethnicity"], "")).strip()
    if not standardize:
        return raw
    folded = raw.casefold()
    if any(word in folded for word in ("not hispanic", "non-hispanic", "non hispanic")):
        return "Not Hispanic"
    if "hispanic" in folded or "latino" in folded:
        return "Hispanic"
    return "Unavailable"


def update_demographics_table(input_file, output_folder, results_dict):
    """Write the table with each session's outputs ({BidsFolder: (binary, probability)})."""
    binary, probability = HEADERS["prediction_binary"], HEADERS["prediction_prob"]
    table = pd.read_csv(input_file)
    table[binary] = pd.Series([None] * len(table), dtype=object)
    table[probability] = float("nan")
    for patient_id, (label, prob) in results_dict.items():
        rows = table[HEADERS["bids_folder"]] == patient_id
        table.loc[rows, binary] = label
        table.loc[rows, probability] = prob
    output_file = os.path.join(output_folder, os.path.basename(input_file))
    table.to_csv(output_file, index=False)
    return output_file


# --- EDF signals ----------------------------------------------------------------------------


def _ascii(raw):
    return raw.decode("ascii", "replace").strip()


def load_edf_to_nparrays(edf_path):
    """An EDF file's signals: ({label: physical values}, {label: sampling frequency}).

    Labels are lowercased. A file that cannot be read gives two empty dicts, as the organizers'
    reader does.
    """
    try:
        with open(edf_path, "rb") as handle:
            data = handle.read()
        header_bytes = int(_ascii(data[184:192]))
        records = int(_ascii(data[236:244]))
        duration = float(_ascii(data[244:252]))
        count = int(_ascii(data[252:256]))

        def column(offset, width):
            start = 256 + offset * count
            return [_ascii(data[start + i * width : start + (i + 1) * width]) for i in range(count)]

        labels = column(0, 16)
        physical_min = [float(v) for v in column(16 * 1 + 80 + 8, 8)]
        physical_max = [float(v) for v in column(16 + 80 + 8 + 8, 8)]
        digital_min = [float(v) for v in column(16 + 80 + 8 + 16, 8)]
        digital_max = [float(v) for v in column(16 + 80 + 8 + 24, 8)]
        samples = [int(v) for v in column(16 + 80 + 8 + 32 + 80, 8)]
    except (OSError, ValueError) as err:
        print(f"Error loading EDF file {edf_path}: {err}")
        return {}, {}
    if records < 0:
        records = (len(data) - header_bytes) // (2 * sum(samples))
    codes = np.frombuffer(data, dtype="<i2", count=records * sum(samples), offset=header_bytes)
    codes = codes.reshape(records, sum(samples))
    signals, rates = {}, {}
    start = 0
    for i, label in enumerate(labels):
        raw = codes[:, start : start + samples[i]].reshape(-1).astype(np.float64)
        start += samples[i]
        gain = (physical_max[i] - physical_min[i]) / (digital_max[i] - digital_min[i])
        name = label.lower().strip()
        signals[name] = physical_min[i] + (raw - digital_min[i]) * gain
        rates[name] = samples[i] / duration if duration > 0 else float(samples[i])
    return signals, rates


def load_signal_data(edf_path):
    """The signals of an EDF file and their sampling frequencies (see load_edf_to_nparrays)."""
    return load_edf_to_nparrays(edf_path)


def find_records(folder, file_extension=".edf"):
    """Every file of ``folder`` (searched down) ending in ``file_extension``, without it."""
    found = set()
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(file_extension):
                path = os.path.relpath(os.path.join(root, name), folder)
                found.add(path[: -len(file_extension)])
    return sorted(found)


# --- channel names --------------------------------------------------------------------------


def _clean(name):
    name = name.lower().replace("_pds", "").replace("_eg", "").replace(":", "-")
    return name.strip()


def load_rename_rules(csv_path):
    """{standard name: aliases} from a table whose Channel_Names column lists ``a;b;c``."""
    try:
        table = pd.read_csv(csv_path)
    except FileNotFoundError:
        print(f"Error: channel table not found at {csv_path}")
        return {}
    if "Channel_Names" not in table.columns:
        print("Error: the channel table has no Channel_Names column")
        return {}
    rules = {}
    for value in table["Channel_Names"].dropna():
        aliases = [a.strip().strip("'\"") for a in str(value).split(";")]
        aliases = [a for a in aliases if a]
        if aliases:
            rules[aliases[0].lower()] = aliases
    return rules


def standardize_channel_names_rename_only(columns_original, rename_rules):
    """({original label: standard name}, [labels to drop: other aliases of a kept one])."""
    cleaned = {_clean(label): label for label in columns_original}
    chosen = {}
    for standard, aliases in rename_rules.items():
        for alias in aliases:
            if _clean(alias) in cleaned:
                chosen[standard] = cleaned[_clean(alias)]
                break
    rename = {original: standard for standard, original in chosen.items()}
    drop = set()
    for standard, kept in chosen.items():
        aliases = {_clean(a) for a in rename_rules.get(standard, [])}
        drop.update(c for c in columns_original if _clean(c) in aliases and c != kept)
    for label in columns_original:
        if _clean(label) in ("pulse", "pr") and label not in rename and "hr" not in rename.values():
            rename[label] = "hr"
    return rename, sorted(drop)


def derive_bipolar_signal(ch_a_signal, ref_signal):
    """A minus its reference (the mean of two references when given a pair); None on error."""
    try:
        if isinstance(ref_signal, tuple):
            return ch_a_signal - 0.5 * (ref_signal[0] + ref_signal[1])
        return ch_a_signal - ref_signal
    except (TypeError, ValueError) as err:
        print(f"Bipolar derivation error: {err}")
        return None


# --- values ---------------------------------------------------------------------------------


def remove_extra_characters(x):
    """The text of ``x`` without quotes, brackets, spaces and tabs."""
    text = str(x)
    for character in "\"'()[]{} \t":
        text = text.replace(character, "")
    return text.strip()


def is_number(x):
    try:
        float(x)
        return True
    except (ValueError, TypeError):
        return False


def is_integer(x):
    return is_number(x) and float(x).is_integer()


def is_finite_number(x):
    return is_number(x) and bool(np.isfinite(float(x)))


def is_nan(x):
    return is_number(x) and bool(np.isnan(float(x)))


def _truth(x):
    """1, 0, or None for a value that spells no boolean."""
    if is_number(x) and float(x) in (0.0, 1.0):
        return int(float(x))
    word = remove_extra_characters(x).casefold()
    if word in ("true", "t", "yes", "y"):
        return 1
    if word in ("false", "f", "no", "n"):
        return 0
    return None


def is_boolean(x):
    return _truth(x) is not None


def sanitize_boolean_value(x):
    truth = _truth(x)
    return float("nan") if truth is None else truth


def sanitize_integer_value(x):
    x = remove_extra_characters(x)
    return int(float(x)) if is_integer(x) else float("nan")


def sanitize_scalar_value(x):
    x = remove_extra_characters(x)
    return float(x) if is_number(x) else float("nan")
