#!/bin/sh
# Prep stage: check that python3 runs and the thresholds are readable. Nothing is precomputed.
set -e
cd "$(dirname "$0")"
command -v python3 >/dev/null 2>&1 || { echo "setup.sh: python3 not found" >&2; exit 1; }
python3 -c 'import json; json.load(open("model.json"))'
echo "setup.sh: python3 found; model.json readable"
