"""Hardening items 1-2: two jobs share no lock or page-cache state through their root.

As root, each job mounts the environment image through a loop device of its own, so a lock or a
cached page of one mount is invisible from another. The host's own /usr (``environment: host``)
is shared, which these tests show too: the report says so (``shared_page_cache``).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from proctor.environments.store import BuiltEnvironment
from proctor.sandbox.base import Limits, MiB, Outcome, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.settings import Settings

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.environment,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="private image mounts need root"),
]
LIMITS = Limits(wall_s=20, memory_bytes=512 * MiB)
HOLD = "flock -x /usr/bin/python3 -c 'touch /tmp/held; sleep 4'"
PROBE = "flock -n -x /usr/bin/python3 -c true && echo free || echo BLOCKED"


def lock_probe(sandbox: BwrapSandbox, root: RootFilesystem | None) -> str:
    """One job holds a lock on a root file; a concurrent job tries the same lock."""
    held = threading.Event()
    result: dict[str, Outcome] = {}

    def holder() -> None:
        with sandbox.session(root) as session:
            held.set()
            result["hold"] = session.run(RunSpec(["/bin/sh", "-c", HOLD], mounts=[], limits=LIMITS))

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    time.sleep(1.5)  # the holder has taken its lock by now
    with sandbox.session(root) as session:
        probe = session.run(RunSpec(["/bin/sh", "-c", PROBE], mounts=[], limits=LIMITS))
    thread.join(30)
    assert result["hold"].succeeded, result["hold"].stderr
    return probe.stdout.strip()


def test_a_lock_on_a_file_of_the_private_root_is_invisible_to_another_job(
    reference_env: BuiltEnvironment, env_settings: Settings
) -> None:
    root = RootFilesystem(reference_env.rootfs, reference_env.image)
    assert lock_probe(BwrapSandbox(env_settings), root) == "free"


def test_on_the_hosts_shared_usr_the_same_lock_is_a_channel(env_settings: Settings) -> None:
    """Why environment: host is for trusted local runs only (and reported as shared)."""
    assert lock_probe(BwrapSandbox(env_settings), None) == "BLOCKED"


def largest_library(root: Path) -> str:
    """The biggest shared library of the image's Python packages (tens of MB)."""
    site = root / "usr/local/lib/python3.11/dist-packages"
    best = max(site.rglob("*.so*"), key=lambda p: p.stat().st_size)
    if best.stat().st_size < (64 * STRIDE + 16) * 4096:
        pytest.skip(f"{best} is too small to probe")
    return "/" + str(best.relative_to(root))


STRIDE = 64  # pages between probed pages: beyond the readahead window
CONTROL_TRIES = 5


def probe_scripts(target: str, pattern: list[bool]) -> tuple[str, str]:
    """A writer that reads the pattern's pages, a reader that times a read of every page."""
    head = (
        "import os, time\n"
        f"fd = os.open({target!r}, os.O_RDONLY)\n"
        "os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)\n"
    )
    writer = head + (
        f"for i, bit in enumerate({pattern!r}):\n"
        f"    if bit: os.pread(fd, 4096, (i * {STRIDE} + 8) * 4096)\n"
    )
    reader = head + (
        "times = []\n"
        "for i in range(64):\n"
        "    t = time.perf_counter_ns()\n"
        f"    os.pread(fd, 4096, (i * {STRIDE} + 8) * 4096)\n"
        "    times.append(time.perf_counter_ns() - t)\n"
        "cut = (min(times) * max(times)) ** 0.5\n"
        "print(''.join('1' if t < cut else '0' for t in times))\n"
    )
    return writer, reader


def matches(bits: str, pattern: list[bool]) -> int:
    return sum((bit == "1") == wanted for bit, wanted in zip(bits, pattern, strict=True))


def test_pages_one_job_reads_are_not_cached_for_another(
    reference_env: BuiltEnvironment, env_settings: Settings
) -> None:
    """A job reads chosen pages of a big image file; a later job probes which are cached."""
    target = largest_library(reference_env.rootfs)
    pattern = [i % 3 == 0 for i in range(64)]
    writer, reader = probe_scripts(target, pattern)
    sandbox = BwrapSandbox(env_settings)
    root = RootFilesystem(reference_env.rootfs, reference_env.image)
    controls = []
    for _ in range(CONTROL_TRIES):  # each in a fresh mount: its page cache starts cold
        with sandbox.session(root) as first:
            assert first.run(RunSpec(["python3", "-c", writer], mounts=[], limits=LIMITS)).succeeded
            control = first.run(RunSpec(["python3", "-c", reader], mounts=[], limits=LIMITS))
        controls.append(control.stdout.strip())
        if matches(controls[-1], pattern) >= 56:
            break
    # read timing within one mount recovers the pattern: the probe works (a loaded machine
    # blurs some timings, so the control may take a few tries; one clear read is proof)
    assert max(matches(bits, pattern) for bits in controls) >= 56, controls
    with sandbox.session(root) as second:
        seen = second.run(RunSpec(["python3", "-c", reader], mounts=[], limits=LIMITS))
    assert seen.succeeded, seen.stderr
    # across mounts, nothing better than chance (32 of 64)
    assert matches(seen.stdout.strip(), pattern) <= 48, seen.stdout
