"""Codabench ingestion as a stage of its own (issue 18): the ``ingestion`` protocol, /app/shared,
and ``ingestion_only_during_scoring`` (the two programs at once, each in its own sandbox).

Bundles written for the purpose (``bundle_fixtures``), imported, run in the real bwrap
sandbox; expected scores come from the bundle's own programs run directly.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import (
    MODEL_PY,
    PREDICTIONS,
    SCORE_JSON,
    code_zip,
    make_beside_bundle,
    make_code_bundle,
    make_stream_beside_bundle,
    make_v1_code_zip,
    run_directly,
    score_task_directly,
    submission_zip,
)
from service_seed import archive

from proctor.errors import ConfigError, JobCancelledError
from proctor.executor.run import run_next
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.report import EvaluationReport
from proctor.protocols.plain_copy import copy_plain
from proctor.resolve import load_challenge
from proctor.sandbox.base import Sandbox
from proctor.services.local.authoring import check_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.bundle_import.programs import substitute
from proctor.services.local.environments import tasks_on_host
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import add_user, authenticate
from proctor.services.platform.logs import submission_logs
from proctor.services.platform.resources import open_platform
from proctor.settings import ServiceSettings, Settings
from proctor.types import Failure, RunStatus

MODEL_PREDICTIONS = "a\nb\na\nb\na\nb\n"
"""What the fixture's ``model.py`` predicts on the input data 0..5."""


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def _imported(bundle: Path, dest: Path, *, exam: str | None = None) -> Path:
    import_challenge(bundle, dest, "host")
    if exam is not None:
        data = yaml.safe_load((dest / "challenge.yaml").read_text())
        data["disclosure"]["exam"] = exam
        (dest / "challenge.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def _stages(report: EvaluationReport) -> dict[str, dict[str, object]]:
    return {stage["name"]: stage for stage in report.to_json()["stages"]}


def _expected(challenge: Path, predictions: str, work: Path) -> dict[str, float]:
    return score_task_directly(challenge, "alpha-task", predictions, work)


# --- the ingestion program as the exam stage ------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("exam", ["full", "counts", "none"])
def test_ingestion_is_the_exam_and_shows_the_participants_print_only_at_full(
    shared_dir: Path, settings: Settings, exam: str
) -> None:
    bundle = make_code_bundle(shared_dir / "bundle", public_data=True)
    challenge = _imported(bundle, shared_dir / "challenge", exam=exam)
    assert load_challenge(challenge).protocol.kind == "ingestion"
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = _expected(challenge, MODEL_PREDICTIONS, shared_dir / "direct")
    assert report.scores["alpha-task"] == {
        "accuracy": expected["accuracy"],
        "error": expected["error"],
    }
    stages = _stages(report)
    assert ("MODEL-PRINT" in str(stages["exam"]["message"])) is (exam == "full")
    assert stages["quiz"]["status"] == "passed"  # the sample data, as the quiz's inputs
    assert "MODEL-PRINT" in str(stages["quiz"]["message"])  # public data: shown (quiz full)
    assert "MODEL-PRINT" not in str(stages["score"]["message"])


CWD_MODEL_PY = (
    MODEL_PY
    + """\
from pathlib import Path
Path("checkpoint.txt").write_text("saved")  # the working folder: the ingestion program's
assert Path("checkpoint.txt").read_text() == "saved"
"""
)
CWD_SCORE_PY = SCORE_JSON.replace(
    "import json, sys\n", "import json, sys\nopen('workings.tmp', 'w').write('kept aside')\n", 1
)


@pytest.mark.sandbox
def test_code_and_programs_write_into_their_working_folders_as_on_codabench(
    shared_dir: Path, settings: Settings
) -> None:
    """Codabench mounts /app/program writable: participant code saving a checkpoint in the
    working folder, and a scoring program writing a temporary file there, both work; the
    challenge's own program folders never change."""
    bundle = make_code_bundle(shared_dir / "bundle", score_py=CWD_SCORE_PY, public_data=True)
    challenge = _imported(bundle, shared_dir / "challenge")
    before = sorted(p.name for p in (challenge / "programs").rglob("*"))
    report = run_entry(RunRequest(code_zip(shared_dir, CWD_MODEL_PY), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert _stages(report)["quiz"]["status"] == "passed"
    assert sorted(p.name for p in (challenge / "programs").rglob("*")) == before


DURATION_SCORE_PY = SCORE_JSON.replace(
    "import json, sys\n",
    "import json, sys\n"
    "lines = open(sys.argv[1] + '/res/metadata').read().splitlines()\n"
    "meta = dict(line.split(': ', 1) for line in lines)\n"
    "print('DURATION', float(meta['elapsedTime']), 'CODES', meta['exitCode'],"
    " meta['ingestionExitCode'], float(meta['ingestionElapsedTime']))\n",
    1,
)


@pytest.mark.sandbox
def test_the_scoring_program_reads_the_runs_metadata_in_res_as_on_codabench(
    shared_dir: Path, settings: Settings
) -> None:
    """CodaLab scoring programs read ``elapsedTime`` from ``res/metadata`` for a Duration."""
    bundle = make_code_bundle(shared_dir / "bundle", score_py=DURATION_SCORE_PY)
    challenge = _imported(bundle, shared_dir / "challenge")
    upload = code_zip(shared_dir)
    report = run_entry(RunRequest(upload, str(challenge), keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-alpha-task.log").read_text()
    shown = re.search(r"DURATION (\S+) CODES null 0 (\S+)", log)
    assert shown is not None, log
    assert 0 < float(shown[1]) == float(shown[2]) < 60


@pytest.mark.sandbox
@pytest.mark.parametrize("deep", [False, True], ids=["alone", "with-a-folder-too-deep"])
def test_an_ingestion_writing_metadata_itself_fails_its_case_as_on_codabench(
    shared_dir: Path, settings: Settings, deep: bool
) -> None:
    """What it wrote is scored with the platform's ``metadata``, even when the copy of its
    output stops part way (a folder too deep): a forged elapsed time never reaches scoring."""
    bundle = make_code_bundle(shared_dir / "bundle")
    ingestion = bundle / "ingestion_program/ingestion.py"
    forge = '(output / "metadata").write_text("elapsedTime: 0.001\\n")\n'
    if deep:
        forge += 'import os; os.makedirs(str(output) + "/d" * 70)\n'
    ingestion.write_text(ingestion.read_text() + forge)
    challenge = _imported(bundle, shared_dir / "challenge", exam="full")
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge), keep=True), settings)
    exam = _stages(report)["exam"]
    assert exam["cases"] == {"total": 1, "passed": 0, "failed": 1, "timed_out": 0}
    assert ("deeper than 64" if deep else "do not write it yourself") in str(exam["message"])
    assert report.run_dir is not None  # scored all the same, on the platform's metadata
    (written,) = report.run_dir.glob("outputs/*/exam/metadata")
    assert "ingestionExitCode: 0" in written.read_text()
    assert "0.001" not in written.read_text()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_result_zip_goes_on_past_a_quiz_its_ingestion_fails_and_is_scored(
    shared_dir: Path, settings: Settings
) -> None:
    """No metadata: Codabench copies it into the output and scores it.

    Whatever the ingestion program does with the sample data (here it finds no model.py and
    fails), the result is scored.
    """
    bundle = make_code_bundle(shared_dir / "bundle", public_data=True)
    challenge = _imported(bundle, shared_dir / "challenge")
    report = run_entry(RunRequest(submission_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    quiz = _stages(report)["quiz"]
    assert quiz["status"] == "passed"
    assert "no metadata file" in str(quiz["message"])
    expected = _expected(challenge, PREDICTIONS, shared_dir / "direct")
    assert report.scores["alpha-task"]["accuracy"] == expected["accuracy"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_without_public_inputs_the_quiz_is_skipped_with_a_note(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _imported(make_code_bundle(shared_dir / "bundle"), shared_dir / "challenge")
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    quiz = _stages(report)["quiz"]
    assert quiz["status"] == "skipped"
    assert "no public inputs" in str(quiz["message"])


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "limit", "exam", "reason"),
    [
        ("def predict(x):\n    raise RuntimeError('MODEL-SECRET')\n", 60, "full", "exited"),
        ("import time\ndef predict(x):\n    time.sleep(60)\n", 2, "errors", "timed out"),
    ],
    ids=["failing", "too-slow"],
)
def test_code_that_fails_or_is_too_slow_under_ingestion_is_the_entrys_failure(
    shared_dir: Path, settings: Settings, model: str, limit: int, exam: str, reason: str
) -> None:
    bundle = make_code_bundle(shared_dir / "bundle", limit=limit)
    challenge = _imported(bundle, shared_dir / "challenge", exam=exam)
    started = time.monotonic()
    report = run_entry(RunRequest(code_zip(shared_dir, model), str(challenge)), settings)
    assert time.monotonic() - started < 30
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    message = str(_stages(report)["score"]["message"])
    assert message.startswith("your code failed under the ingestion program: ")
    assert reason in message
    shown = json.dumps(report.to_json())
    assert ("MODEL-SECRET" in shown) is (exam == "full")  # the exam's log tails, at full only
    assert "Traceback (most recent call last)" not in message


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_scoring_program_failing_after_a_good_ingestion_is_the_organizers(
    shared_dir: Path, settings: Settings
) -> None:
    broken = "import sys\nprint('SECRET-LOG')\nsys.exit('broken scorer')\n"
    bundle = make_code_bundle(shared_dir / "bundle", score_py=broken)
    challenge = _imported(bundle, shared_dir / "challenge", exam="full")
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge), keep=True), settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.SCORER
    assert _stages(report)["exam"]["status"] == "passed"
    assert "SECRET-LOG" not in json.dumps(report.to_json())
    assert report.run_dir is not None
    assert "exited with status 1" in (report.run_dir / "score-error.txt").read_text()
    assert "SECRET-LOG" in (report.run_dir / "scoring-alpha-task.log").read_text()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_codalab_code_bundle_with_zipped_programs_scores_as_run_directly(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_v1_code_zip(shared_dir), challenge, "host")
    assert load_challenge(challenge).protocol.kind == "ingestion"
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = run_directly(
        challenge / "programs/development",
        challenge / "data/development/reference",
        MODEL_PREDICTIONS,
        shared_dir / "direct",
        ["python3", "/app/program/evaluate.py", "/app/input", "/app/output"],
    )
    assert report.scores["development"] == {"accuracy": expected["accuracy"]}


# --- ingestion_only_during_scoring ----------------------------------------------------------


def _beside_directly(challenge: Path, code: Path, work: Path) -> dict[str, float]:
    """Both programs run at once outside any sandbox, talking through a plain folder."""
    inputs, output, shared = work / "input", work / "output", work / "shared"
    inputs.mkdir(parents=True)
    shared.mkdir()
    (inputs / "ref").symlink_to(challenge / "data/alpha-task/reference")
    programs = challenge / "programs"
    scoring = subprocess.Popen(
        [sys.executable, programs / "alpha-task/score_beside.py", inputs, output, shared]
    )
    ingestion = subprocess.Popen(
        [sys.executable, programs / "alpha-task-ingestion/ingest_beside.py", shared, code]
    )
    assert scoring.wait(60) == 0 and ingestion.wait(60) == 0
    found: dict[str, float] = json.loads((output / "scores.json").read_text())
    return found


@pytest.mark.sandbox
@pytest.mark.slow
def test_programs_beside_each_other_talk_through_shared_and_only_scoring_sees_references(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _imported(
        make_beside_bundle(shared_dir / "bundle"), shared_dir / "challenge", exam="full"
    )
    scorer = load_challenge(challenge).tasks[0].scoring_program
    assert scorer is not None and scorer.concurrent_ingestion is not None
    upload = code_zip(shared_dir)
    report = run_entry(RunRequest(upload, str(challenge), keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = _beside_directly(challenge, shared_dir / "code", shared_dir / "direct")
    assert expected["link_followed"] == 1.0  # outside the sandbox, a plain folder
    scores = report.scores["alpha-task"]
    assert scores == {**expected, "link_followed": 0.0}  # /app/shared is nosymfollow
    assert scores["ref_seen"] == 0.0  # no references in its sandbox
    assert "MODEL-PRINT" not in json.dumps(report.to_json())  # beside scoring: organizers'
    assert report.run_dir is not None
    assert "MODEL-PRINT" in (report.run_dir / "scoring-alpha-task.log").read_text()


def _stream_directly(challenge: Path, code: Path, work: Path) -> dict[str, float]:
    """The AutoDL-style pair run at once outside any sandbox, ``res`` a plain folder."""
    predictions, output = work / "res", work / "output"
    shutil.copytree(code, predictions)
    programs = challenge / "programs"
    reference = challenge / "data/alpha-task/reference"
    scoring = subprocess.Popen(
        [sys.executable, programs / "alpha-task/score_stream.py", reference, predictions, output]
    )
    ingest = programs / "alpha-task-ingestion/ingest_stream.py"
    ingestion = subprocess.Popen([sys.executable, ingest, predictions, code])
    assert scoring.wait(60) == 0 and ingestion.wait(60) == 0
    found: dict[str, float] = json.loads((output / "scores.json").read_text())
    return found


@pytest.mark.sandbox
def test_an_ingestion_beside_scoring_writes_predictions_into_res_where_scoring_reads_them(
    shared_dir: Path, settings: Settings
) -> None:
    """AutoDL's pair: ``$predictions`` is ``/app/input/res`` for both programs, one folder
    (holding the upload) that both change, as on Codabench; the references stay scoring's."""
    bundle = make_stream_beside_bundle(shared_dir / "bundle")
    challenge = _imported(bundle, shared_dir / "challenge")
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = _stream_directly(challenge, shared_dir / "code", shared_dir / "direct")
    assert expected == {"accuracy": 1.0, "rounds": 3, "ref_seen": 0.0, "code_kept": 1.0,
                        "link_followed": 1.0}  # fmt: skip
    scores = report.scores["alpha-task"]
    assert scores == {**expected, "link_followed": 0.0}  # the copy is nosymfollow


FIFO_MODEL_PY = (
    MODEL_PY
    + """\
import os
os.mkfifo("/app/input/res/alpha.predict_9")  # read last by the scoring program: it blocks
"""
)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_fifo_the_code_leaves_in_res_is_named_in_the_organizers_log_alone(
    shared_dir: Path, settings: Settings
) -> None:
    """The scoring program blocks on the participant's FIFO until its limit: the organizer's
    failure (the scorer's), and the organizer's log says what the shared folders held."""
    challenge = _imported(make_stream_beside_bundle(shared_dir / "bundle", limit=8),
                          shared_dir / "challenge")  # fmt: skip
    upload = code_zip(shared_dir, model_py=FIFO_MODEL_PY)
    report = run_entry(RunRequest(upload, str(challenge), keep=True), settings)
    assert (report.status, report.failure) == (RunStatus.FAILED, Failure.SCORER)
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-alpha-task.log").read_text()
    assert "FIFO (named pipe) 'alpha.predict_9' in /app/input/res" in log
    assert "alpha.predict_9" not in json.dumps(report.to_json())


def _processes_running(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_hang_beside_scoring_is_killed_at_the_limit_with_nothing_left_behind(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _imported(make_beside_bundle(shared_dir / "bundle", limit=2), shared_dir / "c")
    hanging = code_zip(shared_dir, "import time\ndef predict(x):\n    time.sleep(600)\n")
    started = time.monotonic()
    report = run_entry(RunRequest(hanging, str(challenge)), settings)
    assert time.monotonic() - started < 20  # 2 s, the grace, the sandboxes' start and end
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    assert "your code failed under the ingestion program" in json.dumps(report.to_json())
    assert _processes_running("ingest_beside.py") == []
    assert _processes_running("score_beside.py") == []
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(shared_dir) not in mounts
    assert _run_cgroups() == []


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_cancelled_job_kills_both_programs_at_once(shared_dir: Path, settings: Settings) -> None:
    challenge = _imported(make_beside_bundle(shared_dir / "bundle"), shared_dir / "c")
    hanging = code_zip(shared_dir, "import time\ndef predict(x):\n    time.sleep(600)\n")
    token = CancelToken()

    def cancel_once_both_run() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            _processes_running("ingest_beside.py") and _processes_running("score_beside.py")
        ):
            time.sleep(0.05)
        token.cancel()

    watcher = threading.Thread(target=cancel_once_both_run)
    watcher.start()
    started = time.monotonic()
    with pytest.raises(JobCancelledError):
        run_entry(RunRequest(hanging, str(challenge)), settings, cancel=token)
    watcher.join()
    assert time.monotonic() - started < 20  # not the 60 s limit
    assert _processes_running("ingest_beside.py") == []
    assert _processes_running("score_beside.py") == []
    assert _run_cgroups() == []


def _run_cgroups() -> list[Path]:
    """This process's run cgroups (``PID-...`` below a ``proctor`` folder) still there."""
    pid = os.getpid()
    return [
        folder
        for parent in Path("/sys/fs/cgroup").glob("**/proctor")
        for folder in [*parent.glob(f"{pid}-*"), *parent.glob(f"slot-*/{pid}-*")]
    ]


# --- the declaration ------------------------------------------------------------------------


def test_a_folder_of_the_old_importer_is_told_to_import_again(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_code_bundle(tmp_path / "bundle"), challenge, "host")
    data = yaml.safe_load((challenge / "challenge.yaml").read_text())
    program = data["protocol"]["programs"]["alpha-task"]
    data["protocol"] = {"kind": "results"}
    data["tasks"][0]["scorer"]["ingestion"] = {
        **program,
        "input_data": "data/alpha-task/input_data",
    }
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as caught:
        load_challenge(challenge)
    assert caught.value.location == "tasks[0].scorer.ingestion"
    assert "proctor challenge import" in caught.value.message


def test_an_ingestion_program_for_an_unknown_task_is_refused(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_code_bundle(tmp_path / "bundle"), challenge, "host")
    text = (challenge / "challenge.yaml").read_text()
    (challenge / "challenge.yaml").write_text(text.replace("    alpha-task:", "    beta-task:"))
    with pytest.raises(ConfigError) as caught:
        load_challenge(challenge)
    assert caught.value.location == "protocol.programs.beta-task"


def test_commands_of_a_task_ingesting_during_scoring_read_as_the_worker_reads_them() -> None:
    assert substitute("python $program/s.py $shared", scoring=True, during_scoring=True) == (
        "python /app/ingestion_program/s.py /app/shared"
    )
    command = "python $ingestion_program/i.py $input $predictions $submission_program"
    assert substitute(command, scoring=True, input_data=True, during_scoring=True) == (
        "python /app/program/i.py /app/input_data /app/input/res /app/ingested_program"
    )


# --- through the service --------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_service_shows_a_participant_the_ingestion_exam_as_disclosed(
    shared_dir: Path, sandbox: Sandbox
) -> None:
    """The real job function on a platform (no server process): the stored, shown report."""
    challenge = _imported(make_code_bundle(shared_dir / "bundle"), shared_dir / "c", exam="full")
    settings = ServiceSettings(data=shared_dir / "data", allow_host_environment=True)
    platform = open_platform(settings, Settings(work_root=shared_dir / "work"))
    olga = add_user(platform, "olga", organizer=True)
    bob = add_user(platform, "bob", team="blue")
    installs.install(platform, authenticate(platform, olga.token), str(challenge))
    participant = authenticate(platform, bob.token)
    code_zip(shared_dir)  # the folder archive() packs
    upload = io.BytesIO(archive(shared_dir / "code"))
    receipt = submissions.submit(platform, participant, "toy-code-challenge", None, upload)
    runtime = WorkerRuntime(
        db=platform.db, artifacts=platform.artifacts, settings=Settings(work_root=shared_dir / "w"),
        service=platform.settings, sandbox=sandbox, environments=lambda _c, _p: {},
    )  # fmt: skip
    while run_next("test-worker", runtime):
        pass
    shown = submissions.status(platform, participant, receipt.submission)
    assert shown.status == "scored", shown
    assert shown.report is not None
    stages = {stage["name"]: stage for stage in shown.report["stages"]}
    assert "MODEL-PRINT" in stages["exam"]["message"]  # exam: full
    assert "scored 6" not in shown.model_dump_json()  # the scoring program's print...
    logs = submission_logs(platform, authenticate(platform, olga.token), receipt.submission)
    assert "scored 6" in logs.model_dump_json()  # ...is the organizer's


def test_a_scorer_running_the_participants_code_on_the_host_needs_the_hosts_allowance(
    tmp_path: Path,
) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_beside_bundle(tmp_path / "bundle"), challenge, "host")
    loaded = load_challenge(challenge)
    assert loaded.protocol.kind == "results"  # no code runs in the exam...
    assert tasks_on_host(loaded, ["alpha-task"]) == ["alpha-task"]  # ...but beside scoring


def test_what_a_run_wrote_is_copied_as_plain_files_within_an_uploads_bounds(
    tmp_path: Path,
) -> None:
    written = tmp_path / "output"
    (written / "sub").mkdir(parents=True)
    (written / "sub/predictions.txt").write_text("a\n")
    (written / "sub/predictions.txt").chmod(0o600)
    (written / "link").symlink_to("/etc/passwd")
    os.mkfifo(written / "fifo")
    assert copy_plain(written, tmp_path / "kept", max_bytes=1024**2) is None
    kept = sorted(
        p.relative_to(tmp_path / "kept").as_posix() for p in (tmp_path / "kept").rglob("*")
    )
    assert kept == ["sub", "sub/predictions.txt"]  # no link, no FIFO
    assert (tmp_path / "kept/sub/predictions.txt").stat().st_mode & 0o777 == 0o644
    deep = tmp_path / "deep"
    (deep / "/".join(["d"] * 70)).mkdir(parents=True)
    problem = copy_plain(deep, tmp_path / "deep-kept", max_bytes=1024**2)
    assert problem is not None and "nested deeper than 64 levels" in problem


def test_challenge_check_finds_a_file_an_ingestion_command_names_missing(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_code_bundle(tmp_path / "bundle"), challenge, "host")
    assert check_challenge(challenge) == []
    (challenge / "programs/alpha-task-ingestion/ingestion.py").unlink()
    problems = check_challenge(challenge)
    assert [problem.location for problem in problems] == ["protocol.programs.alpha-task.command[1]"]
    assert "not in the ingestion program's folder" in problems[0].message
