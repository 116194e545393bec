"""Use case: the demo.

Every bundled challenge's baseline and a constant-prediction entry are evaluated end to end in
the sandbox (by the face, through ``run_entry``) and ranked on the challenge's leaderboard.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from proctor.challenges import bundled_names, bundled_root
from proctor.leaderboard import Standing, build_leaderboard
from proctor.pipeline.report import EvaluationReport
from proctor.protocols.records import list_records
from proctor.services.catalog import BASELINE_FOLDER, resolve_challenge
from proctor.spec import Challenge
from proctor.types import RunStatus

CONSTANT = 0.5
CONSTANT_NEXT = f"""#!/bin/sh
# Predicts {CONSTANT:.3f} for every sample: the chance-level reference on the leaderboard.
set -e
samples=$(head -n 1 "$PROCTOR_DATA/$1.hea" | cut -d ' ' -f 4)
yes {CONSTANT:.3f} | head -n "$samples" > "$1.vec"
"""


def _header_samples(header: Path) -> int:
    fields = header.read_text(encoding="utf-8").splitlines()[0].split()
    return int(fields[3])


def write_constant_entry(challenge: Challenge, dest: Path) -> Path:
    """A records entry predicting a constant, with its quiz answers (WFDB inputs only)."""
    dest.mkdir(parents=True)
    for name, text in (("setup.sh", "#!/bin/sh\nexit 0\n"), ("next.sh", CONSTANT_NEXT)):
        (dest / name).write_text(text, encoding="utf-8")
        (dest / name).chmod(0o755)
    for name in ("AUTHORS.txt", "LICENSE.txt"):
        (dest / name).write_text("Proctor demo\n", encoding="utf-8")
    answers = dest / "answers"
    answers.mkdir()
    for task in challenge.tasks:
        for record in list_records(task.public_inputs):
            samples = _header_samples(task.public_inputs / f"{record}.hea")
            (answers / f"{record}.vec").write_text(f"{CONSTANT:.3f}\n" * samples)
    return dest


def demo_entries(challenge: Challenge, scratch: Path) -> list[tuple[str, Path]]:
    """(label, entry) pairs the demo evaluates for ``challenge``."""
    entries = []
    baseline = challenge.root / BASELINE_FOLDER
    if baseline.is_dir():
        entries.append(("baseline", baseline))
    if challenge.protocol.kind == "records":
        entries.append(("constant-0.5", write_constant_entry(challenge, scratch / "constant")))
    return entries


def demo_leaderboard(
    challenge: Challenge, reports: Sequence[tuple[str, EvaluationReport]]
) -> list[Standing]:
    """Rank the scored demo entries by the challenge's leaderboard metric (none without one)."""
    board = challenge.leaderboard
    if board is None:
        return []
    tasks = [t.name for t in challenge.tasks]
    results = {
        label: {task: report.scores.get(task, {}).get(board.metric, float("nan")) for task in tasks}
        for label, report in reports
        if report.status is RunStatus.SCORED
    }
    direction = challenge.leaderboard_direction()
    return build_leaderboard(results, tasks=tasks, higher_is_better=direction.higher_is_better)


def demo_challenges() -> list[Challenge]:
    """Every bundled challenge, loaded and checked."""
    return [resolve_challenge(str(bundled_root() / name)) for name in bundled_names()]
