"""Uploads the way the field makes them: a bare ``submission.csv``, a zip of ``test/`` alone.

A Kaggle-style predictions challenge (``table_challenge``: one task, ``submission.csv``)
takes the bare file through the REST route and ``proctor submit FILE``, and a zip holding
only it; the dev split's predictions are optional unless the organizer sets
``public_required``. An archive whose single top-level folder is taken as the entry's root
says so, and a required folder is never reported missing because of it. An imported EvalAI
challenge takes its bare file too. Bad names are refused naming the file and the fix.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from archive_craft import Item, build_zip
from evalai_challenge import SUBMISSION, make_evalai_challenge
from proctor_cli import proctor, run_json
from service_seed import Seeded, run_queued, seed, served
from table_challenge import DEV, TEST, make_table_challenge

from proctor.entries import unpack_upload
from proctor.protocols import bare_files
from proctor.protocols.base import ExpectedFile
from proctor.protocols.predictions import PredictionsProtocol
from proctor.resolve import load_challenge
from proctor.sandbox.base import Sandbox
from proctor.services.local.authoring import new_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings
from proctor.store.models import SubmissionRow

PROCTOR = str(Path(sys.executable).with_name("proctor"))
SUBMIT = "/api/v1/challenges/tabular/submissions"


def _csv(rows: dict[str, str]) -> bytes:
    return ("id,target\n" + "".join(f"{k},{v}\n" for k, v in rows.items())).encode()


def _install(seeded: Seeded, folder: Path) -> None:
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(folder))


def _tabular(root: Path, **protocol: Any) -> Path:
    folder = make_table_challenge(root / "tabular")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["protocol"] |= protocol
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Seeded, httpx.Client, str]]:
    seeded = seed(tmp_path / "service")
    _install(seeded, _tabular(tmp_path))
    with (
        served(seeded.app) as url,
        httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client,
    ):
        yield seeded, client, url
    seeded.platform.close()


def _stored_names(seeded: Seeded, sid: str) -> list[str]:
    with seeded.platform.db() as session:
        row = session.get(SubmissionRow, sid)
        assert row is not None
        digest = row.upload_sha256
    with zipfile.ZipFile(seeded.platform.artifacts.path(digest)) as archive:
        return archive.namelist()


def _result(
    seeded: Seeded, client: httpx.Client, sid: str, sandbox: Sandbox, settings: Settings
) -> dict[str, Any]:
    run_queued(seeded, sandbox, settings)
    answer = client.get(f"/api/v1/submissions/{sid}")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _stages(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {s["name"]: (s["status"], s["message"]) for s in status["report"]["stages"]}


def test_a_bare_submission_csv_is_the_test_splits_and_is_scored(
    site: tuple[Seeded, httpx.Client, str], sandbox: Sandbox, sandbox_settings: Settings
) -> None:
    seeded, client, _ = site
    answer = client.post(SUBMIT, files={"entry": ("submission.csv", io.BytesIO(_csv(TEST)))})
    assert answer.status_code == 200, answer.text
    sid = answer.json()["submission"]
    assert _stored_names(seeded, sid) == ["test/main/submission.csv"]
    status = _result(seeded, client, sid, sandbox, sandbox_settings)
    assert status["status"] == "scored", status
    assert status["report"]["scores"]["main"]["f1_macro"] == pytest.approx(1.0)
    quiz = _stages(status)["quiz"]
    assert quiz[0] == "skipped" and "no dev/ predictions uploaded (optional)" in quiz[1]


def test_the_same_bare_file_makes_the_same_stored_archive(
    site: tuple[Seeded, httpx.Client, str],
) -> None:
    seeded, client, _ = site
    digests = set()
    for _ in range(2):
        answer = client.post(SUBMIT, files={"entry": ("submission.csv", io.BytesIO(_csv(TEST)))})
        assert answer.status_code == 200, answer.text
        with seeded.platform.db() as session:
            row = session.get(SubmissionRow, answer.json()["submission"])
            assert row is not None
            digests.add(row.upload_sha256)
    assert len(digests) == 1


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("zip holding only the file", build_zip([Item("submission.csv", _csv(TEST))])),
        ("zip of test/ alone", build_zip([Item("test/main/submission.csv", _csv(TEST))])),
    ],
)
def test_a_zip_holding_only_the_test_predictions_is_scored(
    site: tuple[Seeded, httpx.Client, str],
    sandbox: Sandbox,
    sandbox_settings: Settings,
    name: str,
    data: bytes,
) -> None:
    seeded, client, _ = site
    answer = client.post(SUBMIT, files={"entry": ("entry.zip", io.BytesIO(data))})
    assert answer.status_code == 200, answer.text
    status = _result(seeded, client, answer.json()["submission"], sandbox, sandbox_settings)
    assert status["status"] == "scored", (name, status)
    assert "missing" not in json.dumps(status["report"])


def test_a_single_top_folder_taken_as_the_root_is_said_in_the_prep_message(
    site: tuple[Seeded, httpx.Client, str], sandbox: Sandbox, sandbox_settings: Settings
) -> None:
    seeded, client, _ = site
    upload = build_zip(
        [
            Item("mine/dev/main/submission.csv", _csv(DEV)),
            Item("mine/test/main/submission.csv", _csv(TEST)),
        ]
    )
    answer = client.post(SUBMIT, files={"entry": ("mine.zip", io.BytesIO(upload))})
    assert answer.status_code == 200, answer.text
    status = _result(seeded, client, answer.json()["submission"], sandbox, sandbox_settings)
    assert status["status"] == "scored", status
    prep = _stages(status)["prep"][1]
    assert "single top-level folder mine/ was taken as the entry's root" in prep
    assert _stages(status)["quiz"][0] == "passed"


def test_unpacking_never_takes_a_required_folder_as_the_root(tmp_path: Path) -> None:
    upload = tmp_path / "test-only.zip"
    upload.write_bytes(build_zip([Item("test/main/submission.csv", _csv(TEST))]))
    names = PredictionsProtocol.model_validate({"kind": "predictions"})
    from proctor.protocols.predictions import PredictionsDriver

    roots = PredictionsDriver.manifest(names).root_names()
    kept = unpack_upload(upload, tmp_path / "kept", root_names=roots)
    assert kept.root == tmp_path / "kept" and kept.unwrapped == ""
    taken = unpack_upload(upload, tmp_path / "taken")  # a protocol without a test/ folder
    assert taken.root == tmp_path / "taken" / "test" and taken.unwrapped == "test"


@pytest.mark.parametrize("name", ["predictions.csv", "results/submission.csv.txt"])
def test_a_bare_file_of_another_name_is_refused_naming_it_and_the_fix(
    site: tuple[Seeded, httpx.Client, str], name: str
) -> None:
    seeded, client, _ = site
    answer = client.post(SUBMIT, files={"entry": (name, io.BytesIO(_csv(TEST)))})
    assert answer.status_code == 422, answer.text
    message = answer.json()["error"]["message"]
    assert f"{name.rsplit('/', 1)[-1]} is not an archive" in message
    assert "name your predictions submission.csv" in message
    assert "test/main/submission.csv" in message
    with seeded.platform.db() as session:
        assert session.query(SubmissionRow).count() == 0


def test_dev_predictions_are_required_when_the_organizer_asks(
    tmp_path: Path, sandbox: Sandbox, sandbox_settings: Settings
) -> None:
    seeded = seed(tmp_path / "service")
    _install(seeded, _tabular(tmp_path, public_required=True))
    upload = build_zip([Item("test/main/submission.csv", _csv(TEST))])
    with (
        served(seeded.app) as url,
        httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client,
    ):
        bare = client.post(SUBMIT, files={"entry": ("submission.csv", io.BytesIO(_csv(TEST)))})
        assert bare.status_code == 422, bare.text
        answer = client.post(SUBMIT, files={"entry": ("entry.zip", io.BytesIO(upload))})
        assert answer.status_code == 200, answer.text
        status = _result(seeded, client, answer.json()["submission"], sandbox, sandbox_settings)
    seeded.platform.close()
    assert status["status"] == "failed"
    prep = _stages(status)["prep"][1]
    assert "missing dev/" in prep and "missing test/" not in prep


def test_proctor_submit_sends_a_bare_file(
    site: tuple[Seeded, httpx.Client, str], tmp_path: Path
) -> None:
    seeded, _, url = site
    bare = tmp_path / "submission.csv"
    bare.write_bytes(_csv(TEST))
    env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens["alice"])
    done = subprocess.run(
        [PROCTOR, "submit", str(bare), "-c", "tabular", "--no-wait", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout)["submission"]
    assert _stored_names(seeded, sid) == ["test/main/submission.csv"]
    wrong = tmp_path / "preds.csv"
    wrong.write_bytes(_csv(TEST))
    refused = subprocess.run(
        [PROCTOR, "submit", str(wrong), "-c", "tabular", "--no-wait"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "preds.csv is not an archive" in refused.stderr
    assert "name your predictions submission.csv" in refused.stderr


def test_an_imported_evalai_challenge_takes_the_bare_file(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    import_challenge(source, tmp_path / "evalai", "host")
    seeded = seed(tmp_path / "service")
    _install(seeded, tmp_path / "evalai")
    name = yaml.safe_load((tmp_path / "evalai" / "challenge.yaml").read_text())["name"]
    body = json.dumps(SUBMISSION).encode()
    with (
        served(seeded.app) as url,
        httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client,
    ):
        route = f"/api/v1/challenges/{name}/submissions"
        answer = client.post(
            route, data={"phase": "dev"}, files={"entry": ("guesses.json", io.BytesIO(body))}
        )
        assert answer.status_code == 200, answer.text
        assert _stored_names(seeded, answer.json()["submission"]) == ["guesses.json"]
        wrong = client.post(
            route, data={"phase": "dev"}, files={"entry": ("guesses.txt", io.BytesIO(body))}
        )
        assert wrong.status_code == 422, wrong.text
        assert "guesses.txt is not an archive" in wrong.json()["error"]["message"]
        page = httpx.get(
            f"{url}/challenges/{name}", cookies={"proctor_token": seeded.tokens["alice"]}
        ).text
        assert "the file <code>*.json</code> or <code>*.zip</code> (or a .zip holding it)" in page
        for odd in ("..", "../guesses.json/.."):
            dots = client.post(
                route, data={"phase": "dev"}, files={"entry": (odd, io.BytesIO(body))}
            )
            assert dots.status_code == 422, dots.text
    seeded.platform.close()


def test_a_new_predictions_challenge_takes_predictions_csv_bare(tmp_path: Path) -> None:
    new_challenge(tmp_path / "new", "predictions", name="new-predictions")
    expected = bare_files.expected_file(load_challenge(tmp_path / "new"))
    assert expected is not None
    assert expected.place("predictions.csv") == "test/values/predictions.csv"
    assert not expected.accepts("submission.csv")


@pytest.mark.parametrize("name", ["", ".", "..", "a/b.csv", "a\\b.csv"])
def test_a_bare_name_that_is_no_plain_file_name_is_never_expected(name: str) -> None:
    assert not ExpectedFile(("*",), "").accepts(name)
    assert ExpectedFile(("*",), "").accepts("guesses.json")


def test_proctor_run_scores_a_bare_file_locally_and_names_a_wrong_one(tmp_path: Path) -> None:
    folder = _tabular(tmp_path)
    bare = tmp_path / "submission.csv"
    bare.write_bytes(_csv(TEST))
    work = tmp_path / "work"
    assert run_json(bare, folder, work)["status"] == "scored"
    zipped = tmp_path / "zipped.zip"
    zipped.write_bytes(build_zip([Item("submission.csv", _csv(TEST))]))
    assert run_json(zipped, folder, work)["status"] == "scored"
    wrong = tmp_path / "preds.csv"
    wrong.write_bytes(_csv(TEST))
    refused = proctor("run", str(wrong), "--challenge", str(folder), "--json", work_root=work)
    assert refused.returncode == 1, refused.stderr
    assert "name your predictions submission.csv" in refused.stdout
