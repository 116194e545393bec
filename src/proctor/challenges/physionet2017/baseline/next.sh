#!/bin/sh
# file: next.sh (2017 contract)
# next.sh RECORD analyzes the record whose files (RECORD.hea, RECORD.mat) are in the current
# directory and appends one line RECORD,LABEL (N, A, O or ~) to answers.txt.
set -e
if [ $# -ne 1 ]; then
    echo "usage: next.sh RECORD" >&2
    exit 2
fi
python3 "$(dirname "$0")/classify.py" "$1" >> answers.txt
