"""The cost of rebuilding an entry's Dockerfile that was built before (a cache hit).

Run as root: ``python bench/bench_image_build.py [CONTEXT_MB]``. Builds a PhysioNet-shaped
entry (``FROM python:3.10.1-buster``, ``COPY ./ /challenge``, a ``RUN``) on the bundled
reference environment once, imports it as prep does (``import_built``: the archive is then
deleted), then times the same build again, which finds its build by the context's and the
base's digests and its imported image by digest, and runs nothing. Peers measured in the same
run: ``tar`` of the same context through a pipe (reading every byte once, the least a content
check costs) and the first, full build. Goal (issue 29): a cached rebuild under 2 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from proctor.environments.entry_images import ImageLimits
from proctor.environments.store import EnvironmentStore
from proctor.pipeline.entry_build import BUILDS, import_built
from proctor.pipeline.image_build import BuildLimits, build_image, offered_bases
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment, ensure_environment
from proctor.settings import Settings

GOAL_S = 2.0
RUNS = 5
DOCKERFILE = """FROM python:3.10.1-buster
RUN mkdir /challenge
COPY ./ /challenge
WORKDIR /challenge
RUN python3 -c "import numpy; print(numpy.__version__)" > /challenge/versions.txt
CMD ["python3", "run_model.py"]
"""


def _context(folder: Path, megabytes: int) -> None:
    folder.mkdir()
    (folder / "Dockerfile").write_text(DOCKERFILE)
    (folder / "team_code.py").write_text("def train_model(d, m, v):\n    pass\n" * 50)
    (folder / "model").mkdir()
    for index in range(megabytes):
        (folder / "model" / f"part{index}.bin").write_bytes(os.urandom(1 << 20))


def _best(action: object) -> float:
    best = float("inf")
    for _ in range(RUNS):
        started = time.monotonic()
        action()  # type: ignore[operator]
        best = min(best, time.monotonic() - started)
    return best


def main() -> int:
    """Build once, then time the cached rebuild against tar of the context; print ratios."""
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    settings = Settings.from_env()
    built = ensure_environment(declared_environment(resolve_challenge("physionet2018"), None),
                               settings).built  # fmt: skip
    bases = offered_bases({"reference": built}, {"python:3.10.1-buster": "reference"})
    scratch = Path(tempfile.mkdtemp(prefix="proctor-imagebench-", dir="/var/tmp"))
    scratch.chmod(0o755)
    try:
        context = scratch / "entry"
        _context(context, megabytes)
        sandbox = BwrapSandbox(Settings(work_root=scratch / "work"))
        limits = BuildLimits(wall_s=300)
        store = EnvironmentStore(scratch / "store")
        with sandbox.session() as session:

            def build() -> bool:
                result = build_image(context, bases, limits, store=store.root / BUILDS,
                                     session=session, work=scratch / "build")  # fmt: skip
                if import_built(result, store, ImageLimits(), session) is None:
                    sys.exit("the built image was not stored")
                return result.cached

            started = time.monotonic()
            assert not build()
            first_s = time.monotonic() - started
            hit_s = _best(lambda: build() or sys.exit("a rebuild was not a cache hit"))

        def tar() -> None:
            # through a pipe: GNU tar reads nothing when its archive is /dev/null itself
            with subprocess.Popen(["tar", "-cf", "-", "-C", str(context), "."],
                                  stdout=subprocess.PIPE) as piped:  # fmt: skip
                assert piped.stdout is not None
                while piped.stdout.read(1 << 20):
                    pass

        tar_s = _best(tar)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"context: {megabytes} MiB; base: reference environment "
          f"({built.manifest.tree_bytes / 2**20:.0f} MiB tree)")  # fmt: skip
    print(f"first build: {first_s:.2f} s")
    print(f"cached rebuild: {hit_s * 1000:.0f} ms (best of {RUNS}); "
          f"{hit_s / tar_s:.1f}x tar of the context ({tar_s * 1000:.0f} ms), "
          f"{first_s / hit_s:.0f}x faster than the first build")  # fmt: skip
    print(f"goal cached rebuild < {GOAL_S:.0f} s: {'met' if hit_s < GOAL_S else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
