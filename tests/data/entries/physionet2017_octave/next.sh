#! /bin/bash
#
# file: next.sh
#
# next.sh RECORD analyzes the record whose files (RECORD.hea, RECORD.mat) are in the current
# directory and appends "RECORD,LABEL" (N, A, O or ~) to answers.txt, with the Octave block of
# the 2017 sample entry (the MATLAB block it replaces is kept, commented out).

set -e
set -o pipefail

RECORD=$1

# Example (Matlab)
# matlab -nodisplay -nodisplay -nosplash -r \
#    "try x = challenge('$RECORD'); \
#     f = fopen('answers.txt', 'a'); fprintf(f, '$RECORD,%s\n', x); fclose(f); \
#     catch e; display(getReport(e)); exit(1); end; quit"

# Example (Octave)
octave -q -f --eval \
    "pkg load signal; pkg load statistics;
     x = challenge('$RECORD');
     f = fopen('answers.txt', 'a'); fprintf(f, '$RECORD,%s\n', x); fclose(f);"
