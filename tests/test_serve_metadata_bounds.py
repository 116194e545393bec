"""``proctor serve`` refuses a 6 MB ``metadata`` at prep without parsing it (issue 24, finding 3).

A participant's ``metadata`` is read inside the server's process (its workers run prep). A
6.2 MB one (a list of integers) took PyYAML's pure-Python loader 110 s there and grew the
process by 700 MiB; a 256 MiB one would have had the service killed. Here the real server
(on 127.0.0.1, in a process of its own) takes the imported CodaLab code challenge and such
an upload: prep refuses it, saying why, and the server's peak resident memory (``VmHWM`` of
``/proc/PID/status``) grows by less than 64 MiB while it does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bundle_fixtures import PREDICT_PY, PROGRAM_METADATA, make_v1_program_zip
from proctor.services.local.bundle_import import import_challenge
from sandbox_helpers import is_root

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not is_root(), reason="the server's jobs run in the root sandbox"),
]
PROCTOR = str(Path(sys.executable).with_name("proctor"))
GROWTH_BOUND = 64 * 1024**2
"""What prep of one refused upload may add to the server's peak resident memory."""


@dataclass
class Server:
    env: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[str] | None = None

    def cli(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(self.env)
        if user is not None:
            env["PROCTOR_TOKEN"] = self.tokens[user]
        return subprocess.run([PROCTOR, *args], env=env, capture_output=True, text=True,
                              timeout=280, check=False)  # fmt: skip

    def memory_kib(self, field_name: str) -> int:
        """``field_name`` (``VmRSS``, ``VmHWM``) of the server's process, in KiB."""
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{field_name}:"):
                return int(line.split()[1])
        raise AssertionError(f"no {field_name} in /proc/{self.process.pid}/status")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
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
    svc = Server(env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"])):
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.process = subprocess.Popen(
        [PROCTOR, "serve", "--port", "0", "--workers", "1", "--json"],
        env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert svc.process.stdout is not None
    svc.env["PROCTOR_SERVER"] = json.loads(svc.process.stdout.readline())["url"]
    try:
        yield svc
    finally:
        svc.process.terminate()
        try:
            svc.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            svc.process.kill()
            svc.process.wait()
        svc.process.stdout.close()


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
    server: Server, tmp_path: Path
) -> None:
    challenge = tmp_path / "challenge"
    result = import_challenge(make_v1_program_zip(tmp_path), challenge, "host")
    added = server.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert added.returncode == 0, added.stderr
    upload = six_megabyte_upload(tmp_path)
    before = server.memory_kib("VmHWM")
    done = server.cli("submit", str(upload), "-c", result.challenge, "--json", user="bob")
    after = server.memory_kib("VmHWM")
    said = done.stdout + done.stderr
    assert "keep it under 64 KiB" in said, said[-3000:]
    assert "prep" in said, said[-3000:]
    growth = (after - before) * 1024
    assert growth < GROWTH_BOUND, f"the server's peak grew by {growth >> 20} MiB"
