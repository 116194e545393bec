"""A real ``proctor serve`` driven through the CLI and HTTP, as the service tests use it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx

PROCTOR = str(Path(sys.executable).with_name("proctor"))


@dataclass
class Service:
    data: Path
    env: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)
    url: str = ""
    process: subprocess.Popen[str] | None = None
    log: Path | None = None  # the server's stderr goes here when set

    def cli(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(self.env, PROCTOR_SERVER=self.url)
        if user is not None:
            env["PROCTOR_TOKEN"] = self.tokens[user]
        return subprocess.run([PROCTOR, *args], env=env, capture_output=True, text=True,
                              timeout=240, check=False)  # fmt: skip

    def start(self) -> None:
        stderr = None if self.log is None else self.log.open("w")
        self.process = subprocess.Popen(
            [PROCTOR, "serve", "--port", "0", "--workers", "2", "--json"],
            env=self.env, stdout=subprocess.PIPE, stderr=stderr, text=True,
        )  # fmt: skip
        if stderr is not None:
            stderr.close()  # the server holds its own copy
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.url = json.loads(line)["url"]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

    def http(self, user: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def archive(folder: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(folder, arcname="entry")
    return dest
