"""Import, check, kit and run every real bundle found under a folder; compare with direct runs.

Usage::

    .venv/bin/python bench/real_bundles.py FOLDER [--only TEXT] [--work DIR] [--venvs DIR]
        [--json FILE] [--no-kit] [--environment TEXT=DIR ...]

FOLDER holds Codabench/CodaLab bundles (a folder with ``competition.yaml``, or a zip holding
one) and EvalAI challenge folders (``challenge_config.yaml``), as checked out from public
repositories (none of them is part of Proctor). For each one the script runs, through the
``proctor`` command line as an organizer would:

1. ``proctor challenge import SOURCE DEST --json`` (a refusal is reported with its message);
2. ``proctor challenge check DEST`` and ``proctor kit DEST KIT``;
3. ``proctor run UPLOAD --challenge DEST --phase P --json`` of every sample submission, on
   every phase: the bundle's ``solutions`` (``kit/solutions/``), every zip or folder named
   ``*submission*`` or ``*sample*`` in the bundle's folder or beside it (not the programs),
   anything in a ``proctor-samples/`` folder of the bundle or beside it (uploads made by
   hand from the bundle's own data, in its documented format), and for EvalAI the
   ``*submission*`` files at the challenge's root (zipped, as Proctor's upload of that file);
4. each task's own program run directly, outside any sandbox, on the same upload
   (``tests/support/bundle_direct.py``: the Codabench layout with real paths, or EvalAI's
   ``evaluate()`` called as its worker calls it), with a Python whose libraries are the
   challenge environment's lock (a virtual environment built once under ``--venvs``).

It prints one row per (submission, phase, task): Proctor's scores, the direct run's, and
``same`` (every declared metric equal, timing columns aside), ``both fail`` (the program fails
or writes no scores when run directly, or a ``NaN`` Codabench cannot store, and Proctor reports a
failure), ``random`` (two direct
runs differ from each other too: an unseeded program; the same metrics were reported),
``refused`` (Codabench would run the upload as a program where Proctor refuses it at prep, by
design: a program sent to a challenge taking results, a command beside an ingestion
program), ``quiz fails`` (the direct run scores, but Proctor's quiz, which runs the ingestion
program on the phase's sample data before any hidden data, failed: a result zip sent to a
code task with sample data, by design), or ``DIFFERENT``. Exit status 1 when a row differs.
``make test`` runs look-alikes written for the purpose (``tests/support/bundle_fixtures.py``,
``tests/support/evalai_challenge.py``); ``tests/services/local/test_bundle_examples.py`` runs
the same comparison
under pytest when ``PROCTOR_BUNDLE_EXAMPLES`` or ``PROCTOR_EVALAI_EXAMPLES`` names a folder.
docs/import-bundles.md lists the real bundles checked so far.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from bundle_direct import RefusedByDesignError, direct_scores

from proctor.resolve import load_challenge
from proctor.spec.model import Challenge, Task

PROCTOR = Path(sys.executable).parent / "proctor"
TIMINGS = frozenset({"duration", "time", "elapsed", "runtime", "exec_time"})
"""Columns measuring how long the code ran: they differ between any two runs."""
MARKERS = ("competition.yaml", "challenge_config.yaml")
PROGRAM_FOLDERS = ("scoring_program", "ingestion_program", "program", "evaluation_script")


@dataclass
class Row:
    """One comparison (or one bundle's import, check or kit outcome)."""

    bundle: str
    step: str
    submission: str = ""
    phase: str = ""
    task: str = ""
    proctor: dict[str, Any] = field(default_factory=dict)
    direct: dict[str, Any] | None = None
    verdict: str = ""
    note: str = ""


def proctor(*args: str, timeout: float = 3600) -> tuple[int, Any, str]:
    """Run the ``proctor`` CLI; (exit status, parsed ``--json`` stdout or None, stderr)."""
    done = subprocess.run(
        [str(PROCTOR), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    try:
        answer = json.loads(done.stdout) if done.stdout.strip() else None
    except json.JSONDecodeError:
        answer = None
    return done.returncode, answer, done.stderr.strip()


def find_bundles(root: Path) -> list[Path]:
    """Folders holding a bundle's YAML (not inside another one), and zips holding one."""
    found: list[Path] = []
    for marker in MARKERS:
        for path in sorted(root.rglob(marker)):
            folder = path.parent
            if any(parent in found for parent in folder.parents):
                continue
            found.append(folder)
    for archive in sorted(root.rglob("*.zip")):  # a zip inside a bundle's folder too
        if not zipfile.is_zipfile(archive) or "proctor-samples" in archive.parts:
            continue
        with zipfile.ZipFile(archive) as zipped:
            names = [Path(name) for name in zipped.namelist()]
        if any(name.name in MARKERS and len(name.parts) <= 2 for name in names):
            found.append(archive)
    return sorted(found)


def _is_sample(path: Path) -> bool:
    name = path.name.lower()
    if path.name in PROGRAM_FOLDERS or name.endswith((".ipynb", ".md", ".py", ".yaml")):
        return False
    if name == "proctor-samples":
        return False
    if path.is_file() and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zipped:  # a bundle named *submission*: not a sample
            if any(Path(item).name in MARKERS for item in zipped.namelist()):
                return False
    return ("submission" in name or "sample" in name) and (
        path.is_dir() or path.suffix.lower() == ".zip"
    )


def samples(bundle: Path, dest: Path) -> list[Path]:
    """The sample submissions of a Codabench/CodaLab bundle (see the module docstring)."""
    found = sorted(path for path in (dest / "kit/solutions").glob("*") if path.is_dir())
    if bundle.is_dir():
        kits = [path for path in bundle.glob("*starting_kit*") if path.is_dir()]
        places = [bundle, bundle.parent, *kits]
        for place in places:
            found += sorted(path for path in place.iterdir() if _is_sample(path))
        found += sorted((bundle / "proctor-samples").glob("*"))
    else:
        found += sorted(path for path in bundle.parent.iterdir() if _is_sample(path))
        found += sorted((bundle.parent / "proctor-samples").glob("*"))
    unique: list[Path] = []
    for path in found:
        if path not in unique and path != bundle and not (path / "competition.yaml").exists():
            unique.append(path)
    return unique


def evalai_samples(bundle: Path, scratch: Path) -> list[Path]:
    """EvalAI sample files at the challenge's root, each zipped as Proctor's upload."""
    uploads = []
    extra = sorted((bundle / "proctor-samples").glob("*")) if bundle.is_dir() else []
    found = [path for path in sorted(bundle.glob("*submission*")) if _is_sample(path)]
    found += [path for path in sorted(bundle.glob("*submission*")) if path.is_file()
              and path.suffix.lower() in (".json", ".csv", ".txt", ".tsv", ".npy")]  # fmt: skip
    for path in [*dict.fromkeys(found), *extra]:
        if not path.is_file():
            continue
        upload = scratch / f"{path.parent.name}-{path.name}.zip"
        with zipfile.ZipFile(upload, "w") as zipped:
            zipped.write(path, path.name)
        uploads.append(upload)
    return uploads


def venv_python(environment: Any, root: Path, venvs: Path) -> str:
    """A Python with the environment's libraries: a virtual environment built from its lock.

    ``host`` (or a declaration without Python libraries) is this interpreter.
    """
    python_spec = getattr(environment, "python", None)
    if python_spec is None:
        return sys.executable
    lock = python_spec.lock if python_spec.lock.is_absolute() else root / python_spec.lock
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:12]
    folder = venvs / f"{environment.name}-{digest}"
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--require-hashes", "-r", str(lock)],
            check=True,
        )
    return str(python)


def task_python(challenge: Challenge, task: Task, venvs: Path) -> str:
    """The interpreter for the task's program: its scorer's, else its, else the challenge's."""
    scorer_environment = getattr(task.scorer, "environment", None)
    chosen = scorer_environment or task.environment or challenge.environment
    return venv_python(chosen, challenge.root, venvs)


def same(proctor_scores: dict[str, Any], direct: dict[str, Any], computed: set[str]) -> bool:
    """Every metric the program writes equal (timing columns aside; NaN equals NaN)."""
    for metric, value in proctor_scores.items():
        if metric.lower() in TIMINGS or metric in computed:
            continue
        expected = direct.get(metric)
        try:
            wanted = float(expected)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        if not (value == wanted or (math.isnan(value) and math.isnan(wanted))):
            return False
    return True


def compare_runs(
    name: str, challenge: Challenge, uploads: list[Path], work: Path, venvs: Path
) -> list[Row]:
    """Run every upload on every phase through ``proctor run`` and directly."""
    rows = []
    for number, upload in enumerate(uploads):
        for phase in challenge.phases:
            status, answer, stderr = proctor(
                "run", str(upload), "--challenge", str(challenge.root), "--phase", phase.name,
                "--json",
            )  # fmt: skip
            report = answer or {}
            for task in (task for task in challenge.tasks if task.name in phase.tasks):
                place = work / f"direct-{number}-{phase.name}-{task.name}"
                python = task_python(challenge, task, venvs)
                scores = (report.get("scores") or {}).get(task.name, {})
                try:
                    direct = direct_scores(challenge, task, upload, place, python)
                except (
                    RefusedByDesignError
                ) as refused:  # Codabench would run it; Proctor refuses it
                    row = Row(name, "run", upload.name, phase.name, task.name, scores, None)
                    row.verdict = "refused" if report.get("failure") == "entry" else "DIFFERENT"
                    row.note = f"{refused}: {report.get('message') or stderr[-300:]}"
                    rows.append(row)
                    continue
                row = Row(name, "run", upload.name, phase.name, task.name, scores, direct)
                if direct is None:
                    row.verdict = "both fail" if report.get("failure") else "DIFFERENT"
                elif report.get("status") != "scored":
                    row.verdict = "quiz fails" if _quiz_failed(report) else "DIFFERENT"
                else:
                    made = set(getattr(task.scorer, "computed", {}))
                    row.verdict = "same" if same(scores, direct, made) else "DIFFERENT"
                    if row.verdict == "DIFFERENT":
                        again = direct_scores(
                            challenge, task, upload, place.with_name(place.name + "-again"),
                            python,
                        )  # fmt: skip
                        if again != direct and set(scores) - made <= set(direct):
                            row.verdict = "random"  # the program's own runs differ too
                row.note = report.get("message") or stderr[-300:] if status else ""
                rows.append(row)
    return rows


def _quiz_failed(report: dict[str, Any]) -> bool:
    """True when the quiz failed: the code ran on the sample data first, and failed there."""
    return any(
        str(stage.get("name", "")).split(":")[-1] == "quiz" and stage.get("status") == "failed"
        for stage in report.get("stages") or []
    )


def bundle_rows(
    bundle: Path, work: Path, venvs: Path, kit: bool, environment: str | None = None
) -> list[Row]:
    """Import (with ``environment`` when given), check, kit and compare one bundle."""
    name = bundle.name
    dest = work / "challenge"
    chosen = ["--environment", environment] if environment else []
    status, answer, stderr = proctor(
        "challenge", "import", str(bundle), str(dest), "--json", *chosen
    )
    if status != 0:
        message = ((answer or {}).get("error") or {}).get("message") or stderr
        return [Row(name, "import", verdict="refused", note=message)]
    rows = [Row(name, "import", verdict=answer["format"], note="; ".join(answer["warnings"]))]
    status, _, stderr = proctor("challenge", "check", str(dest))
    rows.append(Row(name, "check", verdict="ready" if status == 0 else "problems", note=stderr))
    if kit:
        status, _, stderr = proctor("kit", str(dest), str(work / "kit"))
        rows.append(Row(name, "kit", verdict="written" if status == 0 else "failed", note=stderr))
    challenge = load_challenge(dest)
    if answer["format"] == "evalai":
        uploads = evalai_samples(bundle, work)
    else:
        uploads = samples(bundle, dest)
    if not uploads:
        rows.append(Row(name, "run", verdict="no sample"))
    return rows + compare_runs(name, challenge, uploads, work, venvs)


def _short(scores: dict[str, Any] | None) -> str:
    if scores is None:
        return "-"
    return ", ".join(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}"
                     for key, value in scores.items())  # fmt: skip


def print_table(rows: list[Row]) -> None:
    """One line per row: bundle, step, submission, phase/task, verdict, scores."""
    for row in rows:
        where = f"{row.phase}/{row.task}" if row.task else ""
        print(f"{row.bundle:40.40} {row.step:6} {row.submission:28.28} {where:36.36} {row.verdict}")
        if row.step == "run":
            print(f"    proctor: {_short(row.proctor)}\n    direct:  {_short(row.direct)}")
        if row.note:
            print(f"    note: {row.note[:400]}")


def main() -> int:
    """Parse the arguments, run every bundle found, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--only", default="", help="only bundles whose path holds this text")
    parser.add_argument("--work", type=Path, help="where to keep the imported challenges")
    parser.add_argument("--venvs", type=Path, default=Path.home() / ".cache/proctor-real-venvs")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--no-kit", action="store_true")
    parser.add_argument(
        "--environment",
        action="append",
        default=[],
        metavar="TEXT=DIR",
        help="import the bundles whose path holds TEXT with --environment DIR",
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="proctor-real-"))
    work.mkdir(parents=True, exist_ok=True)
    work.chmod(0o755)  # the sandbox's unprivileged users read the imported challenges
    rows: list[Row] = []
    for number, bundle in enumerate(find_bundles(args.folder)):
        if args.only not in str(bundle):
            continue
        place = work / f"{number:03d}-{bundle.name}"
        place.mkdir(parents=True, exist_ok=True)
        rules = [rule.split("=", 1) for rule in args.environment]
        environment = next((env for text, env in rules if text in str(bundle)), None)
        found = bundle_rows(bundle.resolve(), place, args.venvs, not args.no_kit, environment)
        print_table(found)
        rows += found
    if args.json:
        args.json.write_text(json.dumps([asdict(row) for row in rows], indent=1, default=str))
    differ = [row for row in rows if row.verdict == "DIFFERENT"]
    print(f"\n{len(rows)} rows, {len(differ)} different; work folder: {work}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
