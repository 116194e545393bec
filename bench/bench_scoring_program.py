"""Overhead of running an organizer's scoring program in the sandbox over running it bare.

Run: ``python bench/bench_scoring_program.py [N] [CASES]`` (default N=20 rounds, 200 cases).
The program is a plain Python MAE scorer (standard library) reading every case's output and
its reference, with per-case values, as ``proctor challenge new``'s scorers do. Each round
runs, in a random order:

- ``bare``: ``python3 score.py`` as a plain subprocess on the host's folders, a fresh scores
  folder, then ``scores.json`` read and checked as Proctor checks it;
- ``scorer``: the scorer kind end to end as the score stage calls it
  (``scoring.program.run_scoring_program`` through ``pipeline.program_runs``): a sandbox
  session of its own (a slot), the program, references and outputs staged (hard links), the
  case list written, a capped workspace for the scores, the bwrap run, ``scores.json`` read
  back without following links and checked against the declared metrics.

Both use the host's ``/usr/bin/python3`` (``environment: host``), so the difference is the
sandbox, the mounts and the copies alone. Where the host has a writable cpu cgroup, the bare
peer runs in a cpu group of a slot of its own, as every sandboxed run does (one weight per
evaluation): on a loaded host the comparison is then between equals, not between a sandboxed
run sharing the ``proctor`` group's weight and a bare one outside it. It prints the medians,
the overhead per evaluation (the target: at most 50 ms) and the ratio, all measured in this
run.
"""

from __future__ import annotations

import json
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

from proctor.pipeline.program_runs import SandboxProgramRunner
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.cgroups import Cgroup, CgroupHost
from proctor.scoring.program import run_scoring_program
from proctor.scoring.program_scores import read_scores
from proctor.settings import Settings
from proctor.spec.scorer import ScoringProgram

TARGET_MS = 50.0
PYTHON = "/usr/bin/python3"
SCORE_PY = """\
import json, os
from pathlib import Path

reference = Path(os.environ["PROCTOR_REFERENCE"])
outputs = Path(os.environ["PROCTOR_OUTPUTS"])
template = os.environ["PROCTOR_OUTPUT_TEMPLATE"]
rows = {}
for case in Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split():
    truth = float((reference / f"{case}.txt").read_text())
    try:
        guess = float((outputs / template.format(record=case)).read_text())
    except (OSError, ValueError):
        guess = 0.0
    rows[case] = {"mae": abs(guess - truth), "within_1": float(abs(guess - truth) <= 1)}
scores = {name: sum(row[name] for row in rows.values()) / len(rows) for name in ("mae", "within_1")}
scores["cases"] = rows
Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
"""


def prepare(root: Path, cases: int) -> tuple[ScoringProgram, Path, Path, list[str]]:
    """The program, its references and an entry's outputs for ``cases`` cases."""
    program, references, outputs = root / "scoring", root / "reference", root / "outputs"
    for folder in (program, references, outputs):
        folder.mkdir(parents=True)
        folder.chmod(0o755)
    (program / "score.py").write_text(SCORE_PY)
    names = [f"c{index:04d}" for index in range(cases)]
    for index, case in enumerate(names):
        (references / f"{case}.txt").write_text(f"{index * 0.5}\n")
        (outputs / f"{case}.txt").write_text(f"{index * 0.5 + (index % 3) * 0.4}\n")
    spec = ScoringProgram.model_validate(
        {
            "program": str(program),
            "command": [PYTHON, "score.py"],
            "metrics": {
                "mae": {"direction": "lower"},
                "within_1": {"direction": "higher"},
            },
        }
    )
    return spec, references, outputs, names


def bare(
    spec: ScoringProgram,
    references: Path,
    outputs: Path,
    cases: list[str],
    group: Cgroup | None = None,
) -> float:
    """Run the program as a plain subprocess (in ``group`` when given); its MAE."""
    with tempfile.TemporaryDirectory() as scratch:
        listing = Path(scratch) / "cases.txt"
        listing.write_text("".join(f"{case}\n" for case in cases))
        scores = Path(scratch) / "scores"
        scores.mkdir()
        env = {
            **os.environ,
            "PROCTOR_REFERENCE": str(references),
            "PROCTOR_OUTPUTS": str(outputs),
            "PROCTOR_OUTPUT_TEMPLATE": "{record}.txt",
            "PROCTOR_CASES_FILE": str(listing),
            "PROCTOR_SCORES_DIR": str(scores),
        }
        join = group.join_files if group is not None else []

        def enter_group() -> None:
            for path in join:
                path.write_text(str(os.getpid()))

        subprocess.run(
            spec.command, cwd=spec.program, env=env, check=True, capture_output=True,
            preexec_fn=enter_group if join else None,
        )  # fmt: skip
        summary, _, _ = read_scores((scores / "scores.json").read_bytes(), spec, cases)
    return summary["mae"]


def timed(action: Callable[[], float]) -> tuple[float, float]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def main(rounds: int = 20, cases: int = 200) -> None:
    """Measure both ways ``rounds`` times, in a random order each round; print the figures."""
    root = Path(tempfile.mkdtemp(prefix="proctor-bench-scoring-", dir="/tmp"))
    root.chmod(0o755)
    settings = Settings(work_root=root / "work")
    sandbox = BwrapSandbox(settings)
    with sandbox.session() as held:  # the bare peer's slot: a cpu weight of its own
        group = CgroupHost(settings.cgroup_root).create(
            memory_bytes=2 * 1024**3, processes=64, slot=held.slot
        )
        try:
            measured = measure(sandbox, root, rounds, cases, group)
        finally:
            if group is not None:
                group.remove()
            shutil.rmtree(root, ignore_errors=True)
    report(measured, rounds, cases, in_group=group is not None)


def measure(
    sandbox: BwrapSandbox, root: Path, rounds: int, cases: int, group: Cgroup | None
) -> dict[str, list[float]]:
    """Seconds of each way, ``rounds`` times in a random order each round."""
    spec, references, outputs, names = prepare(root / "challenge", cases)
    runner = SandboxProgramRunner(sandbox, root / "scratch")

    def scored() -> float:
        result = run_scoring_program(
            spec, runner, outputs=outputs, references=references, cases=names,
            template="{record}.txt",
        )  # fmt: skip
        return result.summary["mae"]

    ways: dict[str, Callable[[], float]] = {
        "bare": lambda: bare(spec, references, outputs, names, group),
        "scorer": scored,
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    values: dict[str, float] = {}
    for name, action in ways.items():  # warm up: page cache, first slot
        values[name] = action()
    if values["bare"] != values["scorer"]:
        raise SystemExit(f"the sandboxed program scored differently: {values}")
    for _ in range(rounds):
        order = list(ways)
        random.shuffle(order)
        for name in order:
            elapsed, _ = timed(ways[name])
            seconds[name].append(elapsed)
    return seconds


def report(seconds: dict[str, list[float]], rounds: int, cases: int, *, in_group: bool) -> None:
    """Print the medians, the overhead and the ratio as one JSON object."""
    medians = {name: statistics.median(found) * 1000 for name, found in seconds.items()}
    overhead = medians["scorer"] - medians["bare"]
    print(
        json.dumps(
            {
                "rounds": rounds,
                "cases": cases,
                "median_ms": {name: round(value, 2) for name, value in medians.items()},
                "overhead_ms": round(overhead, 2),
                "ratio": round(medians["scorer"] / medians["bare"], 3),
                "target_ms": TARGET_MS,
                "within_target": overhead <= TARGET_MS,
                "same_scores": True,
                "bare_in_slot_cpu_group": in_group,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
