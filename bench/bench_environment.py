"""Building the reference environment from nothing, and a cache hit, against the issue's targets.

Run: ``python bench/bench_environment.py``. Builds the bundled reference environment (Debian 12
python3 + gcc, the scientific wheels) into a fresh temporary store from its published lock,
packing included, then asks for it again (a cache hit). Targets: a build from nothing < 3 min,
a cache hit < 1 s. The peer measured in the same run is mmdebstrap alone on the same package
list (the Debian part every build must pay), to show what the rest costs.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment, ensure_environment
from proctor.settings import Settings

BUILD_TARGET_S = 180.0
HIT_TARGET_S = 1.0


def main() -> int:
    """Time a build from nothing, a cache hit and bare mmdebstrap; print the verdicts."""
    spec = declared_environment(resolve_challenge("physionet2018"), None)
    scratch = Path(tempfile.mkdtemp(prefix="proctor-envbench-", dir="/var/tmp"))
    try:
        settings = dataclasses.replace(Settings.from_env(), env_root=scratch / "store")
        started = time.monotonic()
        ensure_environment(spec, settings)
        build_s = time.monotonic() - started
        started = time.monotonic()
        hit = ensure_environment(spec, settings)
        hit_s = time.monotonic() - started
        assert not hit.fresh
        started = time.monotonic()
        subprocess.run(
            ["mmdebstrap", "--variant=minbase", "--quiet",
             "--include=" + ",".join(spec.debian.packages), spec.debian.suite,
             str(scratch / "bare")],
            check=True,
        )  # fmt: skip
        bare_s = time.monotonic() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    manifest = hit.built.manifest
    print(f"environment {manifest.name}: {len(manifest.packages)} Debian packages, "
          f"{len(manifest.wheels)} wheels, {manifest.image_bytes / 2**20:.0f} MiB")  # fmt: skip
    print(f"build from nothing (packing included): {build_s:.1f} s "
          f"({build_s / bare_s:.2f}x bare mmdebstrap's {bare_s:.1f} s)")  # fmt: skip
    print(f"cache hit: {hit_s * 1000:.1f} ms")
    build_verdict = "met" if build_s < BUILD_TARGET_S else "NOT met"
    hit_verdict = "met" if hit_s < HIT_TARGET_S else "NOT met"
    print(f"target build < {BUILD_TARGET_S:.0f} s: {build_verdict}")
    print(f"target cache hit < {HIT_TARGET_S:.0f} s: {hit_verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
