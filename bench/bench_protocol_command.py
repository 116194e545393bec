"""Per-case overhead of the ``command`` protocol over running the same program bare.

Run: ``python bench/bench_protocol_command.py [N]`` (default N=40). The program is a shell
script that copies two prepared organ masks into its output folder, as an entry writing
``CASE_RADLEXID_PARTICIPANT_1.nii.gz`` files would. Each round runs, in a random order:

- ``bare``: the program as a plain subprocess with a fresh output folder;
- ``own``: the same argv in a sandbox of its own (``session.run``, a fresh output folder: what
  each case cost before cases ran on case servers);
- ``case``: the same argv as a case of the session (``session.run_case``, one output folder
  emptied before each run), no protocol work;
- ``command``: ``CommandDriver.run_case``: the thread's capped tmpfs output folder, the run as
  a case of the session (``run_case``: on the configuration's case server from the second case
  on), the name check, the copy out, the header and value check of each mask against the input
  volume, and the emptying of the output folder.

It prints the medians, the overhead of ``command`` over ``bare`` (the target: ≤ 30 ms per
case), the protocol's own share (``command`` − ``case``) and what a sandbox of its own per case
would add (``own`` − ``case``), all measured in this run.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nibabel as nib
import numpy as np

from proctor.challenges import bundled_root
from proctor.protocols.base import DriverContext, run_limits
from proctor.protocols.command import CommandDriver, CommandProtocol, case_argv
from proctor.sandbox.base import Mount, Outcome, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.scoring.visceral import check_organ_folder
from proctor.settings import Settings
from proctor.spec.model import ResourceLimits

TARGET_MS = 30.0
DATA = bundled_root() / "visceral_anatomy3" / "data" / "CTce" / "training"
CASE = "10000100_1_CTce_ThAb"
PROGRAM = """#!/bin/sh
out="$4"; case=$(basename "$2" .nii.gz)
cp "$HOME/liver.nii.gz" "$out/${case}_58_bench_1.nii.gz"
cp "$HOME/spleen.nii.gz" "$out/${case}_86_bench_1.nii.gz"
"""


def prepare(root: Path) -> tuple[Path, Path]:
    """A home holding the program and two masks, and an inputs folder with one volume."""
    home, inputs = root / "home", root / "inputs"
    home.mkdir()
    inputs.mkdir()
    shutil.copy(DATA / f"{CASE}.nii.gz", inputs)
    for organ, radlex in (("liver", 58), ("spleen", 86)):
        mask = DATA / "segmentations" / f"{CASE}_{radlex}.nii.gz"
        shutil.copy(mask, home / f"{organ}.nii.gz")
    (home / "execute_standard").write_text(PROGRAM)
    (home / "execute_standard").chmod(0o755)
    assert np.asarray(nib.load(home / "liver.nii.gz").dataobj).any()
    return home, inputs


def timed(action: Callable[[], object]) -> float:
    """Milliseconds one call of ``action`` takes."""
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def main(rounds: int) -> int:
    """Measure ``rounds`` rounds and print the comparison; 1 when over the target."""
    protocol = CommandProtocol(kind="command", task_ids=("58", "86"))
    limits = ResourceLimits()
    root = Path(tempfile.mkdtemp(prefix="proctor-bench-command-", dir="/tmp"))
    root.chmod(0o755)
    try:
        home, inputs = prepare(root)
        sandbox = BwrapSandbox(Settings(work_root=root / "work"))
        with sandbox.session() as session:
            session.give(home)
            times = measure(
                session, protocol, limits, home=home, inputs=inputs, root=root, rounds=rounds
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(times)


def measure(
    session: SandboxSession, protocol: CommandProtocol, limits: ResourceLimits,
    *, home: Path, inputs: Path, root: Path, rounds: int,
) -> dict[str, list[float]]:  # fmt: skip
    """Per-round wall times of the three ways, in milliseconds."""
    driver = CommandDriver(DriverContext(protocol, limits, session, 1, check_organ_folder))
    argv = case_argv(protocol, CASE)
    bare_out = root / "bare-out"
    bare_argv = [str(home / "execute_standard"), "-i", str(inputs / f"{CASE}.nii.gz"),
                 "-o", str(bare_out), "-r", *protocol.task_ids]  # fmt: skip

    def bare() -> None:
        shutil.rmtree(bare_out, ignore_errors=True)
        bare_out.mkdir()
        subprocess.run(bare_argv, check=True, env={"HOME": str(home)})

    fixed_out = root / "case-out"
    fixed_out.mkdir()
    session.give(fixed_out)

    def run(out: Path, how: Callable[..., Outcome]) -> None:
        outcome = how(
            argv, mounts=[Mount(home, "/entry", writable=True), Mount(inputs, "/data"),
                          Mount(out, "/output", writable=True)],
            limits=run_limits(limits, 1, 30.0), env={"HOME": "/entry"}, cwd="/entry",
        )  # fmt: skip
        assert outcome.succeeded, outcome

    def own_sandbox() -> None:
        out = root / "sandbox-out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        session.give(out)
        run(out, session.run)

    def case() -> None:
        for written in fixed_out.iterdir():
            written.unlink()
        run(fixed_out, session.run_case)

    def command() -> None:
        run = driver.run_case(home, inputs, CASE, wall_s=30.0, store=root / "store" / CASE)
        assert run.ok, run.problem

    ways = {"bare": bare, "own": own_sandbox, "case": case, "command": command}
    times: dict[str, list[float]] = {name: [] for name in ways}
    with contextlib.closing(driver):
        for _ in range(rounds):
            for name in random.sample(list(ways), len(ways)):
                times[name].append(timed(ways[name]))
    return times


def report(times: dict[str, list[float]]) -> int:
    """Print medians and overheads; 1 when ``command`` − ``bare`` is over the target."""
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:8s} median {value:7.2f} ms   min {min(times[name]):7.2f} ms")
    paired = statistics.median(c - b for c, b in zip(times["command"], times["bare"], strict=True))
    overhead = median["command"] - median["bare"]
    own = median["command"] - median["case"]
    print(f"command over bare: {overhead:.2f} ms per case (median of pairs {paired:.2f} ms), "
          f"ratio {median['command'] / median['bare']:.2f}")  # fmt: skip
    print(f"protocol's own share (command - case): {own:.2f} ms per case")
    print(f"a sandbox of its own per case instead of a case (own - case): "
          f"{median['own'] - median['case']:.2f} ms per case")  # fmt: skip
    verdict = max(overhead, paired)
    print(f"target <= {TARGET_MS:.0f} ms: {'met' if verdict <= TARGET_MS else 'MISSED'}")
    return 0 if verdict <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
