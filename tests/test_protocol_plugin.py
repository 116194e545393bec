"""A new protocol is one driver module and a registration: no pipeline file changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from proctor.errors import ConfigError
from proctor.formats.arousal_mat import write_arousal_reference
from proctor.pipeline.submission import Submission, evaluate_submission
from proctor.protocols.registry import register_driver, registered_kinds, unregister_driver
from proctor.sandbox.base import Outcome
from proctor.sandbox.fake import FakeRequest, FakeSandbox
from proctor.spec import load_challenge
from proctor.store.runfolder import RunFolder
from proctor.types import RUNNABLE_BUILTIN_PROTOCOLS, RunStatus
from toy_protocol import SolveDriver

LENGTH = 30


@pytest.fixture
def solve_protocol() -> Iterator[None]:
    register_driver(SolveDriver)
    yield
    unregister_driver("solve")


def write_challenge(root: Path) -> Path:
    labels = np.zeros(LENGTH)
    labels[LENGTH // 2 :] = 1
    for folder, cases in (("public", ("p1",)), ("hidden", ("h1", "h2"))):
        (root / folder).mkdir(parents=True)
        for case in cases:
            (root / folder / f"{case}.case").write_text(f"{LENGTH}\n")
    (root / "refs").mkdir()
    for case in ("h1", "h2"):
        write_arousal_reference(root / "refs" / f"{case}-arousal.mat", labels)
    spec = {
        "name": "solve-toy",
        "title": "A plug-in protocol",
        "protocol": {"kind": "solve", "case_s": 3},
        "tasks": [{"name": "main", "public_inputs": "public", "hidden_inputs": "hidden",
                   "hidden_references": "refs", "scorer": "physionet2018"}],
        "phases": [{"name": "final", "tasks": ["main"]}],
    }  # fmt: skip
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def solver(request: FakeRequest) -> Outcome:
    _, source, target = request.argv
    length = int(request.host_path(source).read_text())
    values = ["0.1"] * (length // 2) + ["0.9"] * (length - length // 2)
    request.host_path(f"/work/{target}").write_text("\n".join(values) + "\n")
    return Outcome(exit_status=0)


def test_the_registered_protocol_loads_runs_and_is_scored(
    tmp_path: Path, solve_protocol: None
) -> None:
    challenge = load_challenge(write_challenge(tmp_path / "challenge"))
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "solve").write_text("#!/bin/sh\n")
    (entry / "solve").chmod(0o755)
    folder = RunFolder.create(tmp_path / "runs", "solve")
    sandbox = FakeSandbox(solver)
    report = evaluate_submission(
        Submission(challenge, challenge.phase(None), entry, folder), sandbox
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["main"]["auprc"] == pytest.approx(1.0)
    assert [r.argv[0] for r in sandbox.requests] == ["./solve"] * 3
    assert "solve" in registered_kinds()


def test_without_its_driver_the_protocol_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"protocol\.kind: unknown protocol kind 'solve'"):
        load_challenge(write_challenge(tmp_path / "challenge"))


def test_the_builtin_drivers_are_the_runnable_builtin_kinds() -> None:
    assert set(registered_kinds()) == set(RUNNABLE_BUILTIN_PROTOCOLS)
