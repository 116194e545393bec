"""Overhead of the bwrap backend over a bare subprocess, for trivial commands.

Run: ``python bench/bench_sandbox_overhead.py [N] [--breakdown]`` (default N=100). For
``/bin/true`` and ``python3 -c pass`` it runs N rounds; each round runs the bare command and the
full ``BwrapSandbox.run`` chain (rlimits + cgroup join in one dash, setpriv, bwrap, seccomp,
capped tmpfs, cgroup accounting) in a random order, so load on a shared machine hits both
alike. It prints median and minimum wall times, the overhead of the medians, the median of the
per-round differences and the overhead of the minima. The verdict uses the larger of the two
median overheads. ``--breakdown`` adds partial chains to attribute the time. Target: ≤ 15 ms.

With the bundled reference environment built (``proctor env build physionet2018``), each round
also runs the command in a session whose root is the environment image (mounted once per job
through a private loop device as root): the per-case overhead with the image root, against the
environments issue's target of ≤ 8 ms. The ``case server`` row runs the command as a case of a
session (``SandboxSession.run_case``: forked by the session's case server, same limits, each
enforced from outside), as the records protocol's ``next.sh`` runs; ``image root, case server``
does the same in the image-root session, and the ≤ 8 ms verdict is taken on it (the
``image root`` row, a sandbox of its own per run, is printed beside it). The per-job cost
(mounting and unmounting the image, claiming the slot) is measured and printed apart.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from proctor.environments.digests import declaration_digest
from proctor.environments.store import EnvironmentStore
from proctor.sandbox.base import Limits, RunSpec, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.bwrap_args import bwrap_args
from proctor.sandbox.launch import find_tool, launcher_prefix
from proctor.sandbox.rootfs import RootFilesystem
from proctor.sandbox.runs import RunGroup
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment
from proctor.settings import Settings

TARGET_MS = 15.0
ENV_TARGET_MS = 8.0
CASES = {"/bin/true": ["/bin/true"], "python3 -c pass": ["/usr/bin/python3", "-c", "pass"]}


def bare(argv: list[str]) -> Callable[[], object]:
    """Run ``argv`` as a plain subprocess."""
    return lambda: subprocess.run(argv, check=True, close_fds=True)


def sandboxed(sandbox: BwrapSandbox, argv: list[str], limits: Limits) -> Callable[[], object]:
    """Run ``argv`` through the full bwrap backend and insist that it succeeded."""

    def action() -> object:
        outcome = sandbox.run_in_group(RunGroup(), RunSpec(argv, limits=limits), slot=0)
        assert outcome.succeeded, outcome
        return outcome

    return action


def in_session(session: SandboxSession, argv: list[str], limits: Limits) -> Callable[[], object]:
    """Run ``argv`` in an open session (the environment image already mounted)."""

    def action() -> object:
        outcome = session.run(RunSpec(argv, mounts=[], limits=limits))
        assert outcome.succeeded, outcome
        return outcome

    return action


def on_server(session: SandboxSession, argv: list[str], limits: Limits) -> Callable[[], object]:
    """Run ``argv`` as a case of ``session`` (a case server when the backend has them)."""

    def action() -> object:
        outcome = session.run_case(RunSpec(argv, mounts=[], limits=limits))
        assert outcome.succeeded, outcome
        return outcome

    return action


def reference_root(settings: Settings) -> RootFilesystem | None:
    """The bundled reference environment's root, when it is in the store."""
    spec = declared_environment(resolve_challenge("physionet2018"), None)
    built = EnvironmentStore(settings.environments).find(declaration_digest(spec))
    return None if built is None else RootFilesystem(built.rootfs, built.image)


def job_cost(sandbox: BwrapSandbox, root: RootFilesystem, rounds: int) -> list[float]:
    """Wall ms of opening and closing a session on ``root`` (slot, private mount)."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        with sandbox.session(root):
            pass
        times.append((time.perf_counter() - start) * 1000)
    return times


def stages(argv: list[str], limits: Limits, uid: int) -> dict[str, list[str]]:
    """Partial launch chains (no cgroup, no seccomp), to attribute the overhead."""
    inner = bwrap_args("/usr/bin/bwrap", RunSpec(argv, mounts=[], limits=limits, env={}, cwd="/"))
    setpriv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    dash = launcher_prefix(
        limits, [], address_space=False, dash=find_tool("dash"), prlimit=find_tool("prlimit")
    )
    chains = {"+ dash ulimit": [*dash, *argv], "+ bwrap (as caller)": inner}
    if os.geteuid() == 0:
        chains["+ setpriv + bwrap"] = [*setpriv, *inner]
    return chains


def interleaved(actions: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Wall times in ms of each action, all run once per round in a random order."""
    for action in actions.values():
        action()  # warm caches
    times: dict[str, list[float]] = {name: [] for name in actions}
    names = list(actions)
    for _ in range(rounds):
        random.shuffle(names)
        for name in names:
            start = time.perf_counter()
            actions[name]()
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def report(name: str, times: dict[str, list[float]]) -> float:
    """Print one case; returns the overhead the verdict uses (ms)."""
    base, full = times["bare"], times["sandboxed"]
    of_medians = statistics.median(full) - statistics.median(base)
    paired = statistics.median(f - b for f, b in zip(full, base, strict=True))
    print(
        f"\n{name}: bare median {statistics.median(base):.1f} (min {min(base):.1f})  "
        f"sandboxed median {statistics.median(full):.1f} (min {min(full):.1f})\n"
        f"    overhead: of medians {of_medians:.1f}  median of paired differences {paired:.1f}  "
        f"of minima {min(full) - min(base):.1f}"
    )
    for label, values in times.items():
        if label not in ("bare", "sandboxed"):
            print(f"    {label:<22} median {statistics.median(values):.1f}  min {min(values):.1f}")
    return max(of_medians, paired)


def main() -> int:
    """Benchmark both cases and print the verdict against TARGET_MS."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = int(args[0]) if args else 100
    breakdown = "--breakdown" in sys.argv[1:]
    work = Path(tempfile.mkdtemp(prefix="proctor-bench-"))
    work.chmod(0o755)  # sandbox slots traverse it to reach the mounted image
    sandbox = BwrapSandbox(Settings(work_root=work))
    limits = Limits(wall_s=20)
    sandbox.check()
    cgroups = bool(sandbox.cgroups.parents())
    print(f"{rounds} interleaved rounds per case; wall times in ms (cgroups: {cgroups})")
    root = reference_root(Settings.from_env())
    met = env_met = True
    with contextlib.ExitStack() as stack:
        session = stack.enter_context(sandbox.session(root)) if root else None
        cases = stack.enter_context(sandbox.session())
        for name, argv in CASES.items():
            actions = {"bare": bare(argv), "sandboxed": sandboxed(sandbox, argv, limits)}
            actions["case server"] = on_server(cases, argv, limits)
            if session is not None:
                actions["image root"] = in_session(session, argv, limits)
                actions["image root, case server"] = on_server(session, argv, limits)
            if breakdown:
                uid = sandbox.settings.slot_uid_base
                actions |= {
                    label: bare(chain) for label, chain in stages(argv, limits, uid).items()
                }
            times = interleaved(actions, rounds)
            met &= report(name, times) <= TARGET_MS
            if session is not None:
                # cases (next.sh per record) run on the session's case server
                served = times["image root, case server"]
                env = statistics.median(served) - statistics.median(times["bare"])
                env_met &= env <= ENV_TARGET_MS
    print(f"\ntarget median overhead <= {TARGET_MS:.0f} ms per case: {'met' if met else 'NOT met'}")
    if root is None:
        print("reference environment not built: run `proctor env build physionet2018` to measure")
        return 0
    cost = job_cost(sandbox, root, max(5, rounds // 10))
    print(f"per-job cost of the image root (slot + private loop mount + unmount): median "
          f"{statistics.median(cost):.1f} ms, min {min(cost):.1f} ms")  # fmt: skip
    verdict = "met" if env_met else "NOT met"
    print(
        f"target median overhead with the image root <= {ENV_TARGET_MS:.0f} ms per case "
        f"(a case on the session's case server, as next.sh runs): {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
