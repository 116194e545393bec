"""Hardening item 3: hidden data below a folder every run sees is refused, whatever the layout."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from toy_challenge import make_challenge, make_entry

from proctor.errors import ConfigError
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings


@pytest.fixture
def under_usr() -> Iterator[Path]:
    """A folder below /usr/local, where a system-wide install puts bundled challenges."""
    if os.geteuid() != 0:
        pytest.skip("writing below /usr needs root")
    folder = Path(tempfile.mkdtemp(prefix="proctor-test-refs-", dir="/usr/local/share"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_references_under_usr_are_refused_on_the_hosts_root(
    tmp_path: Path, under_usr: Path, shared_dir: Path
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    shutil.move(str(challenge / "refs"), under_usr / "refs")
    data = yaml.safe_load((challenge / "challenge.yaml").read_text())
    data["tasks"][0]["hidden_references"] = str(under_usr / "refs")
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(data))
    request = RunRequest(make_entry(tmp_path / "entry"), str(challenge))
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.hidden_references: .* lies under /usr"):
        run_entry(request, Settings(work_root=shared_dir / "runs"))
