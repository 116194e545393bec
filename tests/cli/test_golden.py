"""The commands' output is unchanged unless a golden file in ``tests/data/golden/`` changed on
purpose.

See ``golden_cases`` for what is masked (fields that vary between runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_cases import CASES, GOLDEN, SANDBOXED


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.sandbox, pytest.mark.slow])
        if name in SANDBOXED
        else name
        for name in CASES
    ],
)
def test_output_matches_its_golden_file(name: str, shared_dir: Path) -> None:
    result = CASES[name](shared_dir)
    expected = (GOLDEN / f"{name}.txt").read_text()
    assert result.text() == expected
