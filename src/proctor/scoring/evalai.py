"""The ``evalai`` scorer: an EvalAI evaluation script run in the sandbox by a small driver.

The scorer is a scoring program (``spec.evalai_scorer``) whose run also holds two small files:
the driver (``evalai_driver.py``, shipped in this package and written into the run, so the
install path is never mounted) and its settings (phase codename, split, annotation file).
On a split without the annotation file (the public split of a predictions upload: EvalAI
publishes no annotations) nothing is scored: the summary is empty and the log says why.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from proctor.errors import ConfigError
from proctor.scoring.base import Scorer, ScorerKind, TaskScores
from proctor.scoring.program import run_scoring_program, score_request
from proctor.spec.evalai_scorer import DRIVER_PATH, EVALAI_SCORER, SETTINGS_PATH, EvalaiScorer
from proctor.spec.programs import ProgramRequest, ProgramRunner

DRIVER_SOURCE = Path(__file__).with_name("evalai_driver.py")


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
