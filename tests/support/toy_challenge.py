"""A tiny records challenge built in a temporary folder, for pipeline tests.

Each record has ``LENGTH`` samples; its label vector marks the second half as arousal. The toy
entry's scripts are written per test, so each test states the behaviour it exercises.
"""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import yaml

from proctor.formats.arousal_mat import write_arousal_reference

LENGTH = 40
PUBLIC = ("tr01", "tr02")
HIDDEN = ("te01", "te02", "te03")
SECRET = "REFERENCE-SECRET-7731"


def make_challenge(
    root: Path,
    *,
    case_s: float = 10,
    stage_s: float = 60,
    setup_s: float = 20,
    determinism_cases: int = 0,
    home_bytes: int = 64 * 2**20,
) -> Path:
    """Write the toy challenge under ``root`` and return its folder (``home_bytes``: the
    entry's home, whose inodes are one per 4 KiB of it)."""
    for folder, records in (("public", PUBLIC), ("hidden", HIDDEN)):
        (root / folder).mkdir(parents=True)
        (root / folder / "RECORDS").write_text("\n".join(records) + "\n")
        for record in records:
            (root / folder / f"{record}.hea").write_text(f"{record} 1 200 {LENGTH}\n")
    refs = root / "refs"
    refs.mkdir()
    labels = np.zeros(LENGTH)
    labels[LENGTH // 2 :] = 1
    labels[:2] = -1
    for record in HIDDEN:
        write_arousal_reference(refs / f"{record}-arousal.mat", labels)
    (refs / "NOTE.txt").write_text(SECRET)
    spec = {
        "name": "toy",
        "title": "Toy records challenge",
        "protocol": {
            "kind": "records",
            "compare": {"kind": "numeric", "tolerance": 0.001},
            "required_files": ["setup.sh", "next.sh"],
            "setup_s": setup_s,
            "case_s": case_s,
            "stage_s": stage_s,
        },
        "tasks": [
            {
                "name": "arousal",
                "public_inputs": "public",
                "hidden_inputs": "hidden",
                "hidden_references": "refs",
                "scorer": "physionet2018",
            }
        ],
        "limits": {
            "memory_bytes": 512 * 2**20,
            "home_bytes": home_bytes,
            "processes": 64,
            "output_bytes": 2**20,
        },
        "parallelism": {"jobs": 2},
        "phases": [{"name": "final", "tasks": ["arousal"], "determinism_cases": determinism_cases}],
    }
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


GOOD_NEXT = """#!/bin/sh
# writes the second half as 0.900 and the first as 0.100
n=$(cut -d' ' -f4 "$PROCTOR_DATA/$1.hea")
i=0
: > "$1.vec"
while [ $i -lt $n ]; do
  if [ $i -lt $((n / 2)) ]; then echo 0.100; else echo 0.900; fi >> "$1.vec"
  i=$((i + 1))
done
"""


def good_answer() -> str:
    """What GOOD_NEXT writes for any toy record."""
    return "".join("0.100\n" if i < LENGTH // 2 else "0.900\n" for i in range(LENGTH))


def make_entry(
    root: Path,
    *,
    next_sh: str = GOOD_NEXT,
    setup_sh: str = "#!/bin/sh\necho setting up\n",
    answers: bool = True,
    extra: dict[str, str] | None = None,
) -> Path:
    """Write an entry folder under ``root`` with the given scripts and shipped answers."""
    root.mkdir(parents=True)
    for name, text in (("setup.sh", setup_sh), ("next.sh", next_sh)):
        path = root / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if answers:
        (root / "answers").mkdir()
        for record in PUBLIC:
            (root / "answers" / f"{record}.vec").write_text(good_answer())
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    return root


def make_exam_entry(root: Path, hidden_cases: str) -> Path:
    """An entry that answers the quiz correctly and runs ``hidden_cases`` on hidden records.

    ``hidden_cases`` holds ``case`` branches of ``sh`` (``te02) ... ;;``); records it does not
    match get the good answer too.
    """
    next_sh = f"""#!/bin/sh
case "$1" in
  tr*) exec ./good.sh "$1" ;;
{hidden_cases}
  *) exec ./good.sh "$1" ;;
esac
"""
    entry = make_entry(root, next_sh=next_sh, extra={"good.sh": GOOD_NEXT})
    (entry / "good.sh").chmod(0o755)
    return entry
