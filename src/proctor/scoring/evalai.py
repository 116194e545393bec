"""The ``evalai`` scorer: an EvalAI evaluation script, run as EvalAI's worker runs it.

::

    scorer:
      evalai: evaluation_script/   # the package (``__init__.py``: ``from .main import evaluate``)
      phase: test                  # the phase codename ``evaluate`` is given
      split: test_split            # which split of ``result`` this task reports
      phase_splits: [train_split, test_split]  # optional: every split of the phase
      annotation: test_annotations.json   # the file in each case's reference folder
      metrics:                     # EvalAI's leaderboard labels, with their directions
        Accuracy: {direction: higher}
        F1_score: {direction: higher}
      labels: {F1_score: F1-score} # optional: a metric's EvalAI label, when they differ
      limits: {wall_s: 600}        # optional, as a scoring program's
      environment: codabench       # optional (default: the task's environment)

It is a scoring program whose program folder is the package and whose command is a small
driver (``evalai_driver.py``, shipped in this package and written into the run with its
settings, so the install path is never mounted): the driver finds the one submitted file
(given as it is: a zip stays a zip, as on EvalAI), calls ``evaluate(annotation, submission,
phase, submission_metadata=...)`` and writes the split's labels as ``scores.json``;
``submission_result`` goes to the organizer's log. ``result`` is read as EvalAI's worker reads
it: each entry reports the split that is its first key, and with ``phase_splits`` given, an
entry naming a split the phase lacks fails the run (EvalAI fails such a submission). On a
split without the annotation file (the public split of a predictions upload: EvalAI publishes
no annotations) nothing is scored: the summary is empty and the log says why.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from proctor.errors import ConfigError
from proctor.scoring.base import Scorer, ScorerKind, TaskScores
from proctor.scoring.program import run_scoring_program, score_request
from proctor.spec.programs import ProgramRequest, ProgramRunner
from proctor.spec.scorer import ProgramMounts, ScoringProgram

DRIVER_SOURCE = Path(__file__).with_name("evalai_driver.py")

EVALAI_SCORER = "evalai"
EVALAI_PACKAGE = "evaluation_script"
EVALAI_ROOT = "/scoring/evalai"
"""Where the package's parent folder is inside the sandbox (on the driver's ``sys.path``)."""
DRIVER_PATH = "/scoring/evalai_driver.py"
SETTINGS_PATH = "/scoring/evalai.json"


class EvalaiScorer(ScoringProgram):
    """``scorer: {evalai: DIR, phase, split, annotation, metrics}`` (see the module docstring)."""

    kind: Literal["evalai"] = "evalai"  # type: ignore[assignment]
    phase: str = Field(min_length=1)
    split: str = Field(min_length=1)
    annotation: str = Field(pattern=r"^[^/\\]{1,255}$")
    labels: dict[str, str] = Field(default_factory=dict)
    """``{metric: EvalAI label}`` where a label is no metric name (``F1-score``)."""
    phase_splits: tuple[str, ...] = ()
    """Every dataset split of the phase (the import writes them); none: not checked."""

    @model_validator(mode="before")
    @classmethod
    def _program_from_package(cls, data: Any) -> Any:
        """``evalai: DIR`` is the program folder; the command is the driver."""
        if not isinstance(data, dict):
            return data
        found = dict(data)
        if "program" in found or "command" in found or "mounts" in found:
            raise ValueError("an evalai scorer takes evalai: DIR, not program, command or mounts")
        if "evalai" not in found:
            raise ValueError("evalai: the evaluation script's folder is required")
        found["program"] = found.pop("evalai")
        found["command"] = ("python3", DRIVER_PATH)
        found["mounts"] = ProgramMounts(program=f"{EVALAI_ROOT}/{EVALAI_PACKAGE}")
        return found

    @model_validator(mode="after")
    def _split_of_its_phase(self) -> EvalaiScorer:
        """``phase_splits``, when given, holds the task's own ``split``."""
        if self.phase_splits and self.split not in self.phase_splits:
            raise ValueError(f"phase_splits must include the task's split {self.split!r}")
        return self


def evalai_request(
    spec: EvalaiScorer, outputs: Path, references: Path, cases: Sequence[str], template: str
) -> ProgramRequest:
    """The scoring program's run with the driver and its settings written into it."""
    base = score_request(spec, outputs, references, cases, template)
    settings = {
        "phase": spec.phase,
        "split": spec.split,
        "phase_splits": list(spec.phase_splits),
        "annotation": spec.annotation,
        "labels": spec.labels,
    }
    files = {
        **base.files,
        DRIVER_PATH: DRIVER_SOURCE.read_bytes(),
        SETTINGS_PATH: json.dumps(settings).encode(),
    }
    return dataclasses.replace(base, files=files)


def has_annotation(spec: EvalaiScorer, references: Path, cases: Sequence[str]) -> bool:
    """Whether ``references`` holds the annotation file (per case, or at its top)."""
    places = [references / case / spec.annotation for case in cases]
    return any(path.is_file() for path in [*places, references / spec.annotation])


def evalai_scorer(spec: EvalaiScorer, runner: ProgramRunner) -> Scorer:
    """The scorer running ``spec``'s evaluation script through ``runner``."""

    def score(outputs: Path, references: Path, cases: Sequence[str], template: str) -> TaskScores:
        if not has_annotation(spec, references, cases):
            return TaskScores({}, log=f"no {spec.annotation} in this split: nothing scored\n")
        request = evalai_request(spec, outputs, references, cases, template)
        return run_scoring_program(
            spec,
            runner,
            outputs=outputs,
            references=references,
            cases=cases,
            template=template,
            request=request,
        )

    return Scorer(spec.declaration, score, lambda _output: None)


def _make(settings: EvalaiScorer, runner: ProgramRunner | None, _check: object) -> Scorer:
    if runner is None:
        raise ConfigError("an EvalAI script runs in the sandbox: no sandbox was given to run it")
    return evalai_scorer(settings, runner)


KIND = ScorerKind(EVALAI_SCORER, EvalaiScorer, _make, "an EvalAI evaluation script")
"""The ``evalai`` scorer kind: ``scorer: {evalai: DIR, phase, split, annotation, metrics}``."""
