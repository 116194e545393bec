"""The ``records`` protocol (PhysioNet sandbox): ``setup.sh`` once, ``next.sh RECORD`` per case.

The entry's home is a size-capped writable workspace shown at ``/entry`` (also the working
folder); the case inputs are shown read-only at ``/data`` and named by ``PROCTOR_DATA``. After a
case, its declared output (``{record}.vec``) is taken out of the home by trusted host code.
References are never shown to the entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.protocols.outputs import collect_output, remove_output
from proctor.sandbox.base import Limits, Mount, Outcome, Sandbox
from proctor.spec.model import RecordsProtocol, StageLimits

HOME = "/entry"
DATA = "/data"


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One ``next.sh`` run: the sandbox outcome and the collected output (None if refused)."""

    record: str
    outcome: Outcome
    output: bytes | None
    problem: str = ""

    @property
    def ok(self) -> bool:
        """True when next.sh succeeded and wrote an acceptable output file."""
        return self.outcome.succeeded and self.output is not None and not self.problem

    @property
    def timed_out(self) -> bool:
        """True when the case ran out of time."""
        return self.outcome.timed_out


def list_records(folder: Path) -> list[str]:
    """Record names of a PhysioNet-style folder: its ``RECORDS`` file, else every ``*.hea``."""
    listing = folder / "RECORDS"
    if listing.is_file():
        names = [line.strip() for line in listing.read_text(encoding="utf-8").splitlines()]
        return [name for name in names if name]
    return sorted(path.stem for path in folder.glob("*.hea"))


class RecordsDriver:
    """Runs one entry's scripts in the sandbox under the challenge's limits."""

    def __init__(
        self,
        protocol: RecordsProtocol,
        limits: StageLimits,
        sandbox: Sandbox,
        *,
        slot: int = 0,
        parallel_runs: int = 1,
    ) -> None:
        self.protocol = protocol
        self.limits = limits
        self.sandbox = sandbox
        self.slot = slot
        self.parallel_runs = max(1, parallel_runs)

    def sandbox_limits(self, wall_s: float) -> Limits:
        """Sandbox limits of one run lasting at most ``wall_s`` seconds."""
        return Limits(
            wall_s=wall_s,
            memory_bytes=self.limits.memory_bytes,
            processes=self.limits.processes,
            # parallel cases share the slot uid, whose process count the kernel caps as a whole
            uid_processes=self.limits.processes * self.parallel_runs,
            file_size_bytes=self.limits.home_bytes,  # no single file can outgrow the home
            tmp_bytes=self.limits.tmp_bytes,
            log_bytes=self.limits.log_bytes,
        )

    def _env(self) -> dict[str, str]:
        return {"PROCTOR_DATA": DATA, "HOME": HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}

    def setup(self, home: Path, inputs: Path) -> Outcome:
        """Run the entry's setup script once, with the public inputs visible."""
        mounts = [Mount(home, HOME, writable=True), Mount(inputs, DATA)]
        return self.sandbox.run(
            [f"./{self.protocol.setup}"],
            mounts=mounts,
            limits=self.sandbox_limits(self.limits.setup_s),
            env=self._env(),
            cwd=HOME,
            slot=self.slot,
        )

    def run_case(self, home: Path, inputs: Path, record: str, *, wall_s: float) -> CaseRun:
        """Run ``next RECORD`` and take its output file out of the home."""
        output_name = self.protocol.output.format(record=record)
        remove_output(home, output_name)
        outcome = self.sandbox.run(
            [f"./{self.protocol.next}", record],
            mounts=[Mount(home, HOME, writable=True), Mount(inputs, DATA)],
            limits=self.sandbox_limits(wall_s),
            env=self._env(),
            cwd=HOME,
            slot=self.slot,
        )
        collected = collect_output(home, output_name, max_bytes=self.limits.output_bytes)
        remove_output(home, output_name)
        problem = "" if outcome.succeeded else f"{self.protocol.next} {outcome.describe()}"
        if not problem and collected.data is None:
            problem = collected.problem
        return CaseRun(record, outcome, collected.data, problem)

    def answer_for(self, entry_root: Path, record: str) -> bytes | None:
        """The answer the entry ships for a quiz record, or None if it ships none."""
        if self.protocol.answers is None:
            return None
        found = collect_output(
            entry_root, self.protocol.answers.format(record=record), max_bytes=1 << 30
        )
        return found.data
