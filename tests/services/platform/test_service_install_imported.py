"""`challenge add` of an imported bundle naming a bundled environment (its default one).

The import writes ``environment: codabench-legacy`` (a name the server resolves to the same
bundled declaration), so installing it copies nothing from Proctor's own files and refuses
nothing: an organizer adds the folder ``proctor challenge import`` wrote, as it is.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from bundle_fixtures import make_v2_bundle

from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.platform.accounts import add_user, authenticate
from proctor.services.platform.installs import install
from proctor.services.platform.resources import Platform, open_platform
from proctor.settings import ServiceSettings


def test_an_imported_bundle_with_its_default_environment_installs(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_v2_bundle(tmp_path / "bundle"), challenge)
    assert yaml.safe_load((challenge / "challenge.yaml").read_text())["environment"] == (
        "codabench-legacy"
    )
    settings = ServiceSettings(
        data=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'proctor.sqlite3'}"
    )
    platform = open_platform(settings)
    try:
        token = add_user(platform, "olga", organizer=True, team=None).token
        installed = install(platform, authenticate(platform, token), str(challenge))
    finally:
        Platform.close(platform)
    assert installed.version == 1 and installed.phases == ("development-phase", "final-phase")
    copies = list((tmp_path / "data/challenges/toy-labels-challenge").glob("*/challenge"))
    assert len(copies) == 1 and not (copies[0].parent / "environment-codabench-legacy").exists()
    assert load_challenge(copies[0]).environment == load_challenge(challenge).environment
