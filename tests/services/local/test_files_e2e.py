"""A participant of a served challenge gets its kit and files from the command line, and the
kit's replica scores on their machine (issue 26: items 4 and 5, end to end).

A ``challenge new --protocol predictions`` challenge (its stand-in as scaffolded) is served by
a real ``proctor serve``; ``proctor kit NAME DEST --server URL`` downloads the kit, checks its
sha256 and unpacks it; ``proctor run`` of the kit's entry on its replica scores on the
stand-in; ``proctor files`` lists and downloads the rest, environment image included.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from served_host import PROCTOR, ServedHost

from proctor.services.local.authoring import new_challenge


@pytest.fixture
def host(shared_dir: Path) -> Iterator[ServedHost]:
    env = dict(
        os.environ,
        PROCTOR_DATA=str(shared_dir / "data"),
        PROCTOR_WORK_ROOT=str(shared_dir / "work"),
        PYTHONPATH=os.pathsep.join(sys.path),
    )
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    served = ServedHost(env, shared_dir / "work")
    served.add_users()
    served.serve(workers=1)
    try:
        yield served
    finally:
        served.stop()


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(600)  # the environment image is exported once (hundreds of MiB)
def test_a_participant_downloads_the_kit_and_its_replica_scores_on_the_stand_in(
    host: ServedHost, shared_dir: Path, reference_env: object
) -> None:
    folder = shared_dir / "organizer" / "forecast"
    new_challenge(folder, "predictions", name="forecast")
    added = host.cli("challenge", "add", str(folder), "--json", user="olga")
    assert added.returncode == 0, added.stderr
    listed = host.cli("files", "forecast", "--json", user="bob")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)["files"]}
    assert {row["kind"] for row in rows.values()} == {"kit", "data", "environment"}
    kit = shared_dir / "participant" / "kit"
    done = host.cli("kit", "forecast", str(kit), "--json", user="bob")  # --server: below
    assert done.returncode == 2  # no local challenge called forecast: a server is needed
    done = host.cli(
        "kit", "forecast", str(kit), "--server", host.env["PROCTOR_SERVER"],
        "--token", host.tokens["bob"], "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["sha256"] == rows["forecast-kit.tar.gz"]["sha256"]
    assert sorted(p.name for p in kit.iterdir()) == ["README.md", "challenge", "data", "entry"]
    assert not list(kit.parent.glob(".*part"))
    run = host.cli(
        "run", str(kit / "entry"), "--challenge", str(kit / "challenge"), "--json", user="bob"
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["status"] == "scored", report
    assert report["scores"]["main"]["mae"] == pytest.approx(0.2)  # the stand-in's made-up labels
    fetched = shared_dir / "participant" / "files"
    done = host.cli("files", "forecast", "--download", str(fetched), "--json", user="bob")
    assert done.returncode == 0, done.stderr
    for row in rows.values():
        path = fetched / row["name"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == row["sha256"]
    image = next(name for name, row in rows.items() if row["kind"] == "environment")
    assert image.endswith(".tar")
    store = dict(host.env, PROCTOR_ENV_ROOT=str(shared_dir / "participant" / "envs"))
    imported = subprocess.run([PROCTOR, "env", "import", str(fetched / image)], env=store,
                              capture_output=True, text=True, timeout=280, check=False)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert "imported proctor-reference" in imported.stdout
