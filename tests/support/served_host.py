"""A `proctor serve` started by a test: its environment, users' tokens and the CLI against it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

PROCTOR = str(Path(sys.executable).with_name("proctor"))


@dataclass
class ServedHost:
    """The environment of the server and its clients; the server's process once started."""

    env: dict[str, str]
    work_root: Path | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[str] | None = None

    def cli(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        """``proctor ARGS`` in this environment, as ``user`` (their token) when given."""
        env = dict(self.env)
        if user is not None:
            env["PROCTOR_TOKEN"] = self.tokens[user]
        return subprocess.run([PROCTOR, *args], env=env, capture_output=True, text=True,
                              timeout=280, check=False)  # fmt: skip

    def add_users(self) -> None:
        """The organizer ``olga`` and ``bob`` of team ``blue``, with their tokens."""
        for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"])):
            added = self.cli("user", "add", name, *extra, "--json")
            assert added.returncode == 0, added.stderr
            self.tokens[name] = json.loads(added.stdout)["token"]

    def serve(self, workers: int, port: int = 0) -> subprocess.Popen[str]:
        """Start the server on ``port`` (0: a free one); the clients then talk to it."""
        self.process = subprocess.Popen(
            [PROCTOR, "serve", "--port", str(port), "--workers", str(workers), "--json"],
            env=self.env, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        self.env["PROCTOR_SERVER"] = json.loads(self.process.stdout.readline())["url"]
        return self.process

    def stop(self, *, kill: bool = False) -> None:
        """End the server: at once with ``kill``, else SIGTERM and up to a minute."""
        if self.process is None:
            return
        if self.process.poll() is None:
            if not kill:
                self.process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=60)
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
