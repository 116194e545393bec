#!/usr/bin/env python
"""Train a PhysioNet 2026 model: the challenge's own script (it replaces an entry's copy).

    python train_model.py -d DATA_FOLDER -m MODEL_FOLDER [-v]

calls ``train_model(data_folder, model_folder, verbose)`` of the entry's team_code.py.
"""

import argparse
import os
import sys

from team_code import train_model


def get_parser():
    parser = argparse.ArgumentParser(description="Train the challenge model.")
    parser.add_argument("-d", "--data_folder", type=str, required=True)
    parser.add_argument("-m", "--model_folder", type=str, required=True)
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def run(args):
    os.makedirs(args.model_folder, exist_ok=True)
    train_model(args.data_folder, args.model_folder, args.verbose)


if __name__ == "__main__":
    run(get_parser().parse_args(sys.argv[1:]))
