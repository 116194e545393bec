"""Codabench conventions an imported bundle's programs rely on (issue 18, real bundles' gaps).

- Codabench mounts ``/app/input`` writable: a scoring program may write into ``ref`` and
  ``res`` (a ``filelock`` lock, a cache); Proctor gives it scratch copies
  (``writable_inputs``), and the references and the upload never change.
- CodaLab v1 spells ``ingestion_only_during_scoring`` ``ingestion_program_only_during_scoring``
  (a phase's key, as Codabench's v1 import maps it): the ingestion runs beside scoring.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import (
    INGEST_BESIDE_PY,
    SCORE_BESIDE_PY,
    SCORE_JSON,
    TRUTH,
    code_zip,
    make_v2_bundle,
    submission_zip,
)

from proctor.pipeline import program_exec
from proctor.protocols.codabench_settings import IngestionProtocol
from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus

WRITES_ITS_INPUTS = (
    """\
import sys
from pathlib import Path
inputs = Path(sys.argv[1])
for folder in (inputs / "res", inputs / "ref"):
    if (folder / "start.txt.lock").exists():
        sys.exit("a copy kept from an earlier run")
    (folder / "start.txt.lock").write_text("locked")
with open(inputs / "ref" / "truth.txt", "a") as truth:
    truth.write("\\n")
try:
    (inputs / "res" / "big.bin").write_bytes(bytes(3 * 1024**2))
except OSError:
    pass
else:
    if CAPPED:
        sys.exit("the writable copies are not capped")
"""
    + SCORE_JSON
)


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("inputs", ["small", "large"])
def test_a_program_writing_into_its_inputs_scores_and_changes_nothing_kept(
    shared_dir: Path, monkeypatch: pytest.MonkeyPatch, inputs: str
) -> None:
    """``small``: one workspace holds every copy; ``large``: the copies are staged one by one
    (as for inputs past 64 MiB), each writable one in a workspace of its own, capped."""
    challenge = shared_dir / "challenge"
    program = f"CAPPED = {inputs == 'large'}\n" + WRITES_ITS_INPUTS
    import_challenge(make_v2_bundle(shared_dir / "bundle", score_py=program), challenge, "host")
    data = yaml.safe_load((challenge / "challenge.yaml").read_text())
    for task in data["tasks"]:
        assert task["scorer"]["writable_inputs"] is True
        task["scorer"]["limits"]["scratch_bytes"] = 1024**2
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(data))
    if inputs == "large":
        monkeypatch.setattr(program_exec, "SMALL_INPUTS_BYTES", 0)
    references = {path: path.read_bytes() for path in (challenge / "data").rglob("*.txt")}
    upload = submission_zip(shared_dir)
    stored = upload.read_bytes()
    settings = Settings(work_root=shared_dir / "runs")
    report = run_entry(RunRequest(upload, str(challenge), phase="0"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["alpha-task"]["accuracy"] == pytest.approx(5 / 6)
    assert upload.read_bytes() == stored
    assert {path: path.read_bytes() for path in (challenge / "data").rglob("*.txt")} == references
    assert not list((challenge / "data").rglob("*.lock"))


V1_BESIDE_YAML = """\
title: Old Interactive Toy
phases:
  1:
    phasenumber: 1
    label: Interactive
    start_date: 2020-01-01
    execution_time_limit: 60
    ingestion_program_only_during_scoring: True
    ingestion_program: ingestion_program.zip
    scoring_program: scoring_program.zip
    reference_data: reference_data.zip
leaderboard:
  leaderboards:
    RESULTS: &RESULTS
      label: Results
      rank: 1
  columns:
    accuracy: {leaderboard: *RESULTS, label: Accuracy, rank: 1}
    ref_seen: {leaderboard: *RESULTS, label: Saw references, rank: 2, sort: asc}
    link_followed: {leaderboard: *RESULTS, label: Followed a link, rank: 3, sort: asc}
"""


def _zipped(files: dict[str, str], archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, text in files.items():
            zipped.writestr(name, text)
    return archive


def _v1_beside_bundle(root: Path) -> Path:
    """A CodaLab v1 bundle whose phase runs its ingestion beside scoring (v1's spelling)."""
    bundle = root / "v1-beside"
    bundle.mkdir(parents=True)
    scoring = "command: python /app/program/score_beside.py $input $output $shared\n"
    _zipped({"score_beside.py": SCORE_BESIDE_PY, "metadata": scoring},
            bundle / "scoring_program.zip")  # fmt: skip
    ingestion = "command: python $ingestion_program/ingest_beside.py $shared $submission_program\n"
    _zipped({"ingest_beside.py": INGEST_BESIDE_PY, "metadata": ingestion},
            bundle / "ingestion_program.zip")  # fmt: skip
    truth = TRUTH["alpha"].replace(" ", "\n") + "\n"
    _zipped({"truth.txt": truth}, bundle / "reference_data.zip")
    (bundle / "competition.yaml").write_text(V1_BESIDE_YAML)
    return bundle


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_v1_phase_ingesting_only_during_scoring_runs_its_ingestion_beside_scoring(
    shared_dir: Path,
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(_v1_beside_bundle(shared_dir), challenge, "host")
    loaded = load_challenge(challenge)
    scorer = loaded.tasks[0].scoring_program
    assert scorer is not None and scorer.concurrent_ingestion is not None
    protocol = loaded.protocol
    assert not isinstance(protocol, IngestionProtocol) or not protocol.programs  # not the exam
    settings = Settings(work_root=shared_dir / "runs")
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["interactive"]["accuracy"] == 1.0  # the model answers every query
