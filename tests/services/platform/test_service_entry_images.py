"""An entry bringing its own image, through a real `proctor serve`, its worker and the sandbox.

The physionet2018 baseline is submitted with ``image.tar``: the reference environment saved as
``docker save`` does (built here from its exported OCI layer, no registry), so the baseline's
libraries come from the entry's image, not from the challenge's environment.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_service import Service, archive
from image_craft import Image, base_of, docker_archive
from reference_environment import declare_reference_environment
from toy_challenge import make_challenge, make_entry

from proctor.challenges import bundled_root
from proctor.environments.store import BuiltEnvironment

pytestmark = [pytest.mark.sandbox, pytest.mark.environment, pytest.mark.slow]
BASELINE = bundled_root() / "physionet2018" / "baseline"


def _challenge_with_entry_images(tmp: Path) -> Path:
    root = tmp / "bundles"
    shutil.copytree(bundled_root() / "physionet2018", root / "physionet2018",
                    ignore=shutil.ignore_patterns("baseline", "__pycache__"))  # fmt: skip
    shutil.copytree(bundled_root() / "environment", root / "environment")
    yaml = root / "physionet2018" / "challenge.yaml"
    text = yaml.read_text()
    lock = "  lock: ../environment/environment.lock\n"
    assert lock in text
    yaml.write_text(text.replace(lock, lock + "  entry_images: {allow: true}\n", 1))
    return root / "physionet2018"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"),
               PROCTOR_UPLOAD_BYTES=str(2 * 1024**3))  # fmt: skip
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"])):
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    challenge = _challenge_with_entry_images(tmp_path)
    installed = svc.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    yield svc
    svc.stop()


@pytest.mark.very_slow
@pytest.mark.timeout(1500)  # the reference environment exported, uploaded and imported
def test_an_entry_image_is_scored_through_proctor_serve(
    service: Service, tmp_path: Path, reference_env: BuiltEnvironment
) -> None:
    base = base_of(reference_env, tmp_path)
    image = Image(base.layers, env=[*base.env, "ENTRY_MARK=1"], labels=base.labels)
    entry = tmp_path / "entry"
    shutil.copytree(BASELINE, entry)
    docker_archive(image, entry / "image.tar")
    upload = tmp_path / "entry.tar"
    with tarfile.open(upload, "w") as tar:
        tar.add(entry, arcname="entry")
    queued = service.cli("submit", str(upload), "-c", "physionet2018", "--no-wait", "--json",
                         user="bob")  # fmt: skip
    assert queued.returncode == 0, queued.stderr
    sid = json.loads(queued.stdout)["submission"]
    deadline = time.time() + 1200
    status: dict[str, object] = {}
    while time.time() < deadline:
        status = json.loads(service.cli("status", sid, "--json", user="bob").stdout)
        if status["status"] not in ("queued", "running"):
            break
        time.sleep(3)
    assert status["status"] == "scored", status
    text = json.dumps(status)
    assert "entry-image" in text and image.digest in text, text


def _wait(service: Service, sid: str, user: str, seconds: float) -> dict[str, object]:
    deadline = time.time() + seconds
    status: dict[str, object] = {}
    while time.time() < deadline:
        status = json.loads(service.cli("status", sid, "--json", user=user).stdout)
        if status["status"] not in ("queued", "running"):
            break
        time.sleep(2)
    return status


@pytest.mark.timeout(600)
def test_a_dockerfile_entry_is_built_and_scored_through_proctor_serve(
    service: Service, tmp_path: Path, reference_env: BuiltEnvironment
) -> None:
    images = {"allow": True, "build": {"wall_s": 120.0, "memory_bytes": 1024**3,
              "disk_bytes": 256 * 1024**2}}  # fmt: skip
    challenge = declare_reference_environment(make_challenge(tmp_path / "toy"), entry_images=images)
    installed = service.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    setup = '#!/bin/sh\nset -e\ntest "$(cat /toy/built-by-run)" = ran\n'
    dockerfile = (
        "FROM proctor/proctor-reference\nCOPY . /toy\n"
        f"RUN echo ran > /toy/built-by-run  # {uuid.uuid4().hex}\n"
    )
    entry = make_entry(tmp_path / "entry", setup_sh=setup, extra={"Dockerfile": dockerfile})
    queued = service.cli("submit", str(archive(entry, tmp_path / "entry.tar.gz")), "-c", "toy",
                         "--no-wait", "--json", user="bob")  # fmt: skip
    assert queued.returncode == 0, queued.stderr
    status = _wait(service, json.loads(queued.stdout)["submission"], "bob", 500)
    assert status["status"] == "scored", status
    text = json.dumps(status, ensure_ascii=False)
    assert "entry-image" in text and "proctor/proctor-reference" in text, text
    assert "built from the Dockerfile" in text, text
