"""What the host takes back from sandboxed runs: bounded by apparent size, never through a link.

Participant code under an ingestion program, and a scoring program (which may run participant
code it unpickles), shape the folders the host reads afterwards. Sparse files must not be
copied densely past the folder's cap onto the host's disk or into RAM (tmpfs), and a folder
the program replaced by a link must never lead the host to a file of its own. Codabench
bundles written for the purpose (``bundle_fixtures``), imported, run in the real bwrap sandbox;
the host's disk under the run folders and its shared memory are sampled while they run.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import SCORE_JSON, code_zip, make_code_bundle
from cli_service import Service
from command_challenge import IDS, make_command_challenge, make_command_entry

from proctor import trees
from proctor.pipeline.report import EvaluationReport
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

MIB = 1024**2
OUTPUT_CAP = 8 * MIB
"""The test challenge's ``limits.output_bytes`` (and ``upload_bytes``): /app/output's cap."""
SCORES_CAP = 8 * MIB
"""The test challenge's scoring program ``limits.scores_bytes``."""
MARGIN = 48 * MIB
"""What the host may write beside the cap (logs, copies of the programs, Python's files)."""
SPARSE_FILES = 4
SPARSE_BYTES = 256 * MIB
"""Participant code leaves this many sparse files of this apparent size: 128 times the cap."""
HOST_SCORE = 0.777


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def _imported(bundle: Path, dest: Path, change: Callable[[dict[str, object]], None]) -> Path:
    import_challenge(bundle, dest, "host")
    data = yaml.safe_load((dest / "challenge.yaml").read_text())
    data["disclosure"]["exam"] = "full"
    change(data)
    (dest / "challenge.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def _scorer(data: dict[str, object]) -> dict[str, object]:
    tasks = data["tasks"]
    assert isinstance(tasks, list)
    scorer = tasks[0]["scorer"]
    assert isinstance(scorer, dict)
    return scorer


def _small_output(data: dict[str, object]) -> None:
    data["limits"] = {"output_bytes": OUTPUT_CAP}
    protocol = data["protocol"]
    assert isinstance(protocol, dict)
    protocol["upload_bytes"] = OUTPUT_CAP


def _small_scores(data: dict[str, object]) -> None:
    _scorer(data)["limits"] = {"wall_s": 60.0, "scores_bytes": SCORES_CAP}


# --- measuring the host ---------------------------------------------------------------------


def _disk_bytes(roots: list[Path]) -> int:
    """Blocks taken by files under ``roots`` on their own file system (no mount below)."""
    total = 0
    for root in roots:
        try:
            device = root.stat().st_dev
        except FileNotFoundError:
            continue
        stack = [root]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        if info.st_dev != device:
                            continue
                        total += info.st_blocks * 512
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
    return total


def _shmem_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no Shmem line in /proc/meminfo")


class Peaks:
    """The host's disk use under some folders and its shared memory, sampled in a thread."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self.disk_before = _disk_bytes(roots)
        self.shmem_before = _shmem_bytes()
        self.disk = self.disk_before
        self.shmem = self.shmem_before
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.disk = max(self.disk, _disk_bytes(self.roots))
            self.shmem = max(self.shmem, _shmem_bytes())
            if self._done.wait(0.02):
                return

    def __enter__(self) -> Peaks:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()
        self.disk = max(self.disk, _disk_bytes(self.roots))

    @property
    def disk_growth(self) -> int:
        return self.disk - self.disk_before

    @property
    def shmem_growth(self) -> int:
        return self.shmem - self.shmem_before


@pytest.fixture
def host_tmp(shared_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The host's temporary folder for the test (where the scores folder is collected)."""
    folder = shared_dir / "host-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder


def _stages(report: EvaluationReport) -> dict[str, dict[str, object]]:
    return {stage["name"]: stage for stage in report.to_json()["stages"]}


# --- finding 2: sparse files participant code leaves in /app/output -------------------------

SPARSE_MODEL_PY = f"""\
import os
for index in range({SPARSE_FILES}):
    with open(f"/app/output/hole-{{index}}.bin", "wb") as hole:
        hole.truncate({SPARSE_BYTES})
def predict(x):
    return "a" if int(x) % 2 == 0 else "b"
"""


@pytest.mark.sandbox
@pytest.mark.slow
def test_sparse_files_in_an_ingestion_output_are_refused_past_the_cap_not_copied(
    shared_dir: Path, settings: Settings, host_tmp: Path
) -> None:
    """The quiz (sample data) and the exam each run the code; neither copies its holes."""
    bundle = make_code_bundle(shared_dir / "bundle", public_data=True)
    challenge = _imported(bundle, shared_dir / "challenge", _small_output)
    upload = code_zip(shared_dir, SPARSE_MODEL_PY)
    with Peaks([settings.work_root, host_tmp]) as peaks:
        report = run_entry(RunRequest(upload, str(challenge), keep=True), settings)
    grown = {"disk": peaks.disk_growth, "shmem": peaks.shmem_growth}
    assert max(grown.values()) < OUTPUT_CAP + MARGIN, grown
    assert report.status is RunStatus.FAILED, report.to_json()
    assert report.failure is Failure.ENTRY
    quiz = str(_stages(report)["quiz"]["message"])
    assert "hole-0.bin" in quiz and str(OUTPUT_CAP) in quiz, quiz
    assert report.run_dir is not None
    assert not list(report.run_dir.rglob("hole-*.bin"))


# --- finding 4: sparse files a scoring program leaves in its scores folder ------------------

SCORES_SPARSE_FILES = 8
SCORES_SPARSE_BYTES = 64 * MIB
SPARSE_SCORE_PY = (
    SCORE_JSON
    + f"""\
for index in range({SCORES_SPARSE_FILES}):
    with open(output / f"hole-{{index}}.bin", "wb") as hole:
        hole.truncate({SCORES_SPARSE_BYTES})
"""
)


@pytest.mark.sandbox
@pytest.mark.slow
def test_sparse_files_in_a_scores_folder_are_not_collected_past_scores_bytes(
    shared_dir: Path, settings: Settings, host_tmp: Path
) -> None:
    bundle = make_code_bundle(shared_dir / "bundle", score_py=SPARSE_SCORE_PY)
    challenge = _imported(bundle, shared_dir / "challenge", _small_scores)
    with Peaks([settings.work_root, host_tmp]) as peaks:
        report = run_entry(RunRequest(code_zip(shared_dir), str(challenge), keep=True), settings)
    grown = {"disk": peaks.disk_growth, "shmem": peaks.shmem_growth}
    assert max(grown.values()) < SCORES_CAP + MARGIN, grown
    assert report.status is RunStatus.FAILED, report.to_json()
    assert report.failure is Failure.SCORER
    assert report.run_dir is not None
    said = (report.run_dir / "scoring-alpha-task.log").read_text()
    assert "hole-" in said and str(SCORES_CAP) in said, said


# --- finding 5: a scoring program replacing its scores folder -------------------------------


def _host_scores(shared_dir: Path) -> Path:
    """A host folder holding a scores.json the host must never take."""
    folder = shared_dir / "host-secrets"
    (folder / "output").mkdir(parents=True)
    scores = json.dumps({"accuracy": HOST_SCORE, "error": 1 - HOST_SCORE})
    for place in (folder, folder / "output"):
        (place / "scores.json").write_text(scores)
        (place / "detailed_results.html").write_text("<p>HOST-SECRET-PAGE</p>")
    return folder


def _planting(body: str) -> str:
    """A scoring program that scores as usual, then runs ``body`` (``output``: its folder)."""
    return SCORE_JSON + "import os\n" + body


def _deeper_scores(data: dict[str, object]) -> None:
    scorer = _scorer(data)
    mounts = scorer["mounts"]
    assert isinstance(mounts, dict)
    mounts["scores"] = "/app/scoring/output"
    command = scorer["command"]
    assert isinstance(command, list)
    scorer["command"] = [*command[:-1], "/app/scoring/output"]


VARIANTS = {
    "folder-link": (
        "os.rename(output, '/app/gone')\nos.symlink('{secrets}', output)\n",
        lambda data: None,
        "symbolic link",
    ),
    "intermediate-link": (
        "os.rename('/app/scoring', '/app/gone')\nos.symlink('{secrets}', '/app/scoring')\n",
        _deeper_scores,
        "symbolic link",
    ),
    "other-folder": (
        "os.rename(output, '/app/gone')\nos.mkdir(output)\n"
        "(output / 'scores.json').write_text('{{\"accuracy\": 0.777, \"error\": 0.223}}')\n",
        lambda data: None,
        "replaced",
    ),
    "scores-link": (
        "os.unlink(output / 'scores.json')\n"
        "os.symlink('{secrets}/scores.json', output / 'scores.json')\n",
        lambda data: None,
        "link",
    ),
    "scores-fifo": (
        "os.unlink(output / 'scores.json')\nos.mkfifo(output / 'scores.json')\n",
        lambda data: None,
        "not a regular file",
    ),
}


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_scores_folder_replaced_by_the_program_fails_as_scorer_reading_no_host_file(
    shared_dir: Path, settings: Settings, variant: str
) -> None:
    secrets = _host_scores(shared_dir)
    body, change, found = VARIANTS[variant]
    bundle = make_code_bundle(
        shared_dir / "bundle", score_py=_planting(body.format(secrets=secrets))
    )
    challenge = _imported(bundle, shared_dir / "challenge", change)
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge), keep=True), settings)
    assert report.status is RunStatus.FAILED, report.to_json()
    assert report.failure is Failure.SCORER
    assert str(HOST_SCORE) not in json.dumps(report.to_json())
    assert report.run_dir is not None
    said = (report.run_dir / "scoring-alpha-task.log").read_text()
    assert found in said, said
    assert "HOST-SECRET-PAGE" not in "".join(
        path.read_text(errors="replace") for path in report.run_dir.rglob("*") if path.is_file()
    )


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_results_page_planted_as_a_link_is_not_kept(shared_dir: Path, settings: Settings) -> None:
    secrets = _host_scores(shared_dir)
    body = (
        "os.unlink(output / 'detailed_results.html')\n"
        f"os.symlink('{secrets}/detailed_results.html', output / 'detailed_results.html')\n"
    )
    bundle = make_code_bundle(shared_dir / "bundle", score_py=_planting(body))
    challenge = _imported(bundle, shared_dir / "challenge", lambda data: None)
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge), keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.run_dir is not None
    kept = "".join(
        path.read_text(errors="replace") for path in report.run_dir.rglob("*") if path.is_file()
    )
    assert "HOST-SECRET-PAGE" not in kept


# --- the command protocol: several output files of one case, each within the cap -----------


@pytest.mark.sandbox
def test_organ_files_of_one_volume_are_bounded_together_by_the_output_cap(
    shared_dir: Path, settings: Settings
) -> None:
    """Two sparse files of 6 MiB each in an output folder capped at 8 MiB: neither is copied."""
    challenge = make_command_challenge(shared_dir / "challenge")
    body = "".join(f'truncate -s 6M "$out/${{case}}_{task}_t_1.nii.gz"\n' for task in IDS)
    entry = make_command_entry(shared_dir / "entry", body)
    report = run_entry(RunRequest(entry, str(challenge), keep=True), settings)
    quiz = str(_stages(report)["quiz"]["message"])
    assert f"_{IDS[1]}_t_1.nii.gz" in quiz and str(OUTPUT_CAP) in quiz, quiz
    assert report.run_dir is not None
    assert not list((report.run_dir / "outputs").rglob("*_t_1.nii.gz"))
    assert not list((report.run_dir / "outputs").rglob("5*.nii.gz"))


# --- finding 2 through `proctor serve` ------------------------------------------------------


@pytest.fixture
def service(tmp_path: Path, shared_dir: Path) -> Iterator[Service]:
    (shared_dir / "tmp").mkdir()
    env = dict(
        os.environ, PROCTOR_DATA=str(tmp_path / "data"), PROCTOR_ALLOW_HOST_ENVIRONMENT="1",
        PROCTOR_WORK_ROOT=str(shared_dir / "work"), TMPDIR=str(shared_dir / "tmp"),
    )  # fmt: skip
    for name in ("PROCTOR_DATABASE_URL", "PROCTOR_TOKEN"):
        env.pop(name, None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"])):
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    yield svc
    svc.stop()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_served_submission_leaving_sparse_files_fails_without_filling_the_host(
    service: Service, tmp_path: Path, shared_dir: Path
) -> None:
    """The server's data, run folders and temporary files: the disk the host would fill."""
    bundle = make_code_bundle(tmp_path / "bundle", public_data=True)
    challenge = _imported(bundle, tmp_path / "challenge", _small_output)
    installed = service.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    upload = code_zip(tmp_path / "upload", SPARSE_MODEL_PY)
    with Peaks([service.data, shared_dir]) as peaks:
        done = service.cli("submit", str(upload), "-c", "toy-code-challenge", "--json", user="bob")
    grown = {"disk": peaks.disk_growth, "shmem": peaks.shmem_growth}
    assert max(grown.values()) < OUTPUT_CAP + MARGIN, grown
    assert done.returncode == 1, done.stderr  # a failed submission
    report = json.loads(done.stdout)
    assert report["status"] == "failed", report
    assert report["failure"] == "entry", report
    stages = {stage["name"]: stage for stage in report["stages"]}
    assert "hole-0.bin" in stages["quiz"]["message"], stages["quiz"]
    assert str(OUTPUT_CAP) in stages["quiz"]["message"], stages["quiz"]


# --- the host's side alone: descriptors and budgets -----------------------------------------


def test_a_folder_below_is_opened_refusing_a_link_or_a_file_at_every_component(
    tmp_path: Path,
) -> None:
    (tmp_path / "root/a/b/c").mkdir(parents=True)
    (tmp_path / "elsewhere/b/c").mkdir(parents=True)
    fd = trees.open_folder_below(tmp_path / "root", "a/b/c")
    os.close(fd)
    (tmp_path / "root/a").rename(tmp_path / "root/gone")
    (tmp_path / "root/a").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(trees.ReplacedError) as caught:
        trees.open_folder_below(tmp_path / "root", "a/b/c")
    assert caught.value.where == "a"
    assert caught.value.found == f"a symbolic link to {str(tmp_path / 'elsewhere')!r}"
    (tmp_path / "root/a").unlink()
    (tmp_path / "root/a").mkdir()
    (tmp_path / "root/a/b").write_text("")
    with pytest.raises(trees.ReplacedError) as caught:
        trees.open_folder_below(tmp_path / "root", "a/b/c")
    assert (caught.value.where, caught.value.found) == ("a/b", "a regular file")


def test_a_plain_copy_stops_at_its_budget_whatever_was_measured(tmp_path: Path) -> None:
    """Each file is copied at most as large as it is when opened, within what is left."""
    source = tmp_path / "source"
    (source / "sub").mkdir(parents=True)
    (source / "a.txt").write_bytes(b"a" * 6)
    with (source / "sub/hole.bin").open("wb") as hole:
        hole.truncate(1024**3)
    os.mkfifo(source / "fifo")
    (source / "link").symlink_to("/etc/passwd")
    bounds = trees.PlainCopyBounds(10, 100, 64, 1024)
    problem = trees.copy_plain(source, tmp_path / "copy", bounds)
    assert problem is not None and problem.startswith("sub/hole.bin: 1073741824 bytes"), problem
    assert "past the cap of 10 bytes" in problem
    assert sorted(p.name for p in (tmp_path / "copy").rglob("*")) == ["a.txt", "sub"]
    assert trees.past_caps(source, max_bytes=10, max_entries=100) is not None
    assert trees.past_caps(source, max_bytes=2 * 1024**3, max_entries=3) == (
        "sub: more than 3 files and folders, past the cap"
    )
