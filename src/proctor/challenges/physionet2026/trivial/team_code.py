"""A constant model: no one is predicted impaired, every probability 0.5 (the board's floor)."""

import os


def train_model(data_folder, model_folder, verbose):
    os.makedirs(model_folder, exist_ok=True)
    with open(os.path.join(model_folder, "constant.txt"), "w") as handle:
        handle.write("0.5\n")


def load_model(model_folder, verbose):
    with open(os.path.join(model_folder, "constant.txt")) as handle:
        return float(handle.read())


def run_model(model, record, data_folder, verbose):
    return 0, model
