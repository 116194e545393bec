"""A test plug-in: a whole new protocol in one module outside Proctor's package.

``solve``: the entry ships one program, run per case as ``./solve IN OUT`` where ``IN`` is the
case's input file (``CASE.case`` holding a sample count) and ``OUT`` the file to write. No
setup. Nothing in ``proctor`` knows this protocol: the driver carries its kind, summary and
settings model, and a distribution declares it as the entry point
``solve = toy_protocol:SolveDriver`` of the group ``proctor.protocols``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from proctor.entries import Manifest
from proctor.protocols.base import CaseRun, Driver, Preparation
from proctor.protocols.outputs import collect_output
from proctor.sandbox.base import Limits, Mount, Outcome, RunSpec
from proctor.spec.protocols import ProtocolSettings


class SolveProtocol(ProtocolSettings):
    """``protocol: {kind: solve, program: solve, case_s: 5}``."""

    kind: Literal["solve"]
    program: str = "solve"
    case_s: float = Field(default=5.0, gt=0)
    stage_s: float = Field(default=60.0, gt=0)


def _settings(settings: ProtocolSettings) -> SolveProtocol:
    assert isinstance(settings, SolveProtocol)
    return settings


class SolveDriver(Driver):
    kind = "solve"
    settings_model = SolveProtocol
    summary = "toy: ./solve IN OUT per case"
    case_noun = "case"

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        return sorted(path.stem for path in folder.glob("*.case"))

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        return "{record}.vec"

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        program = _settings(settings).program
        return Manifest(required=(program,), executable=(program,))

    @property
    def case_s(self) -> float:
        return _settings(self.context.settings).case_s

    @property
    def stage_s(self) -> float:
        return _settings(self.context.settings).stage_s

    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        return Preparation("nothing to prepare", 0.0, Outcome(exit_status=0))

    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        limits = self.context.limits
        outcome = self.context.session.run(
            RunSpec(
                [
                    f"./{_settings(self.context.settings).program}",
                    f"/in/{case}.case",
                    f"{case}.vec",
                ],
                mounts=[Mount(home, "/work", writable=True), Mount(inputs, "/in")],
                limits=Limits(wall_s=wall_s, memory_bytes=limits.memory_bytes),
                cwd="/work",
            )
        )
        collected = collect_output(home, f"{case}.vec", max_bytes=limits.output_bytes)
        if not outcome.succeeded or collected.data is None:
            return CaseRun(case, outcome, None, collected.problem or outcome.describe())
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_bytes(collected.data)
        problem = self.validate_output(store)
        return CaseRun(case, outcome, None if problem else store, problem or "")

    def expected_answer(self, entry_root: Path, case: str) -> bytes | None:
        return None

    @property
    def answers_expected(self) -> bool:
        return False

    def compare(self, output: bytes, answer: bytes) -> str | None:
        return None
