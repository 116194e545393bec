"""The ``challenge.yaml`` and ``KIT.md`` that ``proctor challenge new`` writes, per protocol.

Commented YAML: an organizer reads it top to bottom and changes what is theirs.
"""

from __future__ import annotations

PROTOCOL_BLOCKS = {
    "records": """\
protocol:
  kind: records                  # setup.sh once, then next.sh RECORD per case
  setup: setup.sh
  next: next.sh
  output: "{record}.answer"      # the file next.sh writes in its working folder
  answers: "answers/{record}.answer"  # what the entry ships for each public record (the quiz)
  compare: {kind: numeric, tolerance: 0.000001}
  required_files: [setup.sh, next.sh]
  setup_s: 120
  case_s: 20
  stage_s: 600
""",
    "command": """\
protocol:
  kind: command                  # one program run per case from an argv template
  program: execute_standard
  argv: ["{program}", "{input}", "{output_dir}"]
  input: "{case}.nii.gz"         # a case is a file of the inputs folder named so
  task_ids: ["1"]                # one mask per task id: CASE_1_PARTICIPANT_1.nii.gz
  quiz_cases: 1
  case_s: 60
  stage_s: 600
""",
    "python_model": """\
protocol:
  kind: python_model             # a harness drives the entry's model.py per dataset
  module: model.py
  output: "{record}.predict"
  load_s: 60
  prep_s: 60
  time_budget_s: 60
  pred_time_budget_s: 30
  max_budget_s: 120
  stage_s: 600
""",
    "physionet_model": """\
protocol:
  kind: physionet_model          # PhysioNet 2020-2026: the challenge's scripts run team_code.py
  scripts: scripts               # train_model.py, run_model.py, helper_code.py: they replace
  module: team_code.py           #   the entry's copies; the team edits team_code.py alone
  training: training             # data/public/training: the folder the model is trained on
  table: sessions.csv            # a data folder is a folder holding this table
  output: "{record}.csv"         # the table run_model.py writes, with the model's columns
  allow_failures: true           # run_model.py -f: a session that fails gets no output
  train_s: 120                   # PhysioNet trains for up to 72 h on its full data
  case_s: 60                     # one run_model.py on one hidden folder
  stage_s: 600
""",
    "predictions": """\
protocol:
  kind: predictions              # no code runs: participants upload prediction files
  public_folder: dev             # the upload's dev/CASE/: scored at the quiz (public labels)
  hidden_folder: test            # the upload's test/CASE/: scored against hidden labels
  file_patterns: [predictions.csv]  # one name: participants may upload predictions.csv bare
  other_files: [README.md]
  public_required: false         # true: every upload must hold its dev/ predictions too
""",
}

TASKS = {
    "records": ("data/public", "data/hidden", "data/reference"),
    "command": ("data/public", "data/hidden", "data/reference"),
    "python_model": ("data/public", "data/hidden", "data/reference"),
    "physionet_model": ("data/public", "data/hidden", "data/reference"),
    "predictions": ("data/dev/values", "data/test/values", "data/test-reference"),
}
STAND_INS = {
    "records": "stand-in/inputs",
    "command": "stand-in/inputs",
    "python_model": "stand-in/inputs",
    "physionet_model": "stand-in/inputs",
    "predictions": "stand-in/inputs/values",
}
"""Each template's public stand-in for the hidden inputs (its references: stand-in/references)."""

METRICS = {
    "command": (
        "dice: {direction: higher, description: mean Dice of the masks over the hidden cases}",
        "over_half: {direction: higher, description: share of cases with a Dice over 0.5}",
    ),
    "physionet_model": (
        "accuracy: {direction: higher, description: share of hidden sessions diagnosed right}",
        "auroc: {direction: higher, description: area under the ROC curve of the probabilities}",
        "sessions_without_output: {direction: neutral, count: true, description: sessions "
        "the model gave no usable output}",
    ),
}
DEFAULT_METRICS = (
    "mae: {direction: lower, description: mean absolute error over the hidden cases}",
    "within_1: {direction: higher, description: share of values within 1 of the truth}",
)
RANKED = {"command": "dice", "physionet_model": "auroc"}
ENVIRONMENT_EXTRA = {
    "physionet_model": """\
  participant_wheels: {allow: true, max_requirements: 20}   # the entry's requirements.txt
  entry_images:                  # entries may bring a Dockerfile or an image.tar
    allow: true
    bases: {"python:3.10.1-buster": proctor-reference}   # FROM python:3.10.1-buster -> this
""",
}
CHECKS = {
    "records": "      check: [python3, check.py]   # is one case's output usable? (quiz, exam)\n",
    "predictions": "      check: [python3, check.py]   # is an uploaded case usable?\n",
}


def challenge_yaml(name: str, protocol: str) -> str:
    """The commented ``challenge.yaml`` of a new ``protocol`` challenge called ``name``."""
    public, hidden, reference = TASKS[protocol]
    metrics = "\n".join(f"        {line}" for line in METRICS.get(protocol, DEFAULT_METRICS))
    ranked = RANKED.get(protocol, "mae")
    return f"""\
# Made by `proctor challenge new --protocol {protocol}`: a small working challenge.
# Try it:  proctor run baseline --challenge .      then replace data, scoring and baseline.
# Every key is documented in docs/challenge-yaml.md.
name: {name}
title: "{name}: a new challenge"
description: "Replace this with what participants must do and how they are scored."
{PROTOCOL_BLOCKS[protocol]}tasks:
  - name: main
    public_inputs: {public}      # shown to entries (and in the starting kit)
    hidden_inputs: {hidden}      # the exam's inputs: entries see them, participants do not
    hidden_references: {reference}   # only the scoring program sees them
    scorer:
      program: scoring           # the organizer's scoring program (a folder of this challenge)
      command: [python3, score.py]
      metrics:                   # every metric score.py writes to scores.json
{metrics}
      limits: {{wall_s: 120, memory_bytes: 1073741824}}
{CHECKS.get(protocol, "")}    kit:                         # public data the kit's replica scores on
      stand_in: {{inputs: {STAND_INS[protocol]}, references: stand-in/references}}
limits:
  memory_bytes: 1073741824
  home_bytes: 268435456
environment:                     # what entries and the scoring program run in
  name: proctor-reference        # Debian 12, python3; numpy, scipy, pandas, scikit-learn...
  debian: {{suite: bookworm, packages: [python3, gcc]}}
  python:
    requirements: environment/requirements.in
    lock: environment/requirements.lock
  lock: environment/environment.lock
{ENVIRONMENT_EXTRA.get(protocol, "")}\
disclosure: {{prep: full, quiz: full, exam: counts, score: full, per_record: none}}
leaderboard: {{metric: {ranked}}}
phases:
  - name: final
    tasks: [main]
"""


ENTRY_TEXT = {
    "records": """\
An entry is a folder (or a `.zip` / `.tar.gz` of it) with:

- `setup.sh` (executable): run once first, at most 120 s, without network.
- `next.sh` (executable): run as `./next.sh RECORD` once per record, at most 20 s each. The
  record's input is `RECORD.txt` (numbers, one per line), in the working folder and in
  `$PROCTOR_DATA`; write your answer, one number, to `RECORD.answer` in the working folder.
- `answers/RECORD.answer` for every public record: what your `next.sh` writes for it. The quiz
  reruns `next.sh` on the public records and compares (numbers within 1e-6).
""",
    "command": """\
An entry is a folder (or a `.zip` / `.tar.gz` of it) holding an executable
`execute_standard`, run as `./execute_standard /data/CASE.nii.gz /output` once per case (at
most 60 s each, without network). Write the mask of the bright object as
`/output/CASE_1_NAME_1.nii.gz` (`NAME`: your team, letters, digits and `-`), on the input's
grid, values 0 or 1. The quiz checks the first public case's output format.
""",
    "python_model": """\
An entry is a folder (or a `.zip` / `.tar.gz` of it) holding `model.py` with a class
`Model(info)` and methods `train(X, y)`, `save(directory)`, `load(directory)` and
`predict(X)` (X a pandas DataFrame of the dataset's `*.data` table, y its `train.solution`
labels); `predict` returns one number per row. Each dataset trains within 60 s and predicts
within 30 s, without network.
""",
    "physionet_model": """\
An entry is a folder (or a `.zip` / `.tar.gz` of it) laid out as the PhysioNet Challenges'
example repositories since 2020: `team_code.py` with `train_model(data_folder, model_folder,
verbose)`, `load_model(model_folder, verbose)` and `run_model(model, record, data_folder,
verbose)` (`record`: one row of `sessions.csv`; return a boolean and a probability), a
`Dockerfile` (`FROM python:3.10.1-buster`, your code copied to `/challenge`) and a
`requirements.txt`. The challenge's own `train_model.py`, `run_model.py` and `helper_code.py`
replace yours. Training on `data/public/training` gets 120 s; each hidden folder 60 s; no network.
""",
    "predictions": """\
No code runs: upload `predictions.csv`, your predictions for `data/test/values/inputs.csv`
(the header `id,target` and one row per input row), as it is: through the challenge page's
form or `proctor submit predictions.csv`. It is scored against hidden labels. To see a public
score first, upload a `.zip` holding `dev/values/predictions.csv` (your predictions for
`data/dev/values/inputs.csv`, scored at once against the public `data/dev/values/labels.csv`)
and `test/values/predictions.csv`.
""",
}


SCORES_TEXT = {
    "records": "The mean absolute error of your answers on the hidden records (lower is better),\n"
    "and the share of answers within 1 of the truth.",
    "command": "The mean Dice of your masks over the hidden cases (higher is better), and the\n"
    "share of cases with a Dice over 0.5.",
    "python_model": "The mean absolute error of your model's predictions on the hidden rows\n"
    "(lower is better), and the share of predictions within 1 of the truth.",
    "physionet_model": "The accuracy of your diagnoses of the hidden sessions (higher is better),\n"
    "and the area under the ROC curve of your probabilities.",
    "predictions": "The mean absolute error of your predictions against the hidden labels\n"
    "(lower is better), and the share of predictions within 1 of the truth.",
}
"""Each template's scores, in the words of its own ``score.py`` (``METRICS``)."""

SUBMIT_CODE = """\
Zip the entry's content (`cd entry && zip -r ../entry.zip .`) and submit it:
`proctor submit entry.zip --challenge {name} --server URL --token TOKEN`. Put an empty file
`DRYRUN` in the entry to stop after the quiz (a check of the format on public data).
"""
SUBMIT_TEXT = {
    "predictions": """\
Submit `predictions.csv` as it is: `proctor submit predictions.csv --challenge {name}
--server URL --token TOKEN`, or through the challenge page's form.
""",
}
"""How each template's entry is submitted (code protocols: a zipped folder)."""


def kit_readme(name: str, protocol: str) -> str:
    """The participants' README (``KIT.md``, copied by ``proctor kit`` as ``README.md``)."""
    submitting = SUBMIT_TEXT.get(protocol, SUBMIT_CODE).format(name=name)
    return f"""\
# {name}: starting kit

Replace this with what the challenge is about.

## What is in this kit

- `data/`: the public data.
- `entry/`: a baseline entry that works: start from it.
- `challenge/`: a replica of the challenge, scored on public stand-in data.

## The entry

{ENTRY_TEXT[protocol]}
## Scores

{SCORES_TEXT[protocol]}

## Submitting

{submitting}"""
