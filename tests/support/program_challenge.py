"""A small records challenge scored by an organizer's Python program, for scoring-program tests.

Each record's input is ``RECORD.txt`` holding a number; an entry writes ``RECORD.out`` with
its estimate; the hidden ``REFERENCE.csv`` holds ``RECORD,VALUE``. The scoring program
computes the mean absolute error and the share of records within 1, per record too. Tests
replace ``score.py`` to make the program misbehave.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import yaml

PUBLIC = {"tr01": 1.0, "tr02": 2.0}
HIDDEN = {"te01": 10.0, "te02": 20.0, "te03": 30.0}
TRUTH = {"te01": 11.0, "te02": 20.5, "te03": 33.0}
SECRET = "REFERENCE-SECRET-9931"

SCORE_PY = """\
import json, os, pathlib
reference = pathlib.Path(os.environ["PROCTOR_REFERENCE"])
outputs = pathlib.Path(os.environ["PROCTOR_OUTPUTS"])
template = os.environ["PROCTOR_OUTPUT_TEMPLATE"]
cases = pathlib.Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split()
truth = dict(line.split(",") for line in (reference / "REFERENCE.csv").read_text().split())
rows = {}
for case in cases:
    path = outputs / template.format(record=case)
    try:
        guess = float(path.read_text())
    except (OSError, ValueError):
        guess = 0.0
    error = abs(guess - float(truth[case]))
    rows[case] = {"mae": error, "within_1": float(error <= 1)}
scores = {
    "mae": sum(r["mae"] for r in rows.values()) / len(rows),
    "within_1": sum(r["within_1"] for r in rows.values()) / len(rows),
    "cases": rows,
}
pathlib.Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
print("scored", len(rows), "cases")
"""

CHECK_PY = """\
import sys
text = open(sys.argv[1]).read().strip()
try:
    float(text)
except ValueError:
    sys.exit(f"expected one number, found {text[:20]!r}")
"""

NEXT_SH = """#!/bin/sh
# echoes the input number: exact on the public records
cat "$PROCTOR_DATA/$1.txt" > "$1.out"
"""


def expected_scores(answers: dict[str, float] | None = None) -> dict[str, float]:
    """What ``SCORE_PY`` gives when the entry answers ``answers`` (default: the inputs)."""
    given = answers or HIDDEN
    errors = [abs(given[case] - TRUTH[case]) for case in HIDDEN]
    return {
        "mae": sum(errors) / len(errors),
        "within_1": sum(error <= 1 for error in errors) / len(errors),
    }


def make_challenge(
    root: Path,
    *,
    score_py: str = SCORE_PY,
    scorer: dict[str, Any] | None = None,
    environment: Any = "host",
    disclosure: dict[str, Any] | None = None,
) -> Path:
    """Write the challenge under ``root`` (``scorer`` keys override the program's)."""
    for folder, values in (("data/public", PUBLIC), ("data/hidden", HIDDEN)):
        (root / folder).mkdir(parents=True)
        (root / folder / "RECORDS").write_text("\n".join(values) + "\n")
        for record, value in values.items():
            (root / folder / f"{record}.txt").write_text(f"{value}\n")
    refs = root / "data/reference"
    refs.mkdir()
    (refs / "REFERENCE.csv").write_text("".join(f"{r},{v}\n" for r, v in TRUTH.items()))
    (refs / "NOTE.txt").write_text(SECRET)
    program = root / "scoring"
    program.mkdir()
    (program / "score.py").write_text(score_py)
    (program / "check.py").write_text(CHECK_PY)
    spec = {
        "name": "mae-toy",
        "title": "A records challenge scored by the organizer's program",
        "protocol": {
            "kind": "records",
            "output": "{record}.out",
            "answers": "answers/{record}.out",
            "compare": {"kind": "numeric", "tolerance": 0.001},
            "case_s": 20,
            "stage_s": 120,
        },
        "tasks": [
            {
                "name": "mae",
                "public_inputs": "data/public",
                "hidden_inputs": "data/hidden",
                "hidden_references": "data/reference",
                "scorer": {
                    "program": "scoring",
                    "command": ["python3", "score.py"],
                    "metrics": {
                        "mae": {"direction": "lower", "description": "mean absolute error"},
                        "within_1": {"direction": "higher", "description": "share within 1"},
                    },
                    "limits": {"wall_s": 20, "memory_bytes": 512 * 2**20},
                    **(scorer or {}),
                },
            }
        ],
        "limits": {"memory_bytes": 512 * 2**20, "home_bytes": 64 * 2**20, "processes": 64},
        "parallelism": {"jobs": 2},
        "leaderboard": {"metric": "mae"},
        "environment": environment,
        "disclosure": disclosure or {"per_record": "full"},
        "phases": [{"name": "final", "tasks": ["mae"]}],
    }
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def make_entry(root: Path, *, next_sh: str = NEXT_SH) -> Path:
    """An entry that writes its input number (exact answers for the public records)."""
    root.mkdir(parents=True)
    for name, text in (("setup.sh", "#!/bin/sh\ntrue\n"), ("next.sh", next_sh)):
        (root / name).write_text(text)
        (root / name).chmod(0o755 | stat.S_IXUSR)
    (root / "answers").mkdir()
    for record, value in PUBLIC.items():
        (root / "answers" / f"{record}.out").write_text(f"{value}\n")
    return root


def scores_json(path: Path) -> dict[str, Any]:
    """A written ``scores.json`` as a dict."""
    data: dict[str, Any] = json.loads(path.read_text())
    return data
