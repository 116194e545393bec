"""Uploads refused with a clear 4xx that says what to fix, and nothing stored.

The server (uvicorn on 127.0.0.1, the toy challenge installed, a 1 MB cap) is sent bodies
over the cap (announced, and chunked without a length), files that are no archive, hostile
archives, an empty file, the wrong content type and a form without the file. After every
refusal the artifact store holds no file and no submission row exists, so no quota is used.
``read_upload`` is also driven directly to show it stops reading at the cap and spools the
file to disk.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from archive_craft import Item, build_tar, build_zip, zip_bomb
from service_seed import Seeded, archive, seed, served
from sqlalchemy import func, select
from starlette.requests import Request
from toy_challenge import make_entry

from proctor.errors import UsageError
from proctor.services.platform.uploads import ArtifactTooLargeError
from proctor.store.models import SubmissionRow
from proctor.web.uploads import FORM_SLACK, read_upload

CAP = 1_000_000
SUBMIT = "/api/v1/challenges/toy/submissions"
GOOD = [Item("setup.sh", b"#!/bin/sh\n", mode=0o755), Item("next.sh", b"#!/bin/sh\n", mode=0o755)]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Seeded, httpx.Client]]:
    seeded = seed(Path(tmp_path_factory.mktemp("uploads")), upload_bytes=CAP)
    with (
        served(seeded.app) as url,
        httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client,
    ):
        yield seeded, client
    seeded.platform.close()


def _nothing_stored(seeded: Seeded) -> None:
    root = seeded.platform.artifacts.root
    kept = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
    assert kept == []
    with seeded.platform.db() as session:
        assert session.scalar(select(func.count()).select_from(SubmissionRow)) == 0


REFUSED_ARCHIVES = {
    "not an archive": (b"just some notes\n", "not a zip, tar.gz or tar archive"),
    "empty": (b"", "the upload is empty"),
    "zip bomb": (zip_bomb(300 * 2**20), "zip bomb"),
    "absolute path": (build_tar([*GOOD, Item("/etc/cron.d/x", b"x")]), "/etc/cron.d/x"),
    "dot-dot path": (build_tar([*GOOD, Item("../../escape.sh", b"x")]), "escape.sh"),
    "symlink": (build_tar([*GOOD, Item("refs", kind="symlink", target="/")]), "refs"),
    "zip symlink": (build_zip([*GOOD, Item("l", kind="symlink", target="/etc")]), "'l'"),
}


@pytest.mark.parametrize("name", sorted(REFUSED_ARCHIVES))
def test_a_hostile_or_broken_archive_is_refused_and_nothing_is_stored(
    service: tuple[Seeded, httpx.Client], name: str
) -> None:
    seeded, client = service
    data, said = REFUSED_ARCHIVES[name]
    answer = client.post(SUBMIT, files={"entry": ("entry.tar.gz", io.BytesIO(data))})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["kind"] == "archive" and said in error["message"]
    assert "upload-" not in error["message"]  # the server's staging file is never named
    _nothing_stored(seeded)


def test_an_upload_over_the_cap_is_refused_with_413_and_nothing_is_stored(
    service: tuple[Seeded, httpx.Client],
) -> None:
    seeded, client = service
    big = io.BytesIO(b"\0" * (CAP + FORM_SLACK + 1))
    answer = client.post(SUBMIT, files={"entry": ("big.tar", big)})
    assert answer.status_code == 413
    assert f"larger than {CAP} bytes: make the entry smaller" in answer.json()["error"]["message"]
    _nothing_stored(seeded)


def test_a_file_just_over_the_cap_inside_the_form_slack_is_still_refused(
    service: tuple[Seeded, httpx.Client],
) -> None:
    seeded, client = service
    answer = client.post(SUBMIT, files={"entry": ("big.tar", io.BytesIO(b"\1" * (CAP + 10)))})
    assert answer.status_code == 413, answer.text
    _nothing_stored(seeded)


def test_a_chunked_upload_without_a_length_is_cut_off_at_the_cap(
    service: tuple[Seeded, httpx.Client],
) -> None:
    seeded, client = service
    sent = [0]
    boundary = "b0undary"

    def body() -> Iterator[bytes]:
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="entry"; '
            'filename="e.tar"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        for _ in range(200):  # 12.8 MB in all, never announced
            sent[0] += 65536
            yield b"\0" * 65536
        yield f"\r\n--{boundary}--\r\n".encode()

    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    try:
        answer = client.post(SUBMIT, content=body(), headers=headers)
        assert answer.status_code == 413, answer.text
    except httpx.TransportError:
        pass  # the server answered 413 and closed while the client was still sending
    _nothing_stored(seeded)


@pytest.mark.parametrize(
    ("request_args", "status", "said"),
    [
        ({"json": {"entry": "x"}}, 415, "multipart/form-data upload with the archive in the field"),
        ({"content": b"abc", "headers": {"Content-Type": "application/zip"}}, 415, "form upload"),
        ({"data": {"phase": "final"}, "files": {"other": ("e.zip", b"PK")}}, 400, "'entry'"),
        (
            {"content": b"--x--", "headers": {"Content-Type": "multipart/form-data"}},
            415,
            "multipart/form-data",
        ),
    ],
    ids=["json", "raw zip", "no entry field", "no boundary"],
)
def test_a_request_that_is_no_form_upload_says_how_to_send_one(
    service: tuple[Seeded, httpx.Client], request_args: dict[str, Any], status: int, said: str
) -> None:
    seeded, client = service
    answer = client.post(SUBMIT, **request_args)
    assert answer.status_code == status, answer.text
    assert said in answer.json()["error"]["message"]
    _nothing_stored(seeded)


def test_a_good_archive_is_stored_once_as_an_artifact(tmp_path: Path) -> None:
    seeded = seed(tmp_path / "service", upload_bytes=CAP)
    data = archive(make_entry(tmp_path / "entry"))
    with served(seeded.app) as url, httpx.Client(base_url=url, timeout=60) as client:
        answer = client.post(
            SUBMIT,
            files={"entry": ("entry.tar.gz", io.BytesIO(data))},
            headers=seeded.headers("alice"),
        )
    assert answer.status_code == 200, answer.text
    files = [p for p in seeded.platform.artifacts.root.rglob("*") if p.is_file()]
    assert [p.read_bytes() for p in files] == [data]
    seeded.platform.close()


def _request(chunks: list[bytes], pulled: list[int]) -> Request:
    boundary = b"zz"
    head = b'--zz\r\nContent-Disposition: form-data; name="entry"; filename="e"\r\n\r\n'
    parts = [head, *chunks, b"\r\n--zz--\r\n"]

    async def receive() -> dict[str, Any]:
        pulled[0] += 1
        body = parts.pop(0) if parts else b""
        return {"type": "http.request", "body": body, "more_body": bool(parts)}

    headers = [(b"content-type", b"multipart/form-data; boundary=" + boundary)]
    return Request({"type": "http", "method": "POST", "headers": headers}, receive)


def test_read_upload_stops_reading_at_the_cap() -> None:
    pulled = [0]
    request = _request([b"\0" * 65536] * 400, pulled)  # 26 MB offered

    async def read() -> None:
        async with read_upload(request, "entry", 200_000):
            pass

    with pytest.raises(ArtifactTooLargeError, match="larger than 200000 bytes"):
        asyncio.run(read())
    assert pulled[0] <= (200_000 + FORM_SLACK) // 65536 + 2


def test_read_upload_spools_a_large_file_to_disk_not_memory() -> None:
    request = _request([b"\1" * 65536] * 48, [0])  # 3 MiB under a 5 MB cap

    async def read() -> tuple[int, bool]:
        async with read_upload(request, "entry", 5_000_000) as upload:
            spooled = upload.file
            return len(spooled.read()), bool(getattr(spooled, "_rolled", False))

    size, on_disk = asyncio.run(read())
    assert size == 48 * 65536 and on_disk


def test_read_upload_refuses_a_second_file() -> None:
    boundary = "qq"
    part = '--qq\r\nContent-Disposition: form-data; name="{0}"; filename="f"\r\n\r\nx\r\n'
    body = (part.format("entry") + part.format("more") + "--qq--\r\n").encode()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    headers = [(b"content-type", f"multipart/form-data; boundary={boundary}".encode())]
    request = Request({"type": "http", "method": "POST", "headers": headers}, receive)

    async def read() -> None:
        async with read_upload(request, "entry", 1000):
            pass

    with pytest.raises(UsageError, match="not a well-formed multipart form"):
        asyncio.run(read())


def test_an_upload_by_a_caller_who_may_not_is_refused_before_its_body_is_parsed(
    service: tuple[Seeded, httpx.Client],
) -> None:
    seeded, client = service
    headers = {"Content-Type": "multipart/form-data; boundary=x", **seeded.headers("alice")}
    garbage = b"\0" * 300_000  # parsed, it would be "no file in the field" (400)
    refusals = (
        ("/api/v1/challenges/archive", 403),
        ("/api/v1/challenges/nope/submissions", 404),
    )
    for url, status in refusals:
        answer = client.post(url, content=garbage, headers=headers)
        assert answer.status_code == status, answer.text
    _nothing_stored(seeded)
