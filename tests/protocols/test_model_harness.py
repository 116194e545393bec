"""The python_model harness's own output: what a participant reads when the entry raises.

The harness runs here as the sandbox runs it (``python3 -I model_harness.py check``), on an
entry whose module raises while it is imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from proctor.protocols.harness import model_harness

HARNESS = Path(model_harness.__file__)
RAISING = """\
def helper():
    raise ValueError("the model cannot start")


helper()
"""


def test_an_entrys_traceback_shows_its_own_frames_and_none_of_the_harness(
    tmp_path: Path,
) -> None:
    (tmp_path / "model.py").write_text(RAISING)
    done = subprocess.run(
        [sys.executable, "-I", str(HARNESS), "check", "--entry", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == model_harness.PROBLEM_STATUS
    said = done.stderr
    assert "Traceback (most recent call last)" in said
    assert 'model.py", line 5' in said and 'model.py", line 2, in helper' in said
    assert "model_harness" not in said and "<frozen" not in said, said
    assert said.rstrip().endswith("proctor-harness: ValueError: the model cannot start")
