#!/bin/sh
# Prep stage: check that the interpreter classify.py needs is there. Nothing is precomputed.
set -e
cd "$(dirname "$0")"
if ! command -v python3 >/dev/null 2>&1; then
    echo "setup.sh: python3 not found on PATH" >&2
    exit 1
fi
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else "python3 >= 3.8 needed")'
python3 -c 'import json; json.load(open("model.json"))'
echo "setup.sh: python3 found; model.json readable"
