#!/bin/bash
# Nothing to build: the models are trained beforehand with train_classifier.py.
set -e
ls models/*_model.pkl >/dev/null
