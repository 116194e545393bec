"""Entries that bring a ``Dockerfile``: built at prep in the real sandbox, then run in the image.

The toy records challenge declares the reference environment (the smallest bundled one) and
offers it as ``python:3.10.1-buster`` (as physionet2026 offers its own). Every entry holds a
fresh nonce, so its first build is never a cache hit left by an earlier test session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
import yaml
from paths import DATA
from proctor_cli import proctor, run_json
from reference_environment import declare_reference_environment
from toy_challenge import make_challenge, make_entry

from proctor.challenges.physionet2026 import CHALLENGE_DIR
from proctor.environments.digests import canonical_tar
from proctor.environments.entry_images import list_images, remove_image
from proctor.environments.oci import export_oci
from proctor.environments.store import ROOTFS, BuiltEnvironment, EnvironmentStore, Manifest
from proctor.pipeline.progress import StageKey
from proctor.pipeline.report import EvaluationReport, StageReport
from proctor.services.local.environments import import_environment, prune_environments
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.platform.image_facts import facts
from proctor.services.platform.run_files import KeptFile
from proctor.settings import Settings
from proctor.store.runfolder import ENTRY_IMAGE_RECORD

pytestmark = [pytest.mark.sandbox, pytest.mark.environment, pytest.mark.slow]
ALIAS = "python:3.10.1-buster"
BUILD = {"wall_s": 120.0, "memory_bytes": 1024**3, "disk_bytes": 256 * 1024**2}

SETUP = """#!/bin/sh
set -e
test "$TOY_MARK" = from-build
test "$(cat /toy/built-by-run)" = ran
echo "setup sees the image's /toy"
"""
DOCKERFILE = f"""FROM {ALIAS}
RUN mkdir /toy
COPY ./ /toy
WORKDIR /toy
RUN echo ran > /toy/built-by-run && echo the-run-step-printed-this
ENV TOY_MARK=from-build
"""


def challenge_building_images(root: Path, **entry_images: object) -> Path:
    """The toy challenge, its entries' Dockerfiles built on the reference environment."""
    settings = {"allow": True, "build": BUILD, "bases": {ALIAS: "proctor-reference"}}
    return declare_reference_environment(
        make_challenge(root), entry_images={**settings, **entry_images}
    )


def dockerfile_entry(root: Path, dockerfile: str = DOCKERFILE, **extra: str) -> Path:
    """A toy entry with ``dockerfile`` and a nonce (its context never built before)."""
    files = {"Dockerfile": dockerfile, "nonce.txt": uuid.uuid4().hex, **extra}
    return make_entry(root, setup_sh=SETUP, extra=files)


def prep(report: EvaluationReport) -> StageReport:
    task = next(iter(report.tasks.values()))
    return task.stages[0]


def run(entry: Path, challenge: Path, shared_dir: Path) -> EvaluationReport:
    settings = Settings(work_root=shared_dir / "runs")
    return run_entry(RunRequest(entry, str(challenge), keep=True), settings)


@pytest.mark.timeout(900)
def test_a_dockerfile_entry_is_built_and_scored_through_proctor_run(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    entry = dockerfile_entry(tmp_path / "entry")
    report = run_json(entry, challenge, shared_dir / "runs", timeout=900)
    assert report["status"] == "scored", report
    environment = report["environment"]
    assert environment["name"] == "entry-image"
    assert environment["digest"].startswith("sha256:")
    assert environment["base"] == f"{ALIAS} → proctor/proctor-reference"
    message = report["stages"][0]["message"]
    assert "built from the Dockerfile" in message and "the-run-step-printed-this" in message


@pytest.mark.timeout(900)
def test_the_same_context_again_reuses_its_image_and_the_run_keeps_what_was_built(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    entry = dockerfile_entry(tmp_path / "entry")
    first = run(entry, challenge, shared_dir)
    assert first.status.value == "scored", first.to_json()
    assert "image sha256:" in prep(first).message and " built from" in prep(first).message
    assert first.run_dir is not None
    kept = first.run_dir / "entry-image"
    assert (kept / "Dockerfile").read_text() == DOCKERFILE
    log = (kept / "build.log").read_text()
    assert "STEP 5/6: RUN echo ran" in log and "the-run-step-printed-this" in log
    record = json.loads((first.run_dir / "entry-image.json").read_text())
    assert record["base"] == f"{ALIAS} → proctor/proctor-reference"

    again = run(entry, challenge, shared_dir)
    assert again.status.value == "scored", again.to_json()
    assert "reused from an earlier build" in prep(again).message
    assert again.environment is not None and first.environment is not None
    assert again.environment.digest == first.environment.digest
    assert again.run_dir is not None
    assert (again.run_dir / "entry-image" / "build.log").read_text() == log  # no step ran


@pytest.mark.timeout(900)
def test_two_tasks_of_one_submission_build_the_dockerfile_once(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    spec = yaml.safe_load((challenge / "challenge.yaml").read_text())
    spec["tasks"].append({**spec["tasks"][0], "name": "again"})
    spec["phases"][0]["tasks"] = ["arousal", "again"]
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(spec))
    report = run(dockerfile_entry(tmp_path / "entry"), challenge, shared_dir)
    assert report.status.value == "scored", report.to_json()
    messages = sorted(task.stages[0].message for task in report.tasks.values())
    assert len(messages) == 2
    assert sum(" built from the Dockerfile" in m for m in messages) == 1, messages  # one waited
    assert sum("reused from an earlier build" in m for m in messages) == 1, messages


@pytest.mark.timeout(900)
def test_an_alias_may_name_an_environment_no_task_runs_in(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    # The task runs in proctor-reference; the alias names "spare", the challenge's own
    # environment that no task runs in (built on first use: here the same declaration as the
    # reference, so a cache hit of the shared store, not a new build).
    challenge = challenge_building_images(tmp_path / "challenge", bases={ALIAS: "spare"})
    spec = yaml.safe_load((challenge / "challenge.yaml").read_text())
    spec["tasks"][0]["environment"] = spec["environment"]
    spec["environment"] = {**spec["environment"], "name": "spare", "entry_images": {}}
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(spec))
    report = run(dockerfile_entry(tmp_path / "entry"), challenge, shared_dir)
    assert report.status.value == "scored", report.to_json()
    assert report.environment is not None
    assert report.environment.base == f"{ALIAS} → proctor/spare"


SMALL_TOOLS = ("/bin/sh", "/usr/bin/cat", "/usr/bin/cp", "/usr/bin/cut", "/usr/bin/dirname",
               "/usr/bin/mkdir")  # fmt: skip
"""What the toy entry and its Dockerfile's steps run (with their libraries): a few MiB."""


def small_image(folder: Path) -> Path:
    """An environment of a few host tools, exported as ``proctor env export`` writes one."""
    tree = folder / "built" / ROOTFS
    for name in ("proc", "dev", "tmp", "sys", "run", "etc", "home"):
        (tree / name).mkdir(parents=True)
    ldd = subprocess.run(["ldd", *SMALL_TOOLS], capture_output=True, text=True, check=True)
    needed = {word for word in ldd.stdout.split() if word.startswith("/") and word[-1] != ":"}
    for source in [*SMALL_TOOLS, *needed]:
        target = tree / Path(os.path.realpath(source)).relative_to("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(source), target)
        if source != os.path.realpath(source):
            (tree / source.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (tree / source.lstrip("/")).symlink_to(os.path.realpath(source))
    digest, _ = canonical_tar(tree)
    manifest = Manifest(name="small-tools", digest=digest, declaration_digest=uuid.uuid4().hex,
                        suite="bookworm", packages={}, wheels={})  # fmt: skip
    archive = folder / "small-tools.tar"
    export_oci(BuiltEnvironment(tree.parent, manifest), archive)
    return archive


@pytest.mark.timeout(900)
def test_an_image_the_organizer_imported_is_offered_under_its_name(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    store = tmp_path / "store"  # the shared store's reference environment, and the import
    store.mkdir()
    (store / reference_env.folder.name).symlink_to(reference_env.folder)
    settings = Settings(work_root=shared_dir / "runs", env_root=store)
    imported = import_environment(small_image(tmp_path / "small"), settings)  # proctor env import
    assert imported.manifest.name == "small-tools" and imported.manifest.source == "import"
    challenge = challenge_building_images(tmp_path / "challenge", bases={})
    entry = dockerfile_entry(tmp_path / "entry", DOCKERFILE.replace(ALIAS, "small-tools"))
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert report.status.value == "scored", report.to_json()
    assert report.environment is not None
    assert report.environment.base == "small-tools (imported)"
    missing = dockerfile_entry(tmp_path / "other", "FROM elsewhere:1\nRUN true\n")
    refused = run_entry(RunRequest(missing, str(challenge)), settings)
    assert "use one of: proctor/proctor-reference, small-tools" in prep(refused).message


STORED_DOCKERFILE = DOCKERFILE.replace(ALIAS, "small-tools") + (
    "COPY status /var/lib/dpkg/status\n"
    "COPY METADATA /usr/lib/python3/dist-packages/toy-1.0.dist-info/METADATA\n"
)


def store_folders(store: Path) -> tuple[list[list[str]], list[list[str]]]:
    """What each entry image and each build holds in ``store`` (file names, sorted)."""
    images = sorted((store / "entry-images").glob("sha256-*"))
    builds = sorted(
        p for p in (store / "entry-builds").iterdir() if p.is_dir() and p.name != "bases"
    )
    return [sorted(os.listdir(p)) for p in images], [sorted(os.listdir(p)) for p in builds]


@pytest.mark.timeout(900)
def test_the_store_keeps_a_built_image_packed_once_and_prune_clears_it(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    store = tmp_path / "store"  # a store of its own, to read its folders whole
    store.mkdir()
    (store / reference_env.folder.name).symlink_to(reference_env.folder)
    settings = Settings(work_root=shared_dir / "runs", env_root=store)
    imported = import_environment(small_image(tmp_path / "small"), settings)
    challenge = challenge_building_images(tmp_path / "challenge", bases={})
    status = "Package: toy-tool\nStatus: install ok installed\nVersion: 2.1\n"
    metadata = "Metadata-Version: 2.1\nName: toy-lib\nVersion: 1.0\n"
    entry = dockerfile_entry(
        tmp_path / "entry", STORED_DOCKERFILE, status=status, METADATA=metadata
    )
    first = run_entry(RunRequest(entry, str(challenge), keep=True), settings)
    assert first.status.value == "scored", first.to_json()
    assert " built from the Dockerfile" in prep(first).message
    # the erofs image and the records; neither the tree nor the built archive stays
    images, builds = store_folders(store)
    assert images == [["image.erofs", "image.json"]]
    assert builds == [["build.log", "image.json", "imported.json"]]
    assert first.environment is not None and first.run_dir is not None
    (key,) = [p for p in (store / "entry-builds").iterdir() if p.is_dir() and p.name != "bases"]
    assert json.loads((key / "imported.json").read_text()) == {"image": first.environment.digest}
    # what the console and `proctor logs` show: the packages, read at import
    data = (first.run_dir / ENTRY_IMAGE_RECORD).read_bytes()
    shown = facts({ENTRY_IMAGE_RECORD: KeptFile(len(data), data)})
    assert shown is not None and shown.digest == first.environment.digest
    assert shown.debian == {"toy-tool": "2.1"} and shown.python == {"toy-lib": "1.0"}

    again = run_entry(RunRequest(entry, str(challenge)), settings)  # the same context: a hit
    assert again.status.value == "scored", again.to_json()
    assert "reused from an earlier build" in prep(again).message
    assert again.environment is not None and again.environment.digest == first.environment.digest
    assert store_folders(store) == (images, builds)

    (image,) = list_images(EnvironmentStore(store))  # the image gone alone: built again
    remove_image(image)
    rebuilt = run_entry(RunRequest(entry, str(challenge)), settings)
    assert rebuilt.status.value == "scored", rebuilt.to_json()
    assert " built from the Dockerfile" in prep(rebuilt).message
    assert store_folders(store) == (images, builds)  # a new image (its files' times differ)

    keep = {reference_env.manifest.declaration_digest, imported.manifest.declaration_digest}
    removed = prune_environments(settings, keep)  # proctor env prune
    assert removed and not list((store / "entry-images").iterdir())
    assert not list((store / "entry-builds").iterdir())
    assert (store / reference_env.folder.name).is_symlink() and imported.folder.is_dir()


def test_a_base_not_offered_fails_prep_with_the_list_of_bases(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    entry = dockerfile_entry(tmp_path / "entry", "FROM ubuntu:24.04\nRUN true\n")
    report = run(entry, challenge, shared_dir)
    task = next(iter(report.tasks.values()))
    assert report.status.value == "failed" and str(task.failure) == "entry"
    message = prep(report).message
    assert "FROM ubuntu:24.04 is not a base this challenge offers" in message
    assert f"use one of: proctor/proctor-reference, {ALIAS}" in message


def test_a_failed_run_step_shows_its_log_tail_and_why_pip_found_nothing(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    dockerfile = f"FROM {ALIAS}\nCOPY . /toy\nRUN echo before-the-failure && pip install -r /toy/requirements.txt\n"  # noqa: E501
    entry = dockerfile_entry(tmp_path / "entry", dockerfile, **{"requirements.txt": "left-pad\n"})
    report = run(entry, challenge, shared_dir)
    task = next(iter(report.tasks.values()))
    assert report.status.value == "failed" and str(task.failure) == "entry"
    message = prep(report).message
    assert "Dockerfile could not be built: Dockerfile, line 3 (RUN)" in message
    assert "offers no wheels for requirements.txt" in message
    assert "--- build log" in message and "before-the-failure" in message
    assert report.run_dir is not None
    assert "before-the-failure" in (report.run_dir / "entry-image" / "build.log").read_text()


def test_a_dockerfile_where_images_are_not_allowed_is_refused_saying_what_to_do(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = declare_reference_environment(make_challenge(tmp_path / "challenge"))
    entry = dockerfile_entry(tmp_path / "entry")
    report = run(entry, challenge, shared_dir)
    task = next(iter(report.tasks.values()))
    assert report.status.value == "failed" and str(task.failure) == "entry"
    assert "does not build entries' Dockerfiles: remove the Dockerfile" in prep(report).message


def physionet2026_without_images(root: Path) -> Path:
    """A copy of physionet2026 whose environment, the bundled one written out, has no images."""
    shutil.copytree(CHALLENGE_DIR, root, ignore=shutil.ignore_patterns("baseline", "__pycache__"))
    spec = yaml.safe_load((root / "challenge.yaml").read_text())
    assert spec["environment"] == "physionet2026"
    bundled = CHALLENGE_DIR.parent / "environment-physionet2026"
    declaration = yaml.safe_load((bundled / "environment.yaml").read_text())
    assert declaration.pop("entry_images")["bases"] == {ALIAS: "physionet2026"}
    python = declaration["python"]
    python.update({key: str(bundled / python[key]) for key in ("requirements", "lock")})
    declaration["lock"] = str(bundled / declaration["lock"])
    spec["environment"] = declaration
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


@pytest.mark.timeout(1200)
def test_a_python_example_2026_style_entry_is_built_trained_and_scored(
    tmp_path: Path, shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    entry = shutil.copytree(DATA / "entries" / "physionet2026_dockerfile_style", tmp_path / "entry")
    (entry / "nonce.txt").write_text(uuid.uuid4().hex)
    report = run_json(entry, "physionet2026", shared_dir / "runs", timeout=1200)
    assert report["status"] == "scored", report
    assert report["environment"]["name"] == "entry-image"
    assert report["environment"]["base"] == f"{ALIAS} → proctor/physionet2026"
    prep_message = report["stages"][0]["message"]
    assert "built from the Dockerfile" in prep_message
    assert "Requirement already satisfied: numpy==2.0.2" in prep_message  # nothing fetched
    assert "the image says: built by the Dockerfile" in prep_message  # training ran in it
    stages = [(stage["name"], stage["status"]) for stage in report["stages"]]
    assert stages == [(name, "passed") for name in ("prep", "quiz", "exam", "rerun", "score")], (
        stages
    )
    assert report["scores"]["test"]["sessions_without_output"] == 0


def test_a_dockerfile_not_on_physionet2026_s_base_fails_prep_naming_the_base(
    tmp_path: Path, shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    entry = shutil.copytree(CHALLENGE_DIR / "trivial", tmp_path / "entry")
    (entry / "Dockerfile").write_text("FROM nowhere:1\nRUN exit 1\n")
    report = run_entry(RunRequest(entry, "physionet2026"), Settings(work_root=shared_dir / "runs"))
    assert report.status.value == "failed", report.to_json()
    assert ALIAS in prep(report).message, prep(report).message


def test_physionet2026_without_images_leaves_an_entry_s_dockerfile_unbuilt_and_says_so(
    tmp_path: Path, shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    challenge = physionet2026_without_images(tmp_path / "physionet2026")
    entry = shutil.copytree(CHALLENGE_DIR / "trivial", tmp_path / "entry")
    (entry / "Dockerfile").write_text("FROM nowhere:1\nRUN exit 1\n")  # would fail if built
    settings = Settings(work_root=shared_dir / "runs")
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert report.status.value == "scored", report.to_json()
    assert "the Dockerfile is not built" in prep(report).message
    assert report.environment is not None and report.environment.name == "physionet2026"


STEPS = [
    f"STEP 1/6: FROM {ALIAS}",
    "STEP 2/6: RUN mkdir /toy",
    "STEP 3/6: COPY ./ /toy",
    "STEP 4/6: WORKDIR /toy",
    "STEP 5/6: RUN echo ran > /toy/built-by-run && echo the-run-step-printed-this",
    "STEP 6/6: ENV TOY_MARK=from-build",
]


class Recorder:
    """A progress listener keeping every event, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []
        self.lock = threading.Lock()

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        with self.lock:
            self.events.append(("started", str(key.stage), total_cases))

    def case_finished(self, key: StageKey, ok: bool) -> None:
        with self.lock:
            self.events.append(("case", str(key.stage), ok))

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        with self.lock:
            self.events.append(("step", str(key.stage), done, total, text))

    def stage_finished(self, report: StageReport) -> None:
        with self.lock:
            self.events.append(("finished", str(report.stage), str(report.status)))


@pytest.mark.timeout(900)
def test_prep_is_announced_before_the_build_and_its_steps_are_told_in_order(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    entry = dockerfile_entry(tmp_path / "entry")
    settings = Settings(work_root=shared_dir / "runs")
    heard = Recorder()
    report = run_entry(RunRequest(entry, str(challenge)), settings, heard)
    assert report.status.value == "scored", report.to_json()
    events = heard.events
    assert events[0] == ("started", "prep", 0)
    steps = [event for event in events if event[0] == "step"]
    assert [event[4] for event in steps[:-1]] == STEPS
    assert [(event[2], event[3]) for event in steps] == [(n, 6) for n in range(7)]
    last = steps[-1][4]
    assert isinstance(last, str) and last.startswith("image sha256:") and last.endswith(" built")
    prep_done = events.index(("finished", "prep", "passed"))
    assert events[1 : len(steps) + 1] == steps and len(steps) < prep_done  # all inside prep
    assert sum(event[:2] == ("started", "prep") for event in events) == 1
    assert "built from the Dockerfile" in prep(report).message  # the report as before
    assert prep(report).cases.total == 0

    heard_again = Recorder()  # the same files again: no step runs, the reused image is told
    again = run_entry(RunRequest(entry, str(challenge)), settings, heard_again)
    assert again.status.value == "scored", again.to_json()
    steps = [event for event in heard_again.events if event[0] == "step"]
    assert len(steps) == 1 and steps[0][2:4] == (6, 6), steps
    assert "reused" in str(steps[0][4])
    assert heard_again.events[0] == ("started", "prep", 0)


@pytest.mark.timeout(900)
def test_proctor_run_piped_prints_each_build_step_on_a_line_of_its_own(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = challenge_building_images(tmp_path / "challenge")
    entry = dockerfile_entry(tmp_path / "entry")
    done = proctor("run", str(entry), "-c", str(challenge), work_root=shared_dir / "runs",
                   timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    shown = [line for line in lines if line.startswith("prep: STEP ")]
    assert shown == [f"prep: {step}" for step in STEPS], done.stderr
    image = next(i for i, line in enumerate(lines) if line.startswith("prep: image sha256:"))
    passed = next(i for i, line in enumerate(lines) if line.startswith("prep: passed"))
    assert lines.index(shown[-1]) < image < passed
    assert "\x1b" not in done.stderr and "\r" not in done.stderr  # no control characters
