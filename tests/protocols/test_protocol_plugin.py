"""A new protocol is one module outside Proctor, declared as a ``proctor.protocols`` entry point.

No pipeline file changes and nothing registers at run time: the plug-in's distribution names
its driver (``toy_protocol.SolveDriver``), which carries its kind, summary and settings model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from plugin_install import install_plugin as install_in_group
from plugin_install import run_with_plugin
from toy_protocol import SolveDriver

from proctor.errors import ConfigError
from proctor.formats.arousal_mat import write_arousal_reference
from proctor.pipeline.submission import Submission, evaluate_submission
from proctor.protocols.registry import BUILTIN_DRIVERS, PLUGIN_GROUP, driver_for, drivers
from proctor.protocols.single_file import SingleFileDriver
from proctor.resolve import load_challenge
from proctor.sandbox.base import Outcome
from proctor.sandbox.fake import FakeRequest, FakeSandbox
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.store.runfolder import RunFolder
from proctor.types import RunStatus

LENGTH = 30
PROCTOR = Path(sys.executable).parent / "proctor"

SOLVE_SH = """#!/bin/sh
n=$(cat "$1")
i=0
: > "$2"
while [ "$i" -lt "$n" ]; do
  if [ "$i" -lt $((n / 2)) ]; then echo 0.1; else echo 0.9; fi >> "$2"
  i=$((i + 1))
done
"""
"""The entry's program: low values on the first half of each case, high on the second."""


def install_plugin(site: Path, monkeypatch: pytest.MonkeyPatch, *entries: str) -> None:
    """Install a distribution declaring ``entries`` (``NAME = MODULE:CLASS``) as protocols."""
    install_in_group(site, monkeypatch, PLUGIN_GROUP, *entries)


@pytest.fixture
def solve_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path / "site", monkeypatch, "solve = toy_protocol:SolveDriver")


def write_challenge(root: Path, **protocol: object) -> Path:
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
        "protocol": {"kind": "solve", "case_s": 3, **protocol},
        "tasks": [{"name": "main", "public_inputs": "public", "hidden_inputs": "hidden",
                   "hidden_references": "refs", "scorer": "physionet2018"}],
        "phases": [{"name": "final", "tasks": ["main"]}],
    }  # fmt: skip
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def write_entry(root: Path) -> Path:
    root.mkdir()
    (root / "solve").write_text(SOLVE_SH)
    (root / "solve").chmod(0o755)
    return root


def solver(request: FakeRequest) -> Outcome:
    _, source, target = request.argv
    length = int(request.host_path(source).read_text())
    values = ["0.1"] * (length // 2) + ["0.9"] * (length - length // 2)
    request.host_path(f"/work/{target}").write_text("\n".join(values) + "\n")
    return Outcome(exit_status=0)


def test_the_plugged_in_protocol_loads_runs_and_is_scored(
    tmp_path: Path, solve_plugin: None
) -> None:
    challenge = load_challenge(write_challenge(tmp_path / "challenge"))
    entry = write_entry(tmp_path / "entry")
    folder = RunFolder.create(tmp_path / "runs", "solve")
    sandbox = FakeSandbox(solver)
    report = evaluate_submission(
        Submission(challenge, challenge.phase(None), entry, folder), sandbox
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["main"]["auprc"] == pytest.approx(1.0)
    assert [r.argv[0] for r in sandbox.requests] == ["./solve"] * 3
    assert driver_for("solve") is SolveDriver


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_plugged_in_protocol_runs_end_to_end_in_the_sandbox(
    tmp_path: Path, shared_dir: Path, solve_plugin: None
) -> None:
    challenge = write_challenge(tmp_path / "challenge")
    entry = write_entry(tmp_path / "entry")
    report = run_entry(RunRequest(entry, str(challenge), jobs=1), Settings(work_root=shared_dir))
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["main"]["auprc"] == pytest.approx(1.0)
    assert report.scores["main"]["records"] == 2


@pytest.mark.sandbox
@pytest.mark.slow
def test_proctor_run_finds_an_installed_plugin(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_plugin(site, monkeypatch, "solve = toy_protocol:SolveDriver")
    challenge = write_challenge(tmp_path / "challenge")
    entry = write_entry(tmp_path / "entry")
    report = run_with_plugin(site, entry, challenge, shared_dir)
    assert report["scores"]["main"]["auprc"] == pytest.approx(1.0)
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir)}
    done = subprocess.run(
        [str(PROCTOR), "challenge", "check", str(challenge)],
        capture_output=True, text=True, env=env, timeout=280, check=False,
    )  # fmt: skip
    assert "protocol.kind: unknown protocol kind 'solve'" in done.stdout + done.stderr


def test_the_plugins_settings_errors_are_located(tmp_path: Path, solve_plugin: None) -> None:
    with pytest.raises(ConfigError, match=r"protocol\.case_s: Input should be greater than 0"):
        load_challenge(write_challenge(tmp_path / "challenge", case_s=0))
    with pytest.raises(ConfigError, match=r"protocol\.programme: unknown key"):
        load_challenge(write_challenge(tmp_path / "other", programme="solve"))


def test_without_its_plugin_the_protocol_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"protocol\.kind: unknown protocol kind 'solve'"):
        load_challenge(write_challenge(tmp_path / "challenge"))
    assert "solve" not in drivers()


def test_a_plugin_cannot_replace_a_builtin_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path / "site", monkeypatch, "single_file = toy_protocol:SolveDriver")
    assert driver_for("single_file") is SingleFileDriver
    assert set(drivers()) == {driver.kind for driver in BUILTIN_DRIVERS}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("echo = toy_protocol:SolveDriver", r"names a driver of kind 'solve': name it alike"),
        ("solve = toy_protocol:SolveProtocol", r"must name a ProtocolDriver subclass"),
        ("solve = no_such_plugin_module:Driver", r"does not load: No module named"),
    ],
)
def test_a_broken_plugin_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, message: str
) -> None:
    install_plugin(tmp_path / "site", monkeypatch, entry)
    with pytest.raises(ConfigError, match=rf"entry point .*{PLUGIN_GROUP!r}.*{message}"):
        load_challenge(write_challenge(tmp_path / "challenge"))
