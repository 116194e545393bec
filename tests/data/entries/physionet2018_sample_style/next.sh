#!/bin/bash
# next.sh RECORD: the 2018 contract (the record's files in the current directory); writes
# RECORD.vec with the sample entry's classifier script.
set -e
set -o pipefail
RECORD=$1
python3 run_my_classifier.py "$RECORD"
