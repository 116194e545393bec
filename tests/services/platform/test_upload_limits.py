"""Uploads that store nothing unless every check passed, a cap on unpacking, a minimum rate.

- an upload refused by the quota check made after it was read (another upload of the team took
  the last submission meanwhile) leaves no artifact;
- with every unpacking slot taken, an upload waits its bounded time, then gets 503 with
  ``Retry-After`` and nothing is stored; one that gets a slot while waiting goes on;
- a body arriving slower than the minimum rate (a small window here) gets 408, nothing stored.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from service_seed import Seeded, archive, seed, served
from sqlalchemy import func, select
from toy_challenge import make_entry

from proctor.errors import RefusedError
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.store.models import SubmissionRow

SUBMIT = "/api/v1/challenges/toy/submissions"


def _artifacts(seeded: Seeded) -> list[Path]:
    root = seeded.platform.artifacts.root
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _submissions(seeded: Seeded) -> int:
    with seeded.platform.db() as session:
        return int(session.scalar(select(func.count()).select_from(SubmissionRow)) or 0)


def _with_quota(seeded: Seeded, total: int) -> None:
    """Install a new version of the toy challenge whose phase allows ``total`` submissions."""
    bundle = seeded.challenge_root
    spec = yaml.safe_load((bundle / "challenge.yaml").read_text())
    spec["phases"][0]["quota"] = {"total": total}
    (bundle / "challenge.yaml").write_text(yaml.safe_dump(spec))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(bundle))


class _RacingUpload(io.BytesIO):
    """An upload that, once read to its end, lets ``racer`` submit first (the race, made sure)."""

    def __init__(self, data: bytes, racer: Any) -> None:
        super().__init__(data)
        self.racer: Any = racer

    def read(self, size: int | None = -1, /) -> bytes:
        chunk = super().read(size)
        if not chunk and self.racer is not None:
            racer, self.racer = self.racer, None
            racer()
        return chunk


def test_an_upload_refused_by_the_second_quota_check_leaves_no_artifact(tmp_path: Path) -> None:
    seeded = seed(tmp_path / "service")
    try:
        _with_quota(seeded, total=1)
        alice = authenticate(seeded.platform, seeded.tokens["alice"])
        first = archive(make_entry(tmp_path / "first"))
        second = make_entry(tmp_path / "second")
        (second / "extra.txt").write_text("another entry, another artifact\n")

        def other_upload_wins() -> None:
            submissions.submit(seeded.platform, alice, "toy", None, io.BytesIO(first))

        racing = _RacingUpload(archive(second), other_upload_wins)
        with pytest.raises(RefusedError, match="used all 1 submissions"):
            submissions.submit(seeded.platform, alice, "toy", None, racing)
        assert [p.read_bytes() for p in _artifacts(seeded)] == [first]
        assert _submissions(seeded) == 1
    finally:
        seeded.platform.close()


@pytest.fixture
def busy_service(tmp_path: Path) -> Iterator[tuple[Seeded, httpx.Client, bytes]]:
    seeded = seed(tmp_path / "service", upload_unpacks=1, upload_wait_s=1.0)
    data = archive(make_entry(tmp_path / "entry"))
    try:
        with (
            served(seeded.app) as url,
            httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client,
        ):
            yield seeded, client, data
    finally:
        seeded.platform.close()


def test_with_every_unpacking_slot_taken_an_upload_gets_503_with_retry_after(
    busy_service: tuple[Seeded, httpx.Client, bytes],
) -> None:
    seeded, client, data = busy_service
    slots = seeded.platform.unpacking
    assert slots.acquire(timeout=5)  # another upload is being unpacked
    try:
        answer = client.post(SUBMIT, files={"entry": ("entry.tar.gz", io.BytesIO(data))})
    finally:
        slots.release()
    assert answer.status_code == 503, answer.text
    assert int(answer.headers["Retry-After"]) >= 1
    assert "uploads are being checked" in answer.json()["error"]["message"]
    assert _artifacts(seeded) == [] and _submissions(seeded) == 0


def test_an_upload_waiting_for_a_slot_goes_on_once_one_is_free(
    busy_service: tuple[Seeded, httpx.Client, bytes],
) -> None:
    seeded, client, data = busy_service
    slots = seeded.platform.unpacking
    assert slots.acquire(timeout=5)
    answers: list[httpx.Response] = []
    poster = threading.Thread(
        target=lambda: answers.append(
            client.post(SUBMIT, files={"entry": ("entry.tar.gz", io.BytesIO(data))})
        )
    )
    poster.start()
    slots.release()
    poster.join(60)
    assert answers and answers[0].status_code == 200, answers[0].text if answers else "no answer"
    assert _submissions(seeded) == 1


def _trickle(url: str, headers: dict[str, str], pause_s: float, limit_s: float) -> bytes:
    """POST a form upload whose body then brings one byte every ``pause_s``; the answer's bytes.

    Stops trickling once an answer arrives, or after ``limit_s`` seconds (the test fails then).
    """
    host, port = url.removeprefix("http://").split(":")
    head = (
        b'--zz\r\nContent-Disposition: form-data; name="entry"; filename="e.tar.gz"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    lines = [
        f"POST {SUBMIT} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: multipart/form-data; boundary=zz",
        f"Content-Length: {len(head) + 100_000}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    with socket.create_connection((host, int(port)), timeout=limit_s) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + head)
        conn.settimeout(pause_s)
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                return _whole_answer(conn, conn.recv(65536), limit_s)
            except TimeoutError:
                try:
                    conn.sendall(b"\0")
                except OSError:
                    break
    return b""


def _whole_answer(conn: socket.socket, first: bytes, limit_s: float) -> bytes:
    """``first`` and the rest of the answer: its head and body can arrive in separate reads."""
    answer = first
    conn.settimeout(limit_s)
    while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < _length(answer):
        more = conn.recv(65536)
        if not more:
            break
        answer += more
    return answer


def _length(answer: bytes) -> int:
    """The Content-Length an answer's head declares (0 when it declares none)."""
    for line in answer.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def test_a_body_trickling_slower_than_the_minimum_rate_gets_408_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    seeded = seed(tmp_path / "service", upload_min_bytes=1024, upload_window_s=1.0)
    try:
        with served(seeded.app) as url:
            answer = _trickle(url, seeded.headers("alice"), pause_s=0.2, limit_s=60)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"slower than 1024 bytes in 1" in answer
        assert _artifacts(seeded) == [] and _submissions(seeded) == 0
    finally:
        seeded.platform.close()
