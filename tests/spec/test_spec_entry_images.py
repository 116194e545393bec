"""The ``entry_images`` block of an environment: defaults, limits, bases."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from reference_environment import declare_reference_environment
from toy_challenge import make_challenge

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.spec.environment import EntryImages, EnvironmentSpec


def test_entry_images_are_off_by_default_with_caps() -> None:
    spec = EnvironmentSpec()
    assert spec.entry_images.allow is False
    assert spec.entry_images.max_bytes == 4 * 1024**3
    assert spec.entry_images.max_files == 100_000
    assert spec.entry_images.build.wall_s > 0 and spec.entry_images.bases == {}


def test_the_whole_block_is_read() -> None:
    block = EntryImages.model_validate({
        "allow": True, "max_bytes": 10**9, "max_files": 5000,
        "build": {"wall_s": 600, "memory_bytes": 2**31, "disk_bytes": 2**33},
        "bases": {"python:3.10.1-buster": "physionet-py310", "debian": "proctor-reference"},
    })  # fmt: skip
    assert block.allow and block.max_files == 5000 and block.build.wall_s == 600
    assert block.bases["python:3.10.1-buster"] == "physionet-py310"


@pytest.mark.parametrize(
    "block",
    [
        {"allow": "yes"},
        {"max_bytes": 0},
        {"build": {"wall_s": -1}},
        {"build": {"cpus": 2}},
        {"bases": {"Python 3": "env"}},
        {"bases": {"python:3.10": "not a name!"}},
        {"registry": "docker.io"},
    ],
)
def test_a_wrong_block_is_refused(block: dict[str, object]) -> None:
    with pytest.raises((ValidationError, ValueError)):
        EntryImages.model_validate(block)


def test_an_alias_naming_an_environment_the_challenge_does_not_declare_is_refused_at_load(
    tmp_path: Path,
) -> None:
    images = {"allow": True, "bases": {"python:3.10.1-buster": "nowhere"}}
    challenge = declare_reference_environment(make_challenge(tmp_path / "toy"), entry_images=images)
    with pytest.raises(ConfigError) as err:
        load_challenge(challenge)
    message = str(err.value)
    assert "'python:3.10.1-buster' names the environment 'nowhere'" in message
    assert "(proctor-reference)" in message and "environment.entry_images.bases" in message
    assert "challenge.yaml" in message
