"""Overhead of the bwrap backend over a bare subprocess, for trivial commands.

Run: ``python bench/bench_sandbox_overhead.py [N]`` (default N=50). Prints the median wall time
of N runs of ``/bin/true`` and ``python3 -c pass``, bare and through ``BwrapSandbox.run`` with
its full chain (cgroup join, prlimit, setpriv, bwrap, seccomp, capped tmpfs, cgroup accounting),
the overhead in ms, the ratio, and a breakdown of where the time goes. Target: ≤ 15 ms per case.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from proctor.sandbox.base import Limits
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.bwrap_args import bwrap_args
from proctor.sandbox.supervise import prlimit_argv
from proctor.settings import Settings

TARGET_MS = 15.0
CASES = {"/bin/true": ["/bin/true"], "python3 -c pass": ["/usr/bin/python3", "-c", "pass"]}


def median_ms(action: Callable[[], object], n: int) -> float:
    action()  # warm caches
    times = []
    for _ in range(n):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bare(argv: list[str]) -> Callable[[], object]:
    return lambda: subprocess.run(argv, check=True, close_fds=True)


def stages(argv: list[str], limits: Limits, uid: int) -> dict[str, list[str]]:
    """Partial launch chains, to attribute the overhead."""
    inner = bwrap_args("/usr/bin/bwrap", argv, mounts=[], limits=limits, env={}, cwd="/")
    setpriv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    prlimit = prlimit_argv("prlimit", limits, address_space=False)
    chains = {"+ prlimit": [*prlimit, *argv], "+ bwrap (as caller)": inner}
    if os.geteuid() == 0:
        chains["+ setpriv + bwrap"] = [*setpriv, *inner]
    return chains


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    work = Path(tempfile.mkdtemp(prefix="proctor-bench-"))
    sandbox = BwrapSandbox(Settings(work_root=work))
    limits = Limits(wall_s=20)
    sandbox.check()
    print(f"{n} runs per case; median wall time in ms (cgroups: {bool(sandbox.cgroups.parents())})")
    met = True
    for name, argv in CASES.items():
        base = median_ms(bare(argv), n)

        def sandboxed(argv: list[str] = argv) -> object:
            outcome = sandbox.run(argv, mounts=[], limits=limits)
            assert outcome.succeeded, outcome
            return outcome

        full = median_ms(sandboxed, n)
        overhead = full - base
        met &= overhead <= TARGET_MS
        print(
            f"\n{name}: bare {base:.1f}  bwrap backend {full:.1f}  "
            f"overhead {overhead:.1f}  ratio {full / base:.1f}x"
        )
        for label, chain in stages(argv, limits, sandbox.settings.slot_uid_base).items():
            print(f"    {label:<22} {median_ms(bare(chain), max(n // 2, 5)):.1f}")
    verdict = "met" if met else "NOT met"
    print(f"\ntarget overhead <= {TARGET_MS:.0f} ms per case: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
