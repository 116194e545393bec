#!/bin/sh
# Quiz/exam stage: next.sh RECORD writes RECORD.vec (one probability per sample) into the
# current directory, where the record's files (RECORD.hea, RECORD.mat) are, as in 2018; the
# same files are also in $PROCTOR_DATA (/data in the sandbox).
set -e
if [ $# -ne 1 ]; then
    echo "usage: next.sh RECORD" >&2
    exit 2
fi
exec python3 "$(dirname "$0")/classify.py" "$1"
