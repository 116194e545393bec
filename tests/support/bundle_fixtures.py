"""Small Codabench (v2) and CodaLab (v1) competition bundles written for the import tests.

Each scoring program compares ``res/predictions.txt`` (one label per line) with
``ref/truth.txt`` and writes ``accuracy`` and ``error``: the v2 bundle as ``scores.json`` from
fixed ``/app/...`` paths' arguments, the v1 bundle as ``scores.txt`` (``key: value`` lines)
from ``$input``/``$output``. Tests run the same programs directly to get the expected scores.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

SCORE_JSON = """\
import json, sys
from pathlib import Path
inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
truth = (inputs / "ref" / "truth.txt").read_text().split()
guess = (inputs / "res" / "predictions.txt").read_text().split()
right = sum(a == b for a, b in zip(truth, guess))
accuracy = right / len(truth)
output.mkdir(parents=True, exist_ok=True)
(output / "scores.json").write_text(json.dumps({"accuracy": accuracy, "error": 1 - accuracy,
                                                "extra_label": 7}))
(output / "detailed_results.html").write_text(f"<p>{right} right</p>")
print("scored", len(truth))
"""

SCORE_TXT = SCORE_JSON.replace(
    """(output / "scores.json").write_text(json.dumps({"accuracy": accuracy, "error": 1 - accuracy,
                                                "extra_label": 7}))""",
    """(output / "scores.txt").write_text(f"accuracy: {accuracy}\\nerror: {1 - accuracy}\\n")""",
)

TRUTH = {"alpha": "a b a b a b", "beta": "a a a b b b"}
PREDICTIONS = "a b a a a b\n"

V2_YAML = """\
version: 2
title: Toy Labels Challenge
description: A two-task toy bundle
docker_image: codalab/codalab-legacy:py37
terms: pages/terms.md
pages:
  - title: Overview
    file: pages/overview.md
phases:
  - index: 0
    name: Development Phase
    start: 1-1-2020
    end: 2021-06-30
    max_submissions_per_day: 5
    max_submissions: 100
    execution_time_limit: 60
    tasks: [0, 1]
  - index: 1
    name: Final Phase
    start: 2021-07-01 00:00:00
    execution_time_limit: 120
    tasks: [1]
tasks:
  - index: 0
    name: Alpha Task
    scoring_program: scoring_program
    reference_data: reference_alpha
  - index: 1
    name: Beta Task
    scoring_program: scoring_program
    reference_data: reference_beta.zip
solutions:
  - index: 0
    tasks: [0, 1]
    path: solutions/sample.zip
leaderboards:
  - index: 0
    title: Results
    key: main
    submission_rule: Force_Last
    columns:
      - title: Accuracy
        key: accuracy
        index: 0
        sorting: desc
        precision: 4
      - title: Error
        key: error
        index: 1
        sorting: asc
        precision: 2
      - title: Mean
        key: mean
        index: 2
        computation: avg
        computation_indexes: [0, 1]
        hidden: true
"""

V1_YAML = """\
title: Old Toy
title: Old Toy Labels
description: a CodaLab v1 bundle
html:
  overview: overview.html
  terms: terms_and_conditions.html
end_date: 2030-01-01
phases:
  1:
    phasenumber: 1
    label: "Development"
    start_date: 2020-01-01
    max_submissions: 20
    execution_time_limit: 100
    scoring_program: scoring_program.zip
    reference_data: reference_data.zip
  2:
    phasenumber: 2
    label: "Final"
    start_date: 2029-01-01
    max_submissions: 3
    scoring_program: scoring_program.zip
    reference_data: reference_data.zip
leaderboard:
  leaderboards:
    RESULTS: &RESULTS
      label: Results
      rank: 1
  columns:
    error:
      leaderboard: *RESULTS
      label: Error
      rank: 2
      sort: asc
      numeric_format: 3
    accuracy:
      leaderboard: *RESULTS
      label: Accuracy
      rank: 1
      numeric_format: 4
"""


def _zip(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(folder.rglob("*")):
            zipped.write(path, path.relative_to(folder).as_posix())
    return archive


def make_v2_bundle(root: Path, *, score_py: str = SCORE_JSON, yaml_text: str = V2_YAML) -> Path:
    """A Codabench v2 bundle folder: two tasks, a phase running both, a sample submission."""
    program = root / "scoring_program"
    program.mkdir(parents=True)
    (program / "score.py").write_text(score_py)
    (program / "metadata.yaml").write_text("command: python3 $program/score.py $input $output\n")
    for name, truth in TRUTH.items():
        folder = root / f"reference_{name}"
        folder.mkdir()
        (folder / "truth.txt").write_text(truth.replace(" ", "\n") + "\n")
    _zip(root / "reference_beta", root / "reference_beta.zip")
    for path in (root / "reference_beta").iterdir():
        path.unlink()
    (root / "reference_beta").rmdir()
    (root / "pages").mkdir()
    (root / "pages/terms.md").write_text("# Terms\nBe nice.\n")
    (root / "pages/overview.md").write_text("# Overview\nLabels.\n")
    sample = root / "solutions/sample"
    sample.mkdir(parents=True)
    (sample / "predictions.txt").write_text(PREDICTIONS)
    _zip(sample, root / "solutions/sample.zip")
    (sample / "predictions.txt").unlink()
    sample.rmdir()
    (root / "competition.yaml").write_text(yaml_text)
    return root


def make_v1_zip(root: Path) -> Path:
    """A CodaLab v1 bundle as a zip: zipped programs with ``metadata``, CRLF, a duplicate key."""
    work = root / "v1-work"
    program = work / "program"
    program.mkdir(parents=True)
    (program / "evaluate.py").write_text(SCORE_TXT)
    (program / "metadata").write_text("command: python $program/evaluate.py $input $output\n")
    reference = work / "reference"
    reference.mkdir()
    (reference / "truth.txt").write_text(TRUTH["alpha"].replace(" ", "\n") + "\n")
    bundle = root / "v1-bundle"
    bundle.mkdir()
    _zip(program, bundle / "scoring_program.zip")
    _zip(reference, bundle / "reference_data.zip")
    (bundle / "overview.html").write_text("<p>Old toy</p>")
    (bundle / "terms_and_conditions.html").write_text("<p>Terms</p>")
    (bundle / "competition.yaml").write_bytes(V1_YAML.replace("\n", "\r\n").encode())
    return _zip(bundle, root / "v1-bundle.zip")


def submission_zip(root: Path, predictions: str = PREDICTIONS) -> Path:
    """A result submission as participants upload it to Codabench: predictions.txt at the root."""
    folder = root / "submission"
    folder.mkdir(parents=True)
    (folder / "predictions.txt").write_text(predictions)
    return _zip(folder, root / "submission.zip")


SCORE_COMMAND = ["python3", "/app/program/score.py", "/app/input", "/app/output"]
"""The fixture bundles' scoring command, as the compute worker substitutes it."""


def score_task_directly(
    challenge: Path, task: str, predictions: str, work: Path
) -> dict[str, float]:
    """What an imported fixture ``task``'s own scoring program gives ``predictions``, directly."""
    return run_directly(
        challenge / "programs" / task,
        challenge / "data" / task / "reference",
        predictions,
        work,
        SCORE_COMMAND,
    )


def run_directly(
    program: Path, reference: Path, predictions: str, work: Path, command: list[str]
) -> dict[str, float]:
    """The scores the program writes when run as Codabench runs it, outside any sandbox."""
    inputs = work / "input"
    (inputs / "res").mkdir(parents=True)
    (inputs / "res" / "predictions.txt").write_text(predictions)
    (inputs / "ref").symlink_to(reference)
    output = work / "output"
    argv = [sys.executable if part.startswith("python") else part for part in command]
    argv = [
        part.replace("/app/program", str(program))
        .replace("/app/input", str(inputs))
        .replace("/app/output", str(output))
        for part in argv
    ]
    subprocess.run(argv, cwd=program, check=True, timeout=60)
    if (output / "scores.json").is_file():
        found = json.loads((output / "scores.json").read_text())
    else:
        found = yaml.safe_load((output / "scores.txt").read_text())
    return {key: float(value) for key, value in found.items()}


INGESTION_PY = """\
import sys
from pathlib import Path
inputs, output, code = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
Path("/app/shared/note.txt").write_text("the shared folder is writable")
sys.path.insert(0, code)
from model import predict
xs = (inputs / "x.txt").read_text().split()
(output / "predictions.txt").write_text("".join(predict(x) + "\\n" for x in xs))
"""

MODEL_PY = """\
print("MODEL-PRINT: loading the model")
def predict(x):
    return "a" if int(x) % 2 == 0 else "b"
"""

CODE_YAML = """\
version: 2
title: Toy Code Challenge
phases:
  - index: 0
    name: Only Phase
    start: 2020-01-01
    execution_time_limit: 60
    tasks: [0]
tasks:
  - index: 0
    name: Alpha Task
    scoring_program: scoring_program
    ingestion_program: ingestion_program
    input_data: input_data
    reference_data: reference_alpha
solutions:
  - {index: 0, tasks: [0], path: solutions/sample.zip}
leaderboards:
  - title: Results
    columns:
      - {title: Accuracy, key: accuracy, index: 0, sorting: desc}
      - {title: Error, key: error, index: 1, sorting: asc}
"""


def make_code_bundle(
    root: Path, *, score_py: str = SCORE_JSON, limit: int = 60, public_data: bool = False
) -> Path:
    """A Codabench v2 bundle whose ingestion program imports the participant's ``model.py``.

    ``limit``: the phase's execution_time_limit; ``public_data``: the phase ships sample data
    laid out as the input data (the quiz runs the ingestion on it).
    """
    text = CODE_YAML.replace("execution_time_limit: 60", f"execution_time_limit: {limit}")
    if public_data:
        text = text.replace("    tasks: [0]\n", "    tasks: [0]\n    public_data: sample_data\n", 1)
        (root / "sample_data").mkdir(parents=True)
        (root / "sample_data/x.txt").write_text("7\n8\n")
    make_v2_bundle(root, score_py=score_py, yaml_text=text)
    ingestion = root / "ingestion_program"
    ingestion.mkdir()
    (ingestion / "ingestion.py").write_text(INGESTION_PY)
    (ingestion / "metadata.yaml").write_text(
        "command: python $ingestion_program/ingestion.py $input $output $submission_program\n"
    )
    (root / "input_data").mkdir()
    (root / "input_data/x.txt").write_text("0\n1\n2\n3\n4\n5\n")
    return root


def code_zip(root: Path, model_py: str = MODEL_PY) -> Path:
    """A code submission: ``model.py`` at the root of the zip."""
    folder = root / "code"
    folder.mkdir(parents=True)
    (folder / "model.py").write_text(model_py)
    return _zip(folder, root / "code.zip")


V1_CODE_YAML = """\
title: Old Code Toy
phases:
  1:
    phasenumber: 1
    label: "Development"
    start_date: 2020-01-01
    execution_time_limit: 60
    scoring_program: scoring_program.zip
    reference_data: reference_data.zip
    ingestion_program: ingestion_program.zip
    input_data: input_data.zip
leaderboard:
  leaderboards:
    RESULTS: &RESULTS
      label: Results
      rank: 1
  columns:
    accuracy:
      leaderboard: *RESULTS
      label: Accuracy
      rank: 1
"""


def make_v1_code_zip(root: Path) -> Path:
    """A CodaLab v1 code bundle as a zip: each program a zip with its ``metadata`` file."""
    work = root / "v1-code-work"
    for name, files in (
        ("scoring", {"evaluate.py": SCORE_TXT,
                     "metadata": "command: python $program/evaluate.py $input $output\n"}),
        ("ingestion", {"ingestion.py": INGESTION_PY, "metadata":
                       "command: python $ingestion_program/ingestion.py $input $output "
                       "$submission_program\n"}),
        ("reference", {"truth.txt": TRUTH["alpha"].replace(" ", "\n") + "\n"}),
        ("input", {"x.txt": "0\n1\n2\n3\n4\n5\n"}),
    ):  # fmt: skip
        (work / name).mkdir(parents=True)
        for file, text in files.items():
            (work / name / file).write_text(text)
    bundle = root / "v1-code-bundle"
    bundle.mkdir()
    _zip(work / "scoring", bundle / "scoring_program.zip")
    _zip(work / "ingestion", bundle / "ingestion_program.zip")
    _zip(work / "reference", bundle / "reference_data.zip")
    _zip(work / "input", bundle / "input_data.zip")
    (bundle / "competition.yaml").write_text(V1_CODE_YAML)
    return _zip(bundle, root / "v1-code-bundle.zip")


SCORE_BESIDE_PY = """\
import json, sys, time
from pathlib import Path
inputs, output, shared = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
truth = (inputs / "ref" / "truth.txt").read_text().split()
(shared / "queries.tmp").write_text("".join(f"{i}\\n" for i in range(len(truth))))
(shared / "queries.tmp").rename(shared / "queries.txt")
while not (shared / "answers.txt").exists():
    time.sleep(0.02)
lines = (shared / "answers.txt").read_text().split("\\n")
right = sum(a == b for a, b in zip(truth, lines[1:]))
seen, linked = lines[0].split()
output.mkdir(parents=True, exist_ok=True)
(output / "scores.json").write_text(json.dumps({"accuracy": right / len(truth),
    "ref_seen": float(seen != "REF:no"), "link_followed": float(linked == "LINK:yes")}))
print("scoring program: scored", right)
"""

INGEST_BESIDE_PY = """\
import os, sys, time
from pathlib import Path
shared, code = Path(sys.argv[1]), sys.argv[2]
sys.path.insert(0, code)
from model import predict
while not (shared / "queries.txt").exists():
    time.sleep(0.02)
try:
    seen = "REF:" + open("/app/input/ref/truth.txt").read().split()[0]
except OSError:
    seen = "REF:no"
try:
    os.symlink(sys.argv[0], shared / "link")
    linked = "LINK:yes" if (shared / "link").read_text() else "LINK:empty"
except OSError:
    linked = "LINK:no"
answers = [predict(x) for x in (shared / "queries.txt").read_text().split()]
(shared / "answers.tmp").write_text(f"{seen} {linked}\\n" + "".join(a + "\\n" for a in answers))
(shared / "answers.tmp").rename(shared / "answers.txt")
"""

BESIDE_YAML = """\
version: 2
title: Toy Interactive Challenge
phases:
  - index: 0
    name: Only Phase
    start: 2020-01-01
    execution_time_limit: LIMIT
    tasks: [0]
tasks:
  - index: 0
    name: Alpha Task
    scoring_program: scoring_program
    ingestion_program: ingestion_program
    ingestion_only_during_scoring: true
    reference_data: reference_alpha
leaderboards:
  - title: Results
    columns:
      - {title: Accuracy, key: accuracy, index: 0, sorting: desc}
      - {title: Saw references, key: ref_seen, index: 1, sorting: asc, hidden: true}
      - {title: Followed a link, key: link_followed, index: 2, sorting: asc, hidden: true}
"""


def make_beside_bundle(root: Path, *, limit: int = 60) -> Path:
    """A Codabench bundle whose scoring program talks to the ingestion through /app/shared.

    The scoring program writes queries, the ingestion program answers them with the
    participant's ``model.py`` (and says whether it could read the references, and whether a
    link it made in the shared folder is followed).
    """
    make_v2_bundle(root, yaml_text=BESIDE_YAML.replace("LIMIT", str(limit)))
    return _beside_programs(
        root,
        ("score_beside.py", SCORE_BESIDE_PY, "/app/input /app/output $shared"),
        ("ingest_beside.py", INGEST_BESIDE_PY, "$shared $submission_program"),
    )


def _beside_programs(
    root: Path, scoring: tuple[str, str, str], ingestion: tuple[str, str, str]
) -> Path:
    """The bundle's scoring and ingestion programs: (file name, code, command arguments)."""
    for folder, (name, code, arguments), place in (
        ("scoring_program", scoring, "/app/program"),
        ("ingestion_program", ingestion, "$ingestion_program"),
    ):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / name).write_text(code)
        (root / folder / "metadata.yaml").write_text(
            f"command: python {place}/{name} {arguments}\n"
        )
    return root


SCORE_STREAM_PY = """\
import json, sys, time
from pathlib import Path
truth_dir, predictions, output = (Path(arg) for arg in sys.argv[1:4])
truth = (truth_dir / "truth.txt").read_text().split()
for _ in range(600):
    if (predictions / "start.txt").exists():
        break
    time.sleep(0.05)
else:
    sys.exit("no start.txt from the ingestion")
seen = []
while True:
    ended = (predictions / "end.txt").exists()
    for path in sorted(predictions.glob("alpha.predict_*")):
        if path.name not in seen:
            seen.append(path.name)
    if ended:
        break
    time.sleep(0.05)
latest = (predictions / max(seen)).read_text().split()  # the highest round
try:
    linked = float(bool((predictions / "link").read_text()))
except OSError:
    linked = 0.0
right = sum(a == b for a, b in zip(truth, latest))
output.mkdir(parents=True, exist_ok=True)
(output / "scores.json").write_text(json.dumps({"accuracy": right / len(truth),
    "rounds": len(seen), "ref_seen": float((predictions / "ref_seen.txt").read_text() != "no"),
    "code_kept": float((predictions / "model.py").exists()), "link_followed": linked}))
print("scoring program: read", len(seen), "predictions")
"""

INGEST_STREAM_PY = """\
import os, sys, time
from pathlib import Path
predictions, code = Path(sys.argv[1]), sys.argv[2]
sys.path.insert(0, code)
from model import predict
(predictions / "start.txt").write_text(f"ingestion_pid: {os.getpid()}\\n")
try:
    seen = open("/app/input/ref/truth.txt").read().split()[0]
except OSError:
    seen = "no"
(predictions / "ref_seen.txt").write_text(seen)
os.symlink("model.py", predictions / "link")
for round in range(3):
    answers = [predict(str(x)) if round else "b" for x in range(6)]
    (predictions / f"alpha.predict_{round}").write_text("".join(a + "\\n" for a in answers))
    time.sleep(0.2)
(predictions / "end.txt").write_text("ingestion_success: 1\\n")
"""


def make_stream_beside_bundle(root: Path, limit: int = 60) -> Path:
    """An AutoDL-style pair: the ingestion writes predictions into ``$predictions`` as it goes
    and the scoring program, running beside it, reads them there until ``end.txt``.

    ``limit``: the phase's execution time limit in seconds."""
    columns = BESIDE_YAML.index("      - {title: Saw")
    yaml_text = BESIDE_YAML[:columns].replace("LIMIT", str(limit)) + (
        "      - {title: Predictions read, key: rounds, index: 1, sorting: desc}\n"
        "      - {title: Saw references, key: ref_seen, index: 2, sorting: asc}\n"
        "      - {title: Code in res, key: code_kept, index: 3, sorting: desc}\n"
        "      - {title: Followed a link, key: link_followed, index: 4, sorting: asc}\n"
    )
    make_v2_bundle(root, yaml_text=yaml_text)
    return _beside_programs(
        root,
        ("score_stream.py", SCORE_STREAM_PY, "$hidden $predictions $output"),
        ("ingest_stream.py", INGEST_STREAM_PY, "$predictions $submission_program"),
    )


PREDICT_PY = """\
import sys
from pathlib import Path
inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
xs = (inputs / "x.txt").read_text().split()
print("PREDICT-PRINT: predicting", len(xs))
output.mkdir(parents=True, exist_ok=True)
(output / "predictions.txt").write_text("".join(("a" if int(x) % 3 == 0 else "b") + "\\n"
                                                for x in xs))
"""

PROGRAM_METADATA = "command: python $program/predict.py $input $output\n"
"""CodaLab's classic code submission: the upload is the program the worker runs."""

V1_PROGRAM_YAML = """\
title: Old Program Toy
phases:
  1:
    phasenumber: 1
    label: "Development"
    start_date: 2020-01-01
    execution_time_limit: 60
    scoring_program: scoring_program.zip
    reference_data: reference_data.zip
    input_data: input_data.zip
    public_data: sample_data.zip
    starting_kit: sample_code_submission.zip
leaderboard:
  leaderboards:
    RESULTS: &RESULTS
      label: Results
      rank: 1
  columns:
    accuracy:
      leaderboard: *RESULTS
      label: Accuracy
      rank: 1
"""


def program_zip(root: Path, predict_py: str = PREDICT_PY, name: str = "program") -> Path:
    """A code submission that is its own program: ``predict.py`` and a ``metadata`` command."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "predict.py").write_text(predict_py)
    (folder / "metadata").write_text(PROGRAM_METADATA)
    return _zip(folder, root / f"{name}.zip")


def make_v1_program_zip(
    root: Path,
    yaml_text: str = V1_PROGRAM_YAML,
    *,
    score_py: str = SCORE_TXT,
    predict_py: str = PREDICT_PY,
) -> Path:
    """A CodaLab v1 bundle without ingestion program whose sample submission is a program.

    Its starting kit is the sample code submission (``metadata`` naming ``predict.py``), its
    phase's public data is sample data laid out as the input data.
    """
    work = root / "v1-program-work"
    for name, files in (
        ("scoring", {"evaluate.py": score_py,
                     "metadata": "command: python $program/evaluate.py $input $output\n"}),
        ("reference", {"truth.txt": TRUTH["alpha"].replace(" ", "\n") + "\n"}),
        ("input", {"x.txt": "0\n1\n2\n3\n4\n5\n"}),
        ("sample", {"x.txt": "7\n9\n"}),
    ):  # fmt: skip
        (work / name).mkdir(parents=True)
        for file, text in files.items():
            (work / name / file).write_text(text)
    bundle = root / "v1-program-bundle"
    bundle.mkdir()
    _zip(work / "scoring", bundle / "scoring_program.zip")
    _zip(work / "reference", bundle / "reference_data.zip")
    _zip(work / "input", bundle / "input_data.zip")
    _zip(work / "sample", bundle / "sample_data.zip")
    program_zip(work, predict_py, name="sample_code_submission").rename(
        bundle / "sample_code_submission.zip"
    )
    (bundle / "competition.yaml").write_text(yaml_text)
    return _zip(bundle, root / "v1-program-bundle.zip")
