"""Download a 2 GiB challenge file through a real ``proctor serve``: throughput and memory.

Run: ``python bench/bench_file_download.py [--gib 2]``.

A ``challenge new --protocol predictions`` challenge lists a file of ``--gib`` GiB of random
bytes under ``files:``; ``proctor serve`` (embedded default, SQLite) builds the challenge's
files once (the first listing, timed), then:

1. ``cat`` of the server's copy to /dev/null (page cache warm), timed;
2. the download over HTTP on 127.0.0.1 (httpx, 1 MiB reads, bytes discarded), timed, while the
   server's resident memory (``VmRSS`` of its process) is sampled every 20 ms: the growth
   over its resident memory before the download is printed (target: under 50 MiB); then
   the same download by ``curl`` (to /dev/null), timed;
3. a resumed download: the first half, then ``Range: bytes=HALF-`` with ``If-Range`` (the
   ETag), both halves hashed: the sha256 must be the listed one.

Prints figures; asserts nothing about time (the machine is shared).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from served_host import ServedHost

from proctor.services.local.authoring import new_challenge

MIB = 1 << 20


def _challenge(root: Path, gib: float) -> Path:
    """The challenge, with a file of ``gib`` GiB of random bytes on its Files page."""
    folder = root / "bundle" / "bigfile"
    new_challenge(folder, "predictions", name="bigfile")
    with (folder / "big.bin").open("wb") as out:
        for _ in range(int(gib * 1024)):
            out.write(os.urandom(MIB))
    path = folder / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    data.pop("environment")
    data["files"] = [{"path": "big.bin", "title": "a large file"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class Sampler(threading.Thread):
    """The largest resident memory of a process, sampled every 20 ms until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, _rss_mib(self.pid))
            time.sleep(0.02)


def _download(http: httpx.Client, url: str, headers: dict[str, str], sink: object) -> int:
    got = 0
    with http.stream("GET", url, headers=headers) as answer:
        answer.raise_for_status()
        for chunk in answer.iter_bytes(MIB):
            got += len(chunk)
            if sink is not None:
                sink.update(chunk)  # type: ignore[attr-defined]
    return got


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-download-") as scratch:
        root = Path(scratch)
        env = dict(
            os.environ, PROCTOR_DATA=str(root / "data"), PYTHONPATH=os.pathsep.join(sys.path)
        )
        env.pop("PROCTOR_DATABASE_URL", None)
        host = ServedHost(env)
        host.add_users()
        host.serve(workers=1)
        try:
            _run(host, _challenge(root, args.gib), root)
        finally:
            host.stop()


def _run(host: ServedHost, folder: Path, root: Path) -> None:
    assert host.process is not None
    pid = host.process.pid
    added = host.cli("challenge", "add", str(folder), user="olga")
    assert added.returncode == 0, added.stderr
    headers = {"Authorization": f"Bearer {host.tokens['bob']}"}
    server = host.env["PROCTOR_SERVER"]
    with httpx.Client(base_url=server, timeout=600) as http:
        started = time.perf_counter()
        listing = http.get("/api/v1/challenges/bigfile/files", headers=headers).json()
        built_s = time.perf_counter() - started
        row = next(item for item in listing["files"] if item["name"] == "big.bin")
        size = row["size"]
        cached = next((root / "data" / "files" / "bigfile").glob("v1-*")) / "big.bin"
        started = time.perf_counter()
        subprocess.run(["cat", str(cached)], stdout=subprocess.DEVNULL, check=True)
        cat_s = time.perf_counter() - started
        before = _rss_mib(pid)
        sampler = Sampler(pid)
        sampler.start()
        started = time.perf_counter()
        got = _download(http, row["url"], headers, None)
        http_s = time.perf_counter() - started
        sampler.done.set()
        sampler.join()
        curl = [
            "curl",
            "-sS",
            "-o",
            "/dev/null",
            "-H",
            f"Authorization: Bearer {host.tokens['bob']}",
        ]
        started = time.perf_counter()
        subprocess.run([*curl, f"{server}{row['url']}"], check=True)
        curl_s = time.perf_counter() - started
        half = size // 2
        digest = hashlib.sha256()
        first = _ranged(http, row["url"], {**headers, "Range": f"bytes=0-{half - 1}"}, digest)
        resume = {**headers, "Range": f"bytes={half}-", "If-Range": f'"{row["sha256"]}"'}
        second = _ranged(http, row["url"], resume, digest)
    gib = size / (1 << 30)
    print(f"file: {gib:.2f} GiB; files built on first listing in {built_s:.1f} s")
    print(f"cat of the server's copy: {cat_s:.2f} s, {size / MIB / cat_s:.0f} MiB/s")
    print(f"HTTP download:            {http_s:.2f} s, {got / MIB / http_s:.0f} MiB/s "
          f"({cat_s / http_s:.2f} of cat's rate)")  # fmt: skip
    print(f"curl download:            {curl_s:.2f} s, {size / MIB / curl_s:.0f} MiB/s "
          f"({cat_s / curl_s:.2f} of cat's rate)")  # fmt: skip
    print(f"server resident memory: {before:.1f} MiB before, peak {sampler.peak:.1f} MiB "
          f"during: grew {sampler.peak - before:.1f} MiB (target < 50)")  # fmt: skip
    whole = first + second == size and digest.hexdigest() == row["sha256"]
    print(f"resumed at {half} bytes with Range + If-Range: sha256 matches: {whole}")


def _ranged(http: httpx.Client, url: str, headers: dict[str, str], digest: object) -> int:
    with http.stream("GET", url, headers=headers) as answer:
        assert answer.status_code == 206, answer.status_code
        got = 0
        for chunk in answer.iter_bytes(MIB):
            got += len(chunk)
            digest.update(chunk)  # type: ignore[attr-defined]
    return got


if __name__ == "__main__":
    main()
