"""Entries that bring their own image, scored through `proctor run` in the real sandbox.

The image is built here: the reference environment exported as a base (its OCI layer), plus a
layer written with ``tarfile`` (a COPY) holding the entry's tool under a top-level folder of
its own, saved as ``docker save`` does.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from image_craft import Image, Layer, base_of, docker_archive, layer_tar, member
from proctor_cli import run_json
from reference_environment import declare_reference_environment
from toy_challenge import GOOD_NEXT, make_challenge, make_entry

from proctor.environments.store import BuiltEnvironment
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.environment, pytest.mark.slow]

SETUP = """#!/bin/sh
set -e
test "$TOY_MARK" = from-image
test "$HOME" != /root
python3 -c 'import numpy'
echo "the image's tool: $(command -v toy-answer)"
"""
NEXT = '#!/bin/sh\nexec toy-answer "$1"\n'


def with_entry_images(challenge: Path, **entry_images: Any) -> Path:
    """``challenge`` declaring the reference environment with ``entry_images``."""
    return declare_reference_environment(challenge, entry_images=entry_images)


@pytest.fixture(scope="module")
def toy_image(reference_env: BuiltEnvironment, tmp_path_factory: pytest.TempPathFactory) -> Image:
    """The reference environment plus a layer: ``/toy/answer.sh`` on the image's PATH."""
    base = base_of(reference_env, tmp_path_factory.mktemp("base"))
    copy = layer_tar([
        member("toy"),
        member("toy/bin"),
        member("toy/bin/toy-answer", GOOD_NEXT.replace("$PROCTOR_DATA", "$PROCTOR_DATA").encode(),
               mode=0o755),
        member("toy/bin/su-like", b"#!/bin/sh\n", mode=0o4755),
        member("toy/escape", type=tarfile.SYMTYPE, linkname=str(reference_env.folder.parent)),
        member("toy/up", type=tarfile.SYMTYPE, linkname="../../../../../../../.."),
    ])  # fmt: skip
    env = [*base.env, "PATH=/toy/bin:/usr/local/bin:/usr/bin:/bin", "TOY_MARK=from-image",
           "HOME=/root"]  # fmt: skip
    return Image([*base.layers, Layer.of(copy)], env=env, workdir="/toy", user="root",
                 labels=base.labels)  # fmt: skip


@pytest.mark.timeout(900)  # the reference environment exported once, then imported
def test_an_entry_image_is_scored_through_proctor_run(
    tmp_path: Path, shared_dir: Path, toy_image: Image
) -> None:
    challenge = with_entry_images(make_challenge(tmp_path / "challenge"), allow=True)
    entry = make_entry(tmp_path / "entry", setup_sh=SETUP, next_sh=NEXT)
    docker_archive(toy_image, entry / "image.tar")
    report = run_json(entry, challenge, shared_dir / "runs", timeout=1800)
    assert report["status"] == "scored", report
    environment = report["environment"]
    assert environment["name"] == "entry-image"
    assert environment["digest"] == toy_image.digest
    assert environment["base"] == "proctor/proctor-reference"


@pytest.mark.timeout(900)
def test_the_run_keeps_what_ran_and_reuses_the_stored_image(
    tmp_path: Path, shared_dir: Path, toy_image: Image
) -> None:
    challenge = with_entry_images(make_challenge(tmp_path / "challenge"), allow=True)
    setup = SETUP + (
        "test ! -u /toy/bin/su-like\ntest $(id -u) != 0\n"
        "test ! -e /toy/escape/entry-images\ntest ! -e /toy/up/var\ntest -d /toy/up/toy\n"
    )
    entry = make_entry(tmp_path / "entry", setup_sh=setup, next_sh=NEXT)
    docker_archive(toy_image, entry / "image.tar")
    settings = Settings(work_root=shared_dir / "runs")
    report = run_entry(RunRequest(entry, str(challenge), keep=True), settings)
    assert report.status.value == "scored", report.to_json()
    assert report.run_dir is not None
    record = json.loads((report.run_dir / "entry-image.json").read_text())
    assert record["digest"] == toy_image.digest
    assert record["base"] == "proctor/proctor-reference"
    assert "python3" in record["packages"] and "numpy" in record["python"]
    assert (report.run_dir / "entry-image" / "image.tar").is_file()  # not in the entry's home


def test_an_image_where_none_is_allowed_fails_the_entry_at_prep(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = with_entry_images(make_challenge(tmp_path / "challenge"))
    entry = make_entry(tmp_path / "entry")
    docker_archive(Image([Layer.of(layer_tar([member("usr")]))]), entry / "image.tar")
    report = run_entry(RunRequest(entry, str(challenge)), Settings(work_root=shared_dir / "runs"))
    task = next(iter(report.tasks.values()))
    assert report.status.value == "failed" and str(task.failure) == "entry"
    assert "does not run entries in their own image" in task.stages[0].message


def test_a_hostile_image_fails_the_entry_at_prep(
    tmp_path: Path, shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    challenge = with_entry_images(make_challenge(tmp_path / "challenge"), allow=True)
    entry = make_entry(tmp_path / "entry")
    device = member("dev/mem", type=tarfile.CHRTYPE, devmajor=1, devminor=1)
    docker_archive(Image([Layer.of(layer_tar([member("usr"), device]))]), entry / "image.tar")
    report = run_entry(RunRequest(entry, str(challenge)), Settings(work_root=shared_dir / "runs"))
    task = next(iter(report.tasks.values()))
    assert report.status.value == "failed" and str(task.failure) == "entry"
    assert "'dev/mem' is a character device" in task.stages[0].message
