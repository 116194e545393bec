"""A scripted entry for pipeline rule tests: ``FakeSandbox`` handlers that play setup/next.

The handler writes each record's output into the home mount the way ``next.sh`` would, so the
pipeline's rules (disclosure, dry run, stop on the first quiz failure, rerun, task independence)
are tested in milliseconds; the real-bwrap suites test the same flows end to end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from toy_challenge import good_answer

from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.report import EvaluationReport
from proctor.pipeline.submission import Submission, evaluate_submission
from proctor.resolve import load_challenge
from proctor.sandbox.base import Outcome
from proctor.sandbox.fake import FakeRequest, FakeSandbox
from proctor.store.runfolder import RunFolder

Answer = Callable[[str], "str | Outcome"]
"""What the fake ``next.sh`` does for a record: the text it writes, or a failed ``Outcome``."""


@dataclass
class ScriptedEntry:
    """Plays an entry: ``setup`` outcome, and per record the output text or a failure."""

    answer: Answer = lambda record: good_answer()
    setup: Outcome = field(default_factory=lambda: Outcome(exit_status=0, stdout="set up\n"))
    ran: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: FakeRequest) -> Outcome:
        if request.argv[0] == "./setup.sh":
            return self.setup
        record = request.argv[-1]
        with self.lock:
            self.ran.append(record)
        result = self.answer(record)
        if isinstance(result, Outcome):
            return result
        request.host_path(f"/entry/{record}.vec").write_text(result)
        return Outcome(exit_status=0, wall_s=0.01, cpu_s=0.01, peak_memory_bytes=1 << 20)


def evaluate(
    challenge_dir: Path,
    entry_dir: Path,
    entry: ScriptedEntry,
    *,
    dry_run: bool = False,
    jobs: int = 1,
    cancel: CancelToken | None = None,
    phase: str | None = None,
) -> EvaluationReport:
    """Evaluate ``entry_dir`` (its files matter only for the manifest and answers)."""
    challenge = load_challenge(challenge_dir)
    folder = RunFolder.create(challenge_dir.parent / "runs", challenge.name)
    submission = Submission(
        challenge,
        challenge.phase(phase),
        entry_dir,
        folder,
        jobs=jobs,
        dry_run=dry_run,
        cancel=cancel or CancelToken(),
    )
    return evaluate_submission(submission, FakeSandbox(entry))
