"""The organizer's record of every case: status, resources and log tails, one JSON line each.

It lives in the run folder (``cases.jsonl``), outside every sandbox and never in a participant's
report: this is where an organizer looks when an exam case failed, since the participant only
sees counts.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from proctor.protocols.records import CaseRun

LOG_TAIL_CHARS = 2000


class CaseLog:
    """Appends one JSON object per finished case to ``path``; safe to call from case threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def record(self, stage: str, run: CaseRun) -> None:
        """Append ``run`` of ``stage``: ok, problem, exit status, wall/CPU s, peak bytes, logs."""
        outcome = run.outcome
        line = {
            "stage": stage,
            "record": run.record,
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
        text = json.dumps(line) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)
