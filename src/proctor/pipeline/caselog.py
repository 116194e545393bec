"""The organizer's record of every case and stage: status, resources and log tails, JSON lines.

It lives in the run folder (``cases.jsonl``), outside every sandbox and never in a participant's
report: this is where an organizer looks when an exam case failed, since the participant only
sees counts, and where the setup script's output is kept.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from proctor.pipeline.disclosure import StageResult
from proctor.protocols.base import CaseRun
from proctor.types import Stage

LOG_TAIL_CHARS = 2000


class CaseLog:
    """Appends one JSON object per finished case or stage to ``path``; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def record(self, task: str, stage: Stage, run: CaseRun) -> None:
        """Append ``run``: ok, problem, exit status, wall/CPU s, peak bytes, log tails."""
        outcome = run.outcome
        self._write(
            {
                "task": task,
                "stage": str(stage),
                "record": run.case,
                "ok": run.ok,
                "problem": run.problem,
                "exit_status": outcome.exit_status,
                "signal": outcome.signal,
                "timed_out": outcome.timed_out,
                "memory_exceeded": outcome.memory_exceeded,
                "wall_s": round(outcome.wall_s, 4),
                "cpu_s": round(outcome.cpu_s, 4),
                "peak_memory_bytes": outcome.peak_memory_bytes,
                "stdout_tail": outcome.stdout[-LOG_TAIL_CHARS:],
                "stderr_tail": outcome.stderr[-LOG_TAIL_CHARS:],
            }
        )

    def record_stage(self, task: str, result: StageResult) -> None:
        """Append a finished stage: status, undisclosed headline, wall s and its log tails."""
        self._write(
            {
                "task": task,
                "stage": str(result.stage),
                "record": None,
                "ok": not result.failed,
                "problem": result.headline if result.failed else "",
                "wall_s": round(result.wall_s, 4),
                **{f"{name}_tail": text[-LOG_TAIL_CHARS:] for name, text in result.logs},
            }
        )

    def _write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)
