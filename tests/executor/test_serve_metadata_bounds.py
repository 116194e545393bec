"""``proctor serve`` refuses a 6 MB ``metadata`` at prep without parsing it (issue 24, finding 3).

A participant's ``metadata`` is read inside the server's process (its workers run prep). A
6.2 MB one (a list of integers) took PyYAML's pure-Python loader 110 s there and grew the
process by 700 MiB; a 256 MiB one would have had the service killed. Here the real server
(on 127.0.0.1, in a process of its own) takes the imported CodaLab code challenge and such
an upload: prep refuses it, saying why, and the server's peak resident memory (``VmHWM`` of
``/proc/PID/status``) grows by less than 64 MiB while it does.
"""

from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from bundle_fixtures import PREDICT_PY, PROGRAM_METADATA, make_v1_program_zip
from sandbox_helpers import is_root
from served_host import ServedHost

from proctor.services.local.bundle_import import import_challenge

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not is_root(), reason="the server's jobs run in the root sandbox"),
]
GROWTH_BOUND = 64 * 1024**2
"""What prep of one refused upload may add to the server's peak resident memory."""


def memory_kib(server: ServedHost, field_name: str) -> int:
    """``field_name`` (``VmRSS``, ``VmHWM``) of the server's process, in KiB."""
    assert server.process is not None
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field_name} in /proc/{server.process.pid}/status")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServedHost]:
    env = dict(
        os.environ,
        PROCTOR_DATA=str(tmp_path / "data"),
        PROCTOR_WORK_ROOT=str(tmp_path / "work"),
        PROCTOR_UPLOAD_BYTES=str(64 * 1024**2),
        PROCTOR_ALLOW_HOST_ENVIRONMENT="1",
        PYTHONPATH=os.pathsep.join(sys.path),
    )
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = ServedHost(env)
    svc.add_users()
    svc.serve(workers=1)
    try:
        yield svc
    finally:
        svc.stop()


def six_megabyte_upload(root: Path) -> Path:
    """The sample code submission whose ``metadata`` is its command and 6 MB of integers."""
    numbers = "".join(f"  - {index}\n" for index in range(620_000))
    metadata = PROGRAM_METADATA + "numbers:\n" + numbers
    assert len(metadata) > 6 * 1024**2
    archive = root / "upload.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("predict.py", PREDICT_PY)
        zipped.writestr("metadata", metadata)
    return archive


def test_a_6_mb_metadata_is_refused_at_prep_and_the_server_stays_small(
    server: ServedHost, tmp_path: Path
) -> None:
    challenge = tmp_path / "challenge"
    result = import_challenge(make_v1_program_zip(tmp_path), challenge, "host")
    added = server.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert added.returncode == 0, added.stderr
    upload = six_megabyte_upload(tmp_path)
    before = memory_kib(server, "VmHWM")
    done = server.cli("submit", str(upload), "-c", result.challenge, "--json", user="bob")
    after = memory_kib(server, "VmHWM")
    said = done.stdout + done.stderr
    assert "keep it under 64 KiB" in said, said[-3000:]
    assert "prep" in said, said[-3000:]
    growth = (after - before) * 1024
    assert growth < GROWTH_BOUND, f"the server's peak grew by {growth >> 20} MiB"
