#! /bin/bash
#
# file: setup.sh
#
# Run once before next.sh: nothing to compile; check that Octave and its packages load.

set -e
set -o pipefail

octave -q -f --eval "pkg load signal; pkg load statistics; disp('octave ready')"
