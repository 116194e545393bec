"""Per-case overhead of the ``python_model`` protocol over running the same program bare.

Run (as root, reference environment built):
``python bench/bench_protocol_python_model.py [N] [--tree]`` (default N=15 rounds, about 8 s
each on 2 cores; ``--tree`` binds the environment's unpacked tree as the root instead of the
session's private mount of its erofs image, which is what jobs use). One case is two harness
processes (``train`` then ``predict``) on a small AutoWSL dataset (40 training rows, 20 test
rows) with a ``model.py`` that imports nothing. Each round runs, in a random order, ``start``
(see below) and the three ways:

- ``bare``: the two harness runs as plain host subprocesses with the *environment's own*
  interpreter and wheels (the rootfs's ``python3.11`` started through the rootfs's dynamic
  loader, so the same Python, pandas and numpy files as in the sandbox), on a host copy of the
  home: no namespaces, no cgroup, no clock pipe, no limits;
- ``sandbox``: the same two runs through the job's bwrap session, with exactly the argv,
  mounts, environment and ``Limits`` the driver uses (its memory limit, hence a cgroup, and its
  clock pipe: ``start_s`` = ``load_s``), but none of the protocol's own host-side work;
- ``driver``: ``PythonModelDriver.run_case``: the budgets read from ``info.json``, the state
  folder cleared, the two sandboxed runs, the prediction collected out of the home, the
  scorer's format check, the row count against ``test.data``, and the clearing again.

It prints the medians, the overhead of ``driver`` over ``bare`` (the target of issue 10:
≤ 30 ms per case, as the median of the per-round paired differences and as the difference of
the medians, the larger of the two decides) and the protocol's own share (``driver`` −
``sandbox``, likewise paired).

"Interpreter start excluded" means: each of the two harness runs starts ``python3`` and
imports pandas before it reads the data, and that start is in *all three* rows, so it
cancels out of every difference printed; it is not counted as overhead. The bench prints how
long that start takes bare (two ``python3 -I -c 'import pandas'``, ``start`` row), to show
what was excluded and why the rows themselves are hundreds of milliseconds. What the sandbox
adds to the start (launching bwrap, reading the interpreter and wheels through the rootfs
mount) is *not* excluded: it is part of ``sandbox`` − ``bare`` and so of the overhead.

Measured in November 2026 that share is about 2 s per case with the image and far less with
``--tree``: the image is packed with ``mkfs.erofs -T0`` (every mtime 0), so the wheels'
``.pyc`` files (mtime-validated) never match their sources inside the sandbox and every run
recompiles pandas and numpy in memory (``python3 -v``: 356 stale modules per ``import pandas``,
about three times the user CPU of the start; 0 with ``--tree``). The
protocol's own host-side work is printed too, measured directly (``driver`` time outside its
two sandbox runs), since ``driver`` − ``sandbox`` is the difference of two noisy seconds.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.challenges.autowsl.generate import DatasetSpec, write_dataset
from proctor.protocols.base import DriverContext
from proctor.protocols.harness import HARNESS_DIR, HARNESS_FILE
from proctor.protocols.model_runs import read_budgets
from proctor.protocols.python_model import PythonModelDriver, state_folder
from proctor.sandbox.base import Outcome, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.scoring.autowsl import check_prediction
from proctor.services.catalog import resolve_challenge
from proctor.services.environments import declared_environment, ensure_environment
from proctor.settings import Settings
from proctor.spec.model import ResourceLimits
from proctor.spec.protocols import PythonModelProtocol

TARGET_MS = 30.0
CASE = "d"
MODEL = """
class Model:
    def __init__(self, info):
        self.info = info
    def train(self, X, y):
        self.mean = float(sum(y)) / max(len(y), 1)
    def save(self, directory):
        open(directory + "/m", "w").write(repr(self.mean))
    def load(self, directory):
        self.mean = float(open(directory + "/m").read())
    def predict(self, X):
        return [self.mean] * len(X)
"""


def environment_python(rootfs: Path) -> list[str]:
    """The environment's own ``python3`` run on the host (its loader, its libraries)."""
    libraries = f"{rootfs}/lib/x86_64-linux-gnu:{rootfs}/usr/lib/x86_64-linux-gnu"
    loader = rootfs / "lib64" / "ld-linux-x86-64.so.2"
    return [str(loader), "--library-path", libraries, str(rootfs / "usr/bin/python3.11")]


def timed(action: Callable[[], object]) -> float:
    """Milliseconds one call of ``action`` takes."""
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


class TimedSession:
    """The job's session, adding up the seconds spent inside its ``run`` calls."""

    def __init__(self, session: SandboxSession) -> None:
        self.session = session
        self.inside_s = 0.0

    def run(self, *args: Any, **kwargs: Any) -> Outcome:
        started = time.perf_counter()
        try:
            return self.session.run(*args, **kwargs)
        finally:
            self.inside_s += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


def main(rounds: int, *, tree: bool = False) -> int:
    """Measure ``rounds`` rounds (after one warm-up) and print the comparison."""
    settings = Settings.from_env()
    built = ensure_environment(declared_environment(resolve_challenge("autowsl"), None), settings)
    rootfs = built.built.rootfs
    image = built.built.image if built.built.image.is_file() and not tree else None
    root = Path(tempfile.mkdtemp(prefix="proctor-bench-pm-", dir="/tmp"))
    root.chmod(0o755)
    try:
        inputs = root / "inputs"
        write_dataset(DatasetSpec(CASE, "noisy", 5, 40, 20), inputs / CASE, root / "d.solution")
        with (
            BwrapSandbox(settings).session(RootFilesystem(rootfs, image)) as session,
            session.workspace(root / "home", size_bytes=1 << 26) as home,
        ):
            (home / "model.py").write_text(MODEL)
            session.give(home)
            times = measure(
                session,
                environment_python(rootfs),
                home=home,
                inputs=inputs,
                root=root,
                rounds=rounds,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(times, "the unpacked tree" if image is None else "the erofs image")


def measure(
    session: SandboxSession, python: list[str], *, home: Path, inputs: Path, root: Path, rounds: int
) -> dict[str, list[float]]:
    """Per-round wall times of the ways, in milliseconds (the first round is dropped)."""
    protocol = PythonModelProtocol(kind="python_model")
    timed_session = TimedSession(session)
    context = DriverContext(protocol, ResourceLimits(), timed_session, 1, check_prediction)  # type: ignore[arg-type]
    driver = PythonModelDriver(context)
    host_work: list[float] = []
    dataset = inputs / CASE
    budgets = read_budgets(dataset, protocol)
    bare_home = root / "bare-home"
    bare_home.mkdir()
    shutil.copy(home / "model.py", bare_home)
    harness = str(HARNESS_DIR / HARNESS_FILE)
    env = {"HOME": str(bare_home), "LANG": "C.UTF-8", "PATH": os.environ.get("PATH", "")}

    def bare() -> None:
        state = bare_home / state_folder(CASE)
        shutil.rmtree(state, ignore_errors=True)
        for mode in ("train", "predict"):
            argv = [*python, "-I", harness, mode, "--entry", str(bare_home),
                    "--data", str(dataset), "--state", f"{state}/model",
                    "--output", f"{state}/prediction"]  # fmt: skip
            subprocess.run(argv, check=True, env=env, cwd=bare_home)

    def start() -> None:
        for _ in range(2):
            subprocess.run([*python, "-I", "-c", "import pandas"], check=True, env=env)

    def sandboxed() -> None:
        for mode, budget in (("train", budgets.train_s), ("predict", budgets.predict_s)):
            outcome = driver._run(mode, home, dataset, budget, CASE)
            assert outcome.succeeded, outcome.stderr
        shutil.rmtree(home / state_folder(CASE))

    def run_case() -> None:
        inside, started = timed_session.inside_s, time.perf_counter()
        run = driver.run_case(home, inputs, CASE, wall_s=600.0, store=root / "store.csv")
        outside = time.perf_counter() - started - (timed_session.inside_s - inside)
        host_work.append(outside * 1000)
        assert run.ok, run.problem

    ways = {"bare": bare, "start": start, "sandbox": sandboxed, "driver": run_case}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds + 1):
        for name in random.sample(list(ways), len(ways)):
            times[name].append(timed(ways[name]))
    times["host work"] = host_work
    return {name: values[1:] for name, values in times.items()}


def paired(times: dict[str, list[float]], left: str, right: str) -> tuple[float, float]:
    """(median of per-round differences, difference of medians) of ``left`` − ``right``."""
    pairs = statistics.median(a - b for a, b in zip(times[left], times[right], strict=True))
    return pairs, statistics.median(times[left]) - statistics.median(times[right])


def pair_spread(times: dict[str, list[float]], left: str, right: str) -> str:
    """The quartiles of the per-round differences ``left`` − ``right`` (the noise of a pair)."""
    low, _, high = statistics.quantiles(
        [a - b for a, b in zip(times[left], times[right], strict=True)], n=4
    )
    return f"{low:.0f} .. {high:.0f} ms"


def report(times: dict[str, list[float]], root_kind: str) -> int:
    """Print medians and overheads; 1 when ``driver`` − ``bare`` is over the target."""
    print(f"load average {os.getloadavg()[0]:.2f}; {len(times['bare'])} rounds, one case each")
    print(f"root: {root_kind}")
    for name, values in times.items():
        spread = statistics.quantiles(values, n=4)
        print(f"{name:8s} median {statistics.median(values):8.1f} ms   "
              f"quartiles {spread[0]:8.1f} .. {spread[2]:8.1f} ms")  # fmt: skip
    rows = (("driver over bare", "driver", "bare"),
            ("sandbox over bare (sandbox's share)", "sandbox", "bare"),
            ("protocol's own share (driver - sandbox)", "driver", "sandbox"))  # fmt: skip
    for label, left, right in rows:
        pairs, medians = paired(times, left, right)
        print(f"{label}: {pairs:.1f} ms per case (median of pairs, quartiles "
              f"{pair_spread(times, left, right)}; of medians {medians:.1f} ms)")  # fmt: skip
    print(f"protocol's own host-side work (driver time outside its sandbox runs): "
          f"{statistics.median(times['host work']):.2f} ms per case")  # fmt: skip
    verdict = max(paired(times, "driver", "bare"))
    print(f"excluded interpreter + pandas start (2 runs, bare): "
          f"{statistics.median(times['start']):.1f} ms per case")  # fmt: skip
    print(f"target <= {TARGET_MS:.0f} ms per case: {'met' if verdict <= TARGET_MS else 'MISSED'}")
    return 0 if verdict <= TARGET_MS else 1


if __name__ == "__main__":
    numbers = [arg for arg in sys.argv[1:] if arg.isdigit()]
    sys.exit(main(int(numbers[0]) if numbers else 15, tree="--tree" in sys.argv[1:]))
