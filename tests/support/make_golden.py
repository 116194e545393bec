"""Write the golden files of ``golden_cases`` (on purpose: ``python tests/support/make_golden.py``).

Pass case names to rewrite only those. Every rewrite must be explained in the issue note and
the docs (which keys changed and why).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_cases import CASES, GOLDEN


def main(names: list[str]) -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in names or list(CASES):
        scratch = Path(tempfile.mkdtemp(prefix="proctor-golden-", dir="/tmp"))
        scratch.chmod(0o755)
        try:
            result = CASES[name](scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        (GOLDEN / f"{name}.txt").write_text(result.text())
        print(f"wrote {name} (exit {result.status})")


if __name__ == "__main__":
    main(sys.argv[1:])
