"""Codabench conventions an imported bundle's programs rely on (issue 18, real bundles' gaps).

- Codabench mounts ``/app/input`` writable: a scoring program may write into ``ref`` and
  ``res`` (a ``filelock`` lock, a cache); Proctor gives it scratch copies
  (``writable_inputs``), and the references and the upload never change.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bundle_fixtures import (
    SCORE_JSON,
    make_v2_bundle,
    submission_zip,
)
from proctor.pipeline import program_staging
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
        monkeypatch.setattr(program_staging, "SMALL_INPUTS_BYTES", 0)
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
