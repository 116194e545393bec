"""What an entry's own image held, read back by the services after a real run in that image.

The toy entry brings ``image.tar``, a slim image cut from the reference environment (its
dpkg status and Python distributions' metadata with a shell and libc); the job runs in it in
the real sandbox with the real job function. The organizer's record, logs and kept files and
the team's own view then show the image's digest, base, size and packages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from image_craft import slim_image
from image_entries import (
    BUILD_LOG,
    DOCKERFILE,
    install_image_toy,
    keep_build_files,
    submit_in_image,
)
from service_seed import Seeded, run_queued, seed, submit
from toy_challenge import make_entry

from proctor.environments.store import BuiltEnvironment
from proctor.errors import NotFoundError
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import image_facts, logs, records
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.environment]


@pytest.fixture
def ran(
    shared_dir: Path,
    reference_env: BuiltEnvironment,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> Iterator[tuple[Seeded, str]]:
    """bob's toy entry scored in its own image, and the submission's id."""
    seeded = seed(shared_dir / "service", upload_bytes=64 * 2**20)
    try:
        install_image_toy(seeded, shared_dir / "bundle")
        sid = submit_in_image(seeded, "bob", shared_dir, reference_env)
        run_queued(seeded, sandbox, sandbox_settings, declared=True)
        yield seeded, sid
    finally:
        seeded.platform.close()


@pytest.mark.timeout(600)
def test_the_record_logs_and_team_see_the_image_an_entry_ran_in(
    ran: tuple[Seeded, str], reference_env: BuiltEnvironment
) -> None:
    seeded, sid = ran
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    bob = authenticate(seeded.platform, seeded.tokens["bob"])
    record = records.submission_record(seeded.platform, olga, sid)
    assert record.status == "scored", record.tasks[0].reason
    (task,) = record.tasks
    image = task.image
    assert image is not None
    assert image.digest == slim_image(reference_env).digest
    assert image.base == "proctor/proctor-reference"
    assert image.tree_bytes and image.tree_bytes > 1_000_000 and image.files
    assert image.debian["python3"] and image.debian["gcc"]  # the environment's own lists
    assert image.python["numpy"] and len(image.python) > 10
    assert task.image_files == ["entry-image.json"]
    assert task.report is not None and task.report["environment"]["digest"] == image.digest
    kept = image_facts.image_file(seeded.platform, olga, sid, task.task, "entry-image.json")
    assert json.loads(kept.data)["digest"] == image.digest
    assert kept.media_type == "application/json"
    (logged,) = logs.submission_logs(seeded.platform, olga, sid).tasks
    assert logged.image == image
    line = image.line()
    assert image.digest in line and "on proctor/proctor-reference" in line
    assert f"{len(image.debian)} Debian, {len(image.python)} Python packages" in line
    own = image_facts.own_images(seeded.platform, bob, sid)
    assert [(t.task, t.image) for t in own.tasks] == [(task.task, image)]


def test_the_dockerfile_and_build_log_are_organizers_downloads(ran: tuple[Seeded, str]) -> None:
    seeded, sid = ran
    keep_build_files(seeded, sid)
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    (task,) = records.submission_record(seeded.platform, olga, sid).tasks
    assert task.image_files == ["entry-image.json", "Dockerfile", "build.log"]
    assert task.image is not None  # the record is read from the same artifact
    for name, text in (("Dockerfile", DOCKERFILE), ("build.log", BUILD_LOG)):
        kept = image_facts.image_file(seeded.platform, olga, sid, task.task, name)
        assert kept.data.decode() == text
        assert kept.filename == f"{sid}-{task.task}-{name}"
        assert kept.media_type.startswith("text/plain")
    with pytest.raises(NotFoundError, match=r"the run keeps entry-image\.json, Dockerfile"):
        image_facts.image_file(seeded.platform, olga, sid, task.task, "image.tar")
    with pytest.raises(NotFoundError, match="no task"):
        image_facts.image_file(seeded.platform, olga, sid, "nope", "Dockerfile")
    for user in ("bob", "alice"):  # the team's own files included: organizers only
        someone = authenticate(seeded.platform, seeded.tokens[user])
        with pytest.raises(NotFoundError):
            image_facts.image_file(seeded.platform, someone, sid, task.task, "Dockerfile")


def test_another_team_does_not_see_the_image(ran: tuple[Seeded, str]) -> None:
    seeded, sid = ran
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    with pytest.raises(NotFoundError):
        image_facts.own_images(seeded.platform, alice, sid)


def test_a_build_that_left_no_image_shows_its_dockerfile_and_log_alone(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings
) -> None:
    seeded = seed(shared_dir / "service")
    try:
        sid = submit(seeded, "bob", make_entry(shared_dir / "entry"))
        run_queued(seeded, sandbox, sandbox_settings)
        keep_build_files(seeded, sid)  # what a failed build keeps: no entry-image.json
        olga = authenticate(seeded.platform, seeded.tokens["olga"])
        (task,) = records.submission_record(seeded.platform, olga, sid).tasks
        assert (task.image, task.image_files) == (None, ["Dockerfile", "build.log"])
        (logged,) = logs.submission_logs(seeded.platform, olga, sid).tasks
        assert logged.image is None
        bob = authenticate(seeded.platform, seeded.tokens["bob"])
        assert image_facts.own_images(seeded.platform, bob, sid).tasks == []
    finally:
        seeded.platform.close()
