"""An entry image's overhead per case over the same entry in the declared environment.

Run as root: ``python bench/bench_entry_image.py [ROUNDS]`` (default 5), with the bundled
reference environment built (``proctor env build physionet2018``). The bundled physionet2018
challenge is copied with ``entry_images: {allow: true}`` added to its environment, and its
baseline entry runs through ``proctor run`` (``run_entry``, one case at a time) twice per
round, in a random order: plain (the declared environment's root) and with an ``image.tar`` at
the upload's root, the declared environment's own root exported as an OCI archive, so the two
runs differ only in where the root comes from. The per-case time is the exam stage's wall time
over its case count. Printed apart: the archive's one-off import (``import_archive`` into a
fresh store: unpacking, packing the erofs image), a cached re-import (the same again, which
finds the image by digest), and each run's whole wall time (the image's runs re-import it).
Goal (issue 29): an overhead per case of no more than 10 %.
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from proctor.challenges import bundled_root
from proctor.environments.entry_images import ImageLimits, import_archive
from proctor.environments.oci import export_oci
from proctor.environments.store import EnvironmentStore
from proctor.pipeline.report import EvaluationReport
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment, ensure_environment
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings

GOAL = 0.10
CHALLENGE = "physionet2018"


def _challenge(dest: Path) -> Path:
    """The bundled challenge with entry images allowed (its environment paths made absolute)."""
    source = bundled_root() / CHALLENGE
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
    path = dest / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    environment = data["environment"]
    for key in ("requirements", "lock"):
        environment["python"][key] = str((source / environment["python"][key]).resolve())
    environment["lock"] = str((source / environment["lock"]).resolve())
    environment["entry_images"] = {"allow": True}
    data["disclosure"] = {**data["disclosure"], "exam": "full"}  # the exam's wall time shown
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def _readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))


def _stage(report: EvaluationReport, name: str) -> tuple[float, int]:
    """The wall time and the case count of stage ``name``."""
    for stage in report.stages:
        if str(stage.stage) == name:
            return stage.wall_s, stage.cases.total
    raise SystemExit(f"no {name} stage in the report: {report.message}")


def _run(entry: Path, challenge: Path, settings: Settings) -> tuple[EvaluationReport, float]:
    """The report of one ``proctor run`` of ``entry`` and its whole wall time."""
    started = time.monotonic()
    report = run_entry(RunRequest(entry=entry, challenge=str(challenge), jobs=1), settings)
    if report.status != "scored":
        raise SystemExit(f"{entry.name}: {report.status}: {report.message}")
    return report, time.monotonic() - started


def _import_s(archive: Path, store: Path) -> float:
    """The wall time of importing ``archive`` into the store at ``store`` (a fresh one: the
    first import; the same one again: the cached re-import, which finds it by digest)."""
    started = time.monotonic()
    import_archive(archive, EnvironmentStore(store), ImageLimits())
    return time.monotonic() - started


def _env_name(report: EvaluationReport) -> str:
    environment = report.environment
    return environment.name if environment is not None else "?"


def main() -> int:
    """Run the entry plain and with its image, alternately; print per-case times and ratios."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    settings = Settings.from_env()
    built = ensure_environment(
        declared_environment(resolve_challenge(CHALLENGE), None), settings
    ).built
    scratch = Path(tempfile.mkdtemp(prefix="proctor-entryimage-bench-", dir="/var/tmp"))
    scratch.chmod(0o755)
    try:
        challenge = _challenge(scratch / "challenge")
        plain = scratch / "plain"
        shutil.copytree(bundled_root() / CHALLENGE / "baseline", plain)
        image = scratch / "image"
        shutil.copytree(plain, image)
        archive = image / "image.tar"
        export_oci(built, archive)
        archive_mb = archive.stat().st_size / 2**20
        first_import_s = _import_s(archive, scratch / "store")
        cached_import_s = min(_import_s(archive, scratch / "store") for _ in range(3))
        shutil.rmtree(scratch / "store")
        for folder in (challenge, plain, image):
            _readable(folder)
        warm = {name: _run(entry, challenge, settings)[0] for name, entry in
                (("plain", plain), ("image", image))}  # fmt: skip
        print(f"environments: plain {_env_name(warm['plain'])}, image {_env_name(warm['image'])}"
              f" ({archive_mb:.0f} MiB OCI archive of the declared environment)")  # fmt: skip
        per_case: dict[str, list[float]] = {"plain": [], "image": []}
        whole: dict[str, list[float]] = {"plain": [], "image": []}
        cases = 0
        for _ in range(rounds):
            order = [("plain", plain), ("image", image)]
            random.shuffle(order)
            for name, entry in order:
                report, wall_s = _run(entry, challenge, settings)
                exam_s, cases = _stage(report, "exam")
                per_case[name].append(exam_s / max(cases, 1))
                whole[name].append(wall_s)
        best = {name: min(times) for name, times in per_case.items()}
        ratio = best["image"] / best["plain"]
        runs = {name: min(times) for name, times in whole.items()}
        print(f"exam: {cases} cases, one at a time; best of {rounds} rounds in a random order")
        print(f"  per case, plain (declared environment): {best['plain'] * 1000:8.1f} ms")
        print(f"  per case, entry image:                  {best['image'] * 1000:8.1f} ms"
              f"  ({ratio:.3f}x the plain run)")  # fmt: skip
        print(f"whole run, plain: {runs['plain']:.2f} s; with the image (a cached re-import): "
              f"{runs['image']:.2f} s ({runs['image'] / runs['plain']:.2f}x)")  # fmt: skip
        print(f"import of the archive, first: {first_import_s:.2f} s; cached re-import: "
              f"{cached_import_s:.3f} s (best of 3)")  # fmt: skip
        overhead = ratio - 1
        verdict = "met" if overhead <= GOAL else "NOT met"
        print(f"overhead per case: {overhead * 100:+.1f} % (goal <= {GOAL * 100:.0f} %): {verdict}")
        return 0 if overhead <= GOAL else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
