"""Organizers' scoring programs, run in the real sandbox after the exam (issue 17).

The program's failures are the organizer's (failure ``scorer``, exit 3, ``E-SCORE``), nothing it
prints reaches the participant, and what it may touch is its mounts alone.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import BUNDLED_ENV
from program_challenge import (
    HIDDEN,
    SCORE_PY,
    SECRET,
    expected_scores,
    make_challenge,
    make_entry,
)

from proctor.pipeline.report import EvaluationReport
from proctor.services.local.authoring import new_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

PROCTOR = Path(sys.executable).parent / "proctor"


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def run(challenge: Path, entry: Path, settings: Settings, *, keep: bool = True) -> EvaluationReport:
    return run_entry(RunRequest(entry, str(challenge), jobs=2, keep=keep), settings)


def organizer_log(report: EvaluationReport) -> str:
    assert report.run_dir is not None
    logs = [report.run_dir / "score-error.txt", report.run_dir / "scoring-mae.log"]
    return "\n".join(path.read_text() for path in logs if path.is_file())


def test_a_program_scores_the_exam_as_running_it_directly_does(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = make_challenge(shared_dir / "challenge")
    report = run(challenge, make_entry(shared_dir / "entry"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["mae"] == pytest.approx(expected_scores())
    assert set(report.to_json()["per_record"]["mae"]) == set(HIDDEN)
    # the same program run bare on the same files gives the same numbers
    assert report.run_dir is not None
    scores_dir = shared_dir / "bare"
    scores_dir.mkdir()
    cases = shared_dir / "cases.txt"
    cases.write_text("".join(f"{case}\n" for case in HIDDEN))
    env = {
        **os.environ,
        "PROCTOR_REFERENCE": str(challenge / "data/reference"),
        "PROCTOR_OUTPUTS": str(report.run_dir / "outputs/mae/exam"),
        "PROCTOR_OUTPUT_TEMPLATE": "{record}.out",
        "PROCTOR_CASES_FILE": str(cases),
        "PROCTOR_SCORES_DIR": str(scores_dir),
    }
    subprocess.run(
        ["python3", "score.py"], cwd=challenge / "scoring", env=env, check=True, timeout=60
    )
    bare = json.loads((scores_dir / "scores.json").read_text())
    assert report.scores["mae"] == {"mae": bare["mae"], "within_1": bare["within_1"]}
    # the program's own output is the organizer's
    assert "scored 3 cases" in organizer_log(report)


PRINT_SECRET = f"""
import os, sys
secret = open(os.path.join(os.environ["PROCTOR_REFERENCE"], "NOTE.txt")).read()
print("{SECRET}", secret); print(secret, file=sys.stderr)
"""

BAD_PROGRAMS = {
    "crashes": PRINT_SECRET + "raise RuntimeError('scorer bug: ' + secret)\n",
    "sleeps past its limit": PRINT_SECRET + "import time\ntime.sleep(120)\n",
    "allocates past its memory": PRINT_SECRET + "block = bytearray(3 * 1024**3)\n",
    "writes 10 GiB": PRINT_SECRET
    + "chunk = b'x' * 2**20\n"
    + "with open(os.path.join(os.environ['PROCTOR_SCORES_DIR'], 'big'), 'wb') as f:\n"
    + "    for _ in range(10 * 1024):\n        f.write(chunk)\n",
    "prints the references and writes nothing": PRINT_SECRET,
    "writes NaN": PRINT_SECRET
    + "open(os.environ['PROCTOR_SCORES_DIR'] + '/scores.json', 'w')"
    + '.write(\'{"mae": NaN, "within_1": 0.5}\')\n',
    "omits a declared metric": PRINT_SECRET
    + "open(os.environ['PROCTOR_SCORES_DIR'] + '/scores.json', 'w').write('{\"mae\": 1.5}')\n",
    "writes a string": PRINT_SECRET
    + "open(os.environ['PROCTOR_SCORES_DIR'] + '/scores.json', 'w')"
    + '.write(\'{"mae": "low", "within_1": 1}\')\n',
    "links scores.json to a host file": PRINT_SECRET
    + "os.symlink('/etc/passwd', os.environ['PROCTOR_SCORES_DIR'] + '/scores.json')\n",
}
REASONS = {
    "crashes": "exited with status 1",
    "sleeps past its limit": "timed out",
    "allocates past its memory": "exceeded its memory limit",
    "writes 10 GiB": "exited with status 1",  # ENOSPC in its capped folder
    "prints the references and writes nothing": "wrote no scores.json",
    "writes NaN": "metric 'mae' is nan, not a finite number",
    "omits a declared metric": "declared metric missing: within_1",
    "writes a string": "metric 'mae' is str, not a number",
    "links scores.json to a host file": "scores.json cannot be opened",
}


@pytest.mark.parametrize("behaviour", list(BAD_PROGRAMS))
def test_a_failing_program_is_the_organizers_failure_and_says_nothing(
    shared_dir: Path, behaviour: str
) -> None:
    challenge = make_challenge(
        shared_dir / "challenge",
        score_py=BAD_PROGRAMS[behaviour],
        scorer={"limits": {"wall_s": 5, "memory_bytes": 512 * 2**20}},
    )
    entry = make_entry(shared_dir / "entry")
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir / "runs")}
    done = subprocess.run(
        [str(PROCTOR), "run", str(entry), "-c", str(challenge), "--json", "--keep"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "failed"
    assert report["failure"] == Failure.SCORER
    assert "E-SCORE" in done.stdout
    for text in (done.stdout, done.stderr):
        assert SECRET not in text
        assert "scorer bug" not in text
        assert "Traceback" not in text
    run_dir = Path(
        next(line for line in done.stderr.splitlines() if "run folder" in line).split(": ", 1)[1]
    )
    log = (run_dir / "score-error.txt").read_text() + (run_dir / "scoring-mae.log").read_text()
    assert REASONS[behaviour] in log
    assert SECRET in log  # the organizer sees what the program printed


def test_undeclared_keys_are_dropped_with_a_warning_for_the_organizer(
    shared_dir: Path, settings: Settings
) -> None:
    extra = SCORE_PY.replace('"cases": rows,', '"cases": rows, "bonus": 7, "mae_secret": 1.0,')
    challenge = make_challenge(shared_dir / "challenge", score_py=extra)
    report = run(challenge, make_entry(shared_dir / "entry"), settings)
    assert report.status is RunStatus.SCORED
    assert set(report.scores["mae"]) == {"mae", "within_1"}
    log = organizer_log(report)
    assert "'bonus' is not a metric the YAML declares: left out" in log
    assert "'mae_secret' is not a metric the YAML declares" in log


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the host's loopback: a sandboxed program must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


PROBE = """
import json, os, socket
reached = 0
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    reached += 1
except OSError:
    pass
for path in {paths!r}:
    try:
        open(path).read(1)
        reached += 1
    except OSError:
        pass
wrote = 0
for case in open(os.environ["PROCTOR_CASES_FILE"]).read().split():
    target = open(os.path.join(os.environ["PROCTOR_OUTPUTS"], case + ".out")).read().strip()
    try:  # a naive program writes where the participant's output says
        with open(os.path.join(os.environ["PROCTOR_SCORES_DIR"], target), "w") as out:
            out.write("pwned")
    except OSError:
        pass
scores = {{"mae": float(reached), "within_1": 0.0}}
open(os.path.join(os.environ["PROCTOR_SCORES_DIR"], "scores.json"), "w").write(json.dumps(scores))
"""


def test_a_program_reaches_no_network_no_host_path_and_writes_only_its_folder(
    shared_dir: Path, settings: Settings, listener: int
) -> None:
    challenge_dir = shared_dir / "challenge"
    victim = shared_dir / "victim"
    victim.mkdir()
    victim.chmod(0o777)
    host_paths = [
        str(challenge_dir / "challenge.yaml"),
        str(challenge_dir / "scoring/score.py"),
        "/etc/shadow",
        "/root/.bashrc",
        str(Path.home()),
    ]
    challenge = make_challenge(
        challenge_dir, score_py=PROBE.format(port=listener, paths=host_paths)
    )
    crafted = f'#!/bin/sh\necho "{victim}/pwned-$1" > "$1.out"\n'
    entry = make_entry(shared_dir / "entry", next_sh=crafted)
    # the quiz compares with shipped answers: ship what the crafted entry writes
    for record in ("tr01", "tr02"):
        (entry / "answers" / f"{record}.out").write_text(f"{victim}/pwned-{record}\n")
    challenge_yaml = challenge / "challenge.yaml"
    challenge_yaml.write_text(challenge_yaml.read_text().replace("kind: numeric", "kind: lines"))
    report = run(challenge, entry, settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["mae"]["mae"] == 0.0  # nothing reached
    assert list(victim.iterdir()) == []
    traversal = shared_dir / "runs"
    assert not any(p.name.startswith("pwned") for p in traversal.rglob("*"))


def test_an_invalid_output_fails_its_case_through_the_check(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = make_challenge(shared_dir / "challenge", scorer={"check": ["python3", "check.py"]})
    next_sh = (
        '#!/bin/sh\ncase "$1" in te02) echo oops > "$1.out" ;;\n'
        '*) cat "$PROCTOR_DATA/$1.txt" > "$1.out" ;; esac\n'
    )
    report = run(challenge, make_entry(shared_dir / "entry", next_sh=next_sh), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    exam = next(s for s in report.to_json()["stages"] if s["name"] == "exam")
    assert exam["cases"]["failed"] == 1
    # the failed case has no stored output: the program scores it as it scores a missing one
    expected = expected_scores({**HIDDEN, "te02": 0.0})
    assert report.scores["mae"] == pytest.approx(expected)


def test_the_quiz_shows_the_checks_message(shared_dir: Path, settings: Settings) -> None:
    challenge = make_challenge(shared_dir / "challenge", scorer={"check": ["python3", "check.py"]})
    entry = make_entry(shared_dir / "entry", next_sh='#!/bin/sh\necho nope > "$1.out"\n')
    report = run(challenge, entry, settings, keep=False)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    quiz = next(s for s in report.to_json()["stages"] if s["name"] == "quiz")
    assert "expected one number, found 'nope'" in quiz["message"]


def test_the_program_runs_in_its_declared_environment_with_the_scientific_stack(
    shared_dir: Path, settings: Settings, reference_env: object
) -> None:
    numpy_program = SCORE_PY.replace(
        "import json, os, pathlib",
        "import json, os, pathlib\nimport numpy, pandas, sklearn.metrics, scipy",
    )
    bundled = BUNDLED_ENV
    environment = {
        "name": "proctor-reference",
        "debian": {"suite": "bookworm", "packages": ["python3", "gcc"]},
        "python": {
            "requirements": str(bundled / "requirements.in"),
            "lock": str(bundled / "requirements.lock"),
        },
        "lock": str(bundled / "environment.lock"),
    }
    challenge = make_challenge(
        shared_dir / "challenge", score_py=numpy_program, scorer={"environment": environment}
    )
    report = run(challenge, make_entry(shared_dir / "entry"), settings)
    assert report.status is RunStatus.SCORED, organizer_log(report)
    assert report.scores["mae"] == pytest.approx(expected_scores())


def test_a_program_written_for_other_mount_points_keeps_its_paths(
    shared_dir: Path, settings: Settings
) -> None:
    codabench = (
        SCORE_PY.replace('os.environ["PROCTOR_REFERENCE"]', '"/app/input/ref"')
        .replace('os.environ["PROCTOR_OUTPUTS"]', '"/app/input/res"')
        .replace('os.environ["PROCTOR_SCORES_DIR"]', '"/app/output"')
    )
    mounts = {
        "program": "/app/program",
        "reference": "/app/input/ref",
        "outputs": "/app/input/res",
        "scores": "/app/output",
    }
    challenge = make_challenge(
        shared_dir / "challenge", score_py=codabench, scorer={"mounts": mounts}
    )
    report = run(challenge, make_entry(shared_dir / "entry"), settings)
    assert report.status is RunStatus.SCORED, organizer_log(report)
    assert report.scores["mae"] == pytest.approx(expected_scores())


def test_a_predictions_challenge_scores_as_its_program_run_directly(
    shared_dir: Path, settings: Settings, reference_env: object
) -> None:
    folder = shared_dir / "predictions"
    new_challenge(folder, "predictions", name="tabular")
    baseline = folder / "baseline"
    guesses = baseline / "test/values/predictions.csv"
    rows = guesses.read_text().splitlines()
    rows[3] = rows[3].split(",")[0] + ",123.5"  # one bad guess: a score that is not trivial
    guesses.write_text("\n".join(rows) + "\n")
    report = run(folder, baseline, settings)
    assert report.status is RunStatus.SCORED, organizer_log(report)
    scores_dir = shared_dir / "bare"
    scores_dir.mkdir()
    cases = shared_dir / "cases.txt"
    cases.write_text("values\n")
    env = {
        **os.environ,
        "PROCTOR_REFERENCE": str(folder / "data/test-reference"),
        "PROCTOR_OUTPUTS": str(baseline / "test"),
        "PROCTOR_OUTPUT_TEMPLATE": "{record}",
        "PROCTOR_CASES_FILE": str(cases),
        "PROCTOR_SCORES_DIR": str(scores_dir),
    }
    subprocess.run(
        [sys.executable, "score.py"], cwd=folder / "scoring", env=env, check=True, timeout=120
    )
    bare = json.loads((scores_dir / "scores.json").read_text())
    assert report.scores["main"] == {"mae": bare["mae"], "within_1": bare["within_1"]}
    assert bare["within_1"] < 1


TAMPER = """
import json, os
reference = os.environ["PROCTOR_REFERENCE"]
changed = 0
for attempt in (
    lambda: open(os.path.join(reference, "REFERENCE.csv"), "a").write("x"),
    lambda: open(os.path.join(reference, "new.txt"), "w").write("x"),
    lambda: os.remove(os.path.join(reference, "NOTE.txt")),
    lambda: open(os.path.join(os.environ["PROCTOR_OUTPUTS"], "te01.out"), "w").write("1"),
    lambda: os.chmod(reference, 0o777),
):
    try:
        attempt()
        changed += 1
    except OSError:
        pass
scores = {"mae": float(changed), "within_1": 0.0}
open(os.path.join(os.environ["PROCTOR_SCORES_DIR"], "scores.json"), "w").write(json.dumps(scores))
"""


def test_the_program_cannot_change_its_references_or_the_outputs(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = make_challenge(shared_dir / "challenge", score_py=TAMPER)
    report = run(challenge, make_entry(shared_dir / "entry"), settings)
    assert report.status is RunStatus.SCORED, organizer_log(report)
    assert report.scores["mae"]["mae"] == 0.0
    assert (challenge / "data/reference/NOTE.txt").read_text() == SECRET
