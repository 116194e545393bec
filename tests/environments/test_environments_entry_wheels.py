"""Participant wheels: an entry's requirements.txt, installed by the host where allowed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from reference_environment import declare_reference_environment
from toy_challenge import make_challenge, make_entry

from proctor.environments.entry_wheels import install_entry_wheels, read_requirements
from proctor.environments.wheels import Target
from proctor.errors import EntryRequirementsError, PlatformError
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.spec.environment import ParticipantWheels


def with_environment(challenge: Path, **wheels: Any) -> Path:
    """``challenge`` declaring the reference environment with ``participant_wheels``."""
    return declare_reference_environment(challenge, participant_wheels=wheels)


def test_only_plain_requirements_are_read(tmp_path: Path) -> None:
    path = tmp_path / "requirements.txt"
    path.write_text("six==1.16.0  # fine\n\nattrs>=20\n")
    assert [str(r) for r in read_requirements(path, ParticipantWheels(allow=True))] == [
        "six==1.16.0",
        "attrs>=20",
    ]
    for text, match in (
        ("--index-url http://x\n", r"line 1: options such as -r, -e or --index-url"),
        ("six\n-r other.txt\n", r"line 2: options"),
        ("pkg @ file:///etc/passwd\n", r"line 1: direct URLs are not allowed"),
        ("!!!\n", r"line 1: '!!!' is not a requirement"),
        ("a\nb\nc\n", r"lists 3 requirements; this challenge allows at most 2"),
    ):
        path.write_text(text)
        with pytest.raises(EntryRequirementsError, match=match):
            read_requirements(path, ParticipantWheels(allow=True, max_requirements=2))


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


@pytest.mark.sandbox
@pytest.mark.environment
@pytest.mark.slow
def test_allowed_wheels_are_installed_and_importable(
    tmp_path: Path, settings: Settings, reference_env: object
) -> None:
    challenge = with_environment(make_challenge(tmp_path / "challenge"), allow=True)
    setup = "#!/bin/sh\nset -e\npython3 -c 'import six, sklearn; print(six.__version__)'\n"
    entry = make_entry(tmp_path / "entry", setup_sh=setup, extra={"requirements.txt": "six\n"})
    report = run_entry(RunRequest(entry, str(challenge), jobs=2, keep=True), settings)
    assert report.status.value == "scored", report.to_json()
    assert report.run_dir is not None
    lock = (report.run_dir / "wheels" / "arousal.lock").read_text()
    assert lock.startswith("six==") and "--hash=sha256:" in lock


@pytest.mark.sandbox
@pytest.mark.environment
@pytest.mark.slow
@pytest.mark.parametrize(
    ("wheels", "requirements", "message"),
    [
        ({}, "six\n", "this challenge does not install packages from requirements.txt"),
        ({"allow": True}, "no-such-project-proctor-xyz\n", "no wheel of no-such-project"),
        ({"allow": True, "max_bytes": 1000}, "six\n", "byte cap|come to .* bytes"),
        ({"allow": True}, "numpy==1.26.4\n", "conflicts with the environment's own pinned"),
    ],
)
def test_refused_requirements_fail_prep_with_a_clear_message(
    tmp_path: Path,
    settings: Settings,
    reference_env: object,
    wheels: dict[str, Any],
    requirements: str,
    message: str,
) -> None:
    challenge = with_environment(make_challenge(tmp_path / "challenge"), **wheels)
    entry = make_entry(tmp_path / "entry", extra={"requirements.txt": requirements})
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    data = report.to_json()
    assert data["failed_stage"] == "prep" and data["failure"] == "entry"
    assert re.search(message, data["stages"][0]["message"]), data["stages"][0]["message"]


def test_on_the_host_a_requirements_file_is_refused(tmp_path: Path, settings: Settings) -> None:
    from pipeline_fakes import ScriptedEntry, evaluate

    challenge = make_challenge(tmp_path / "challenge")
    entry = make_entry(tmp_path / "entry", extra={"requirements.txt": "six\n"})
    report = evaluate(challenge, entry, ScriptedEntry())
    assert report.failed_stage == "prep"
    assert "does not install packages from requirements.txt" in report.stages[0].message


def test_requirements_the_environment_pins_need_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PhysioNet entry's requirements.txt copied from the example: all pinned, no download."""
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    path = tmp_path / "requirements.txt"
    path.write_text("numpy==2.0.2\nscikit-learn>=1.5\nJobLib\n")
    asked = read_requirements(path, ParticipantWheels(allow=True))
    pinned = {"numpy": ("2.0.2", "a"), "scikit_learn": ("1.6.0", "b"), "joblib": ("1.4.2", "c")}
    installed = install_entry_wheels(
        asked, tmp_path / "layer", target=Target.for_suite("bookworm"), pinned=pinned,
        limits=ParticipantWheels(allow=True),
    )  # fmt: skip
    assert installed == []
    path.write_text("numpy==1.26.4\n")  # not the environment's version: the index is asked
    with pytest.raises((EntryRequirementsError, PlatformError)):
        install_entry_wheels(
            read_requirements(path, ParticipantWheels(allow=True)), tmp_path / "layer2",
            target=Target.for_suite("bookworm"), pinned=pinned,
            limits=ParticipantWheels(allow=True, resolve_s=60),
        )  # fmt: skip
