"""The host's view of one python_model dataset: its budgets, its files, and its two runs.

A dataset folder holds ``info.json`` (``time_budget``, ``pred_time_budget`` in seconds),
``train.data``, ``train.solution`` and ``test.data``; its test labels are elsewhere (the
task's hidden references). Budgets are read here, on the host, and enforced from outside.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.errors import PlatformError
from proctor.sandbox.base import Outcome

if TYPE_CHECKING:
    from proctor.protocols.python_model import PythonModelProtocol

INFO = "info.json"
TEST_DATA = "test.data"
PROBLEM_PREFIX = "proctor-harness: "
PROBLEM_STATUS = 3
DATA_STATUS = 4
INFO_MAX_BYTES = 1 << 20
PROBLEM_CHARS = 300
"""The most of a harness line a headline quotes (the entry can print such lines itself)."""


@dataclass(frozen=True, slots=True)
class Budgets:
    """Seconds of training (``train`` + ``save``) and of prediction (``load`` + ``predict``)."""

    train_s: float
    predict_s: float


def _budget(info: dict[str, object], key: str, default: float, cap: float, where: Path) -> float:
    value = info.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise PlatformError(f"{where}: {key} must be a positive number of seconds")
    if not math.isfinite(float(value)):
        raise PlatformError(f"{where}: {key} must be finite")
    return min(float(value), cap)


def read_budgets(dataset: Path, protocol: PythonModelProtocol) -> Budgets:
    """The dataset's budgets from its ``info.json`` (the protocol's defaults where absent).

    A dataset the organizers shipped broken is a ``PlatformError``, never the entry's fault.
    """
    path = dataset / INFO
    try:
        with path.open("rb") as handle:
            info = json.loads(handle.read(INFO_MAX_BYTES))
    except (OSError, ValueError) as err:
        raise PlatformError(f"{path}: cannot read the dataset's info.json ({err})") from err
    if not isinstance(info, dict):
        raise PlatformError(f"{path}: expected a JSON object")
    cap = protocol.max_budget_s
    return Budgets(
        _budget(info, "time_budget", protocol.time_budget_s, cap, path),
        _budget(info, "pred_time_budget", protocol.pred_time_budget_s, cap, path),
    )


def test_rows(dataset: Path) -> int:
    """Rows of the dataset's ``test.data`` (lines after the header)."""
    with (dataset / TEST_DATA).open("rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    return max(lines - 1, 0)


def harness_problem(outcome: Outcome) -> str | None:
    """The harness's ``proctor-harness:`` line for a failed run (the last one, capped), if any."""
    for line in reversed(outcome.stderr.splitlines()):
        if line.startswith(PROBLEM_PREFIX):
            return line.removeprefix(PROBLEM_PREFIX).strip()[:PROBLEM_CHARS]
    return None


def combined(first: Outcome, second: Outcome | None) -> Outcome:
    """One case's outcome from its training and prediction runs.

    ``wall_s`` is the clocked time of both (training + prediction seconds, loading left out),
    the duration AutoWSL recorded; CPU adds up, peak memory is the larger; the logs and the
    status are those of the last run.
    """
    runs = (first,) if second is None else (first, second)
    last = runs[-1]
    return Outcome(
        exit_status=last.exit_status,
        signal=last.signal,
        timed_out=last.timed_out,
        memory_exceeded=last.memory_exceeded,
        output_exceeded=any(run.output_exceeded for run in runs),
        wall_s=sum(run.clocked_s for run in runs),
        cpu_s=sum(run.cpu_s for run in runs),
        peak_memory_bytes=max(run.peak_memory_bytes for run in runs),
        stdout=last.stdout,
        stderr=last.stderr,
        notes=last.notes,
        clock_started_s=None,
    )


def cores() -> int:
    """Cores a run may keep busy when the challenge sets no ``cpus_per_case``."""
    return os.cpu_count() or 1
