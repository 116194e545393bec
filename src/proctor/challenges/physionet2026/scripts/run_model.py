#!/usr/bin/env python
"""Run a trained PhysioNet 2026 model: the challenge's own script (it replaces an entry's copy).

    python run_model.py -d DATA_FOLDER -m MODEL_FOLDER -o OUTPUT_FOLDER [-v] [-f]

calls ``load_model(model_folder, verbose)`` once, then ``run_model(model, record, data_folder,
verbose)`` for each session of DATA_FOLDER/demographics.csv, and writes that table with the
model's two columns (binary output, probability) to OUTPUT_FOLDER/demographics.csv. With
``-f`` (``--allow_failures``) a session on which run_model fails, or returns values that are
not a boolean and a number, gets NaN outputs instead of stopping the run.
"""

import argparse
import os
import sys
import traceback

from helper_code import (
    DEMOGRAPHICS_FILE,
    HEADERS,
    find_patients,
    is_boolean,
    is_nan,
    is_number,
    update_demographics_table,
)
from team_code import load_model, run_model


def get_parser():
    parser = argparse.ArgumentParser(description="Run the trained challenge model.")
    parser.add_argument("-d", "--data_folder", type=str, required=True)
    parser.add_argument("-m", "--model_folder", type=str, required=True)
    parser.add_argument("-o", "--output_folder", type=str, required=True)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("-f", "--allow_failures", action="store_true")
    return parser


def one_session(model, record, data_folder, verbose):
    binary, probability = run_model(model, record, data_folder, verbose)
    if not (is_boolean(binary) or is_nan(binary)):
        raise ValueError(f"the binary output {binary!r} is not a boolean")
    if not is_number(probability):
        raise ValueError(f"the probability {probability!r} is not a number")
    return binary, probability


def run(args):
    if args.verbose:
        print("Loading the model...")
    model = load_model(args.model_folder, args.verbose)
    table = os.path.join(args.data_folder, DEMOGRAPHICS_FILE)
    sessions = find_patients(table)
    if not sessions:
        raise ValueError(f"{table} lists no session")
    os.makedirs(args.output_folder, exist_ok=True)
    results = {}
    failed = 0
    for number, record in enumerate(sessions, 1):
        patient = record[HEADERS["bids_folder"]]
        if args.verbose:
            print(
                f"- {number}/{len(sessions)}: {patient} (session {record[HEADERS['session_id']]})"
            )
        try:
            results[patient] = one_session(model, record, args.data_folder, args.verbose)
        except Exception:
            if not args.allow_failures:
                raise
            failed += 1
            if args.verbose:
                print("  ... failed:", traceback.format_exc(limit=1).strip().splitlines()[-1])
            results[patient] = (float("nan"), float("nan"))
    written = update_demographics_table(table, args.output_folder, results)
    if args.verbose:
        print(f"Wrote {written}; {failed} of {len(sessions)} sessions failed.")


if __name__ == "__main__":
    run(get_parser().parse_args(sys.argv[1:]))
