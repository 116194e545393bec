"""The ``entry_images`` block of an environment: defaults, limits, bases."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

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
