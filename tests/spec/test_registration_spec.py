"""The ``registration:`` block of challenge.yaml, and the imports that write it.

Each mistake is an error naming the file and the YAML path; Codabench's
``registration_auto_approve`` and EvalAI's ``approval_required`` become the mode, their
terms page the terms accepted; a bundle that says nothing is imported without registration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from bundle_fixtures import V2_YAML, make_v2_bundle
from evalai_challenge import make_evalai_challenge
from minimal_challenge import MINIMAL, write

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge


@pytest.fixture
def challenge_dir(tmp_path: Path) -> Path:
    for folder in ("public", "hidden", "refs", "pages"):
        (tmp_path / folder).mkdir()
    (tmp_path / "pages" / "terms.md").write_text("# Terms\n")
    return tmp_path


def test_a_challenge_without_registration_asks_nobody_to_register(challenge_dir: Path) -> None:
    write(challenge_dir, MINIMAL)
    challenge = load_challenge(challenge_dir)
    assert challenge.registration is None and challenge.terms_page is None


def test_the_registration_block_loads_with_its_terms(challenge_dir: Path) -> None:
    registration = {"mode": "approval", "terms": "pages/terms.md", "team_size": 3}
    write(challenge_dir, {**MINIMAL, "registration": registration})
    challenge = load_challenge(challenge_dir)
    assert challenge.registration is not None
    assert (challenge.registration.mode, challenge.registration.team_size) == ("approval", 3)
    assert challenge.terms_page == "pages/terms.md"


@pytest.mark.parametrize(
    ("registration", "location", "message"),
    [
        ({"mode": "closed"}, "registration.mode", "'open', 'approval' or 'invite'"),
        ({"team_size": 0}, "registration.team_size", "greater than 0"),
        ({"team_sise": 2}, "registration.team_sise", "unknown key"),
        ({"terms": "pages/terms.pdf"}, "registration.terms", "neither Markdown nor HTML"),
        ({"terms": "../terms.md"}, "registration.terms", "leaves the challenge folder"),
        ({"terms": "pages/missing.md"}, "registration.terms", "no file of the challenge folder"),
    ],
)
def test_a_bad_registration_names_its_yaml_path(
    challenge_dir: Path, registration: dict[str, Any], location: str, message: str
) -> None:
    path = write(challenge_dir, {**MINIMAL, "registration": registration})
    with pytest.raises(ConfigError) as err:
        load_challenge(challenge_dir)
    assert str(path) in str(err.value)
    assert location in str(err.value)
    assert message in str(err.value)


def _imported(tmp_path: Path, bundle: Path) -> dict[str, Any]:
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    load_challenge(tmp_path / "challenge")  # what the import wrote loads
    data: dict[str, Any] = yaml.safe_load((tmp_path / "challenge/challenge.yaml").read_text())
    data["warnings"] = result.warnings
    return data


@pytest.mark.parametrize(("auto", "mode"), [(True, "open"), (False, "approval")])
def test_codabench_registration_auto_approve_is_the_mode_with_its_terms(
    tmp_path: Path, auto: bool, mode: str
) -> None:
    text = V2_YAML.replace(
        "terms: pages/terms.md", f"terms: pages/terms.md\nregistration_auto_approve: {auto}"
    )
    data = _imported(tmp_path, make_v2_bundle(tmp_path / "bundle", yaml_text=text))
    assert data["registration"] == {"mode": mode, "terms": "pages/terms.md"}


def test_a_codabench_bundle_silent_on_approval_is_imported_without_registration(
    tmp_path: Path,
) -> None:
    data = _imported(tmp_path, make_v2_bundle(tmp_path / "bundle"))
    assert "registration" not in data
    assert any("registration_auto_approve" in warning for warning in data["warnings"])


@pytest.mark.parametrize(("required", "mode"), [("True", "approval"), ("False", "open")])
def test_evalai_approval_required_is_the_mode_with_the_terms_template(
    tmp_path: Path, required: str, mode: str
) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    (source / "templates/terms_and_conditions.html").write_text("<p>Be fair.</p>\n")
    config = source / "challenge_config.yaml"
    extra = (
        "terms_and_conditions: templates/terms_and_conditions.html\r\n"
        f"approval_required: {required}\r\n"
    )
    config.write_bytes(config.read_bytes() + extra.encode())
    data = _imported(tmp_path, source)
    assert data["registration"] == {"mode": mode, "terms": "pages/terms_and_conditions.html"}


def test_an_evalai_config_silent_on_approval_asks_no_registration(tmp_path: Path) -> None:
    data = _imported(tmp_path, make_evalai_challenge(tmp_path / "source"))
    assert "registration" not in data


def test_evalai_approval_required_that_is_no_yes_or_no_is_refused(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = source / "challenge_config.yaml"
    config.write_bytes(config.read_bytes() + b"approval_required: sometimes\r\n")
    with pytest.raises(ConfigError, match="approval_required"):
        import_challenge(source, tmp_path / "challenge", "host")
