"""Run a real entry written by others, which Proctor does not ship, through ``proctor run``.

Usage::

    .venv/bin/python bench/real_entries.py CHALLENGE ENTRY_FOLDER [--phase PHASE]
                                           [--regenerate-answers]

The entry is copied into a fresh folder every sandbox uid can read; with
``--regenerate-answers`` (records challenges) its ``answers.txt`` is first rewritten by running
its own ``next.sh`` on every public training record inside the challenge's environment (``proctor
env shell``), as 2017 participants regenerated it on the records they were given. Then ``proctor
run --json`` evaluates the copy and the script prints each stage and the scores; it exits 1 when
the entry is not scored. ``make test`` runs faithful equivalents written by us
(``tests/entries/``: the same imports and calls); this script runs the originals, which have
licences of their own and are fetched by hand (no network at test time).

The real entries Proctor was checked on, and the patches they needed (packaging and their own
bit-rot only, never their method):

- physionet2017 -- the organizers' MATLAB sample ``sample2017.zip`` (``challenge.m``,
  ``rdmat.m``, ``qrs_detect2.m``, ``comput_AFEv.m``, ``comp_dRR.m``, ``BPcount.m``,
  ``metrics.m``, ``setup.sh``, ``next.sh``, ``AUTHORS.txt``, ``LICENSE.txt``). Packaging:
  ``next.sh`` with its template's Octave block active and the MATLAB block commented out;
  ``answers.txt`` regenerated (``--regenerate-answers``). Default phase; ``--phase`` not needed.
- autowsl -- the AutoWSL 2019 entries (the folder holding ``model.py``), run with ``--phase
  feedback`` (the three weak-supervision kinds) or ``--phase final``:
  DeepWisdom's ``code_submission/`` (1st): no patch.
  Meta_Learners' ``src/`` (2nd): no patch.
  Inspur's repository root (3rd, ACML): its own bit-rot, ``DataFrame.ix[`` (removed in pandas
  1.0) written ``.iloc[`` (the six uses index columns by position).
  The starting kit's ``model.py`` with its ``automl.py``, ``preprocess.py``, ``util.py`` and
  ``CONSTANT.py`` (as kept in a participant's repository, fv316/AutoWSL-Challenge: ``model.py``
  given back the kit's ``from automl import ...`` and ``AutoSSLClassifier()`` calls): no patch
  of the kit's own code.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROCTOR = Path(sys.executable).with_name("proctor")
REGENERATE = (
    "cd /entry && rm -f answers.txt && touch answers.txt && "
    "for r in $(cat /data/RECORDS); do ln -sf /data/$r.hea /data/$r.mat . ; "
    './next.sh $r >/dev/null 2>&1 || echo "next.sh failed on $r" >&2; rm -f $r.hea $r.mat; '
    'done; sed "s/^/ANSWER:/" answers.txt\n'
)


def regenerate_answers(challenge: str, entry: Path) -> int:
    """Rewrite ``entry/answers.txt`` from the entry's own ``next.sh`` on the public records."""
    shell = subprocess.run(
        [str(PROCTOR), "env", "shell", challenge, "--entry", str(entry)],
        input=REGENERATE,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [
        line.removeprefix("ANSWER:").strip()
        for line in shell.stdout.splitlines()
        if line.startswith("ANSWER:")
    ]
    (entry / "answers.txt").write_text("".join(f"{line}\n" for line in lines))
    for line in shell.stderr.splitlines():
        if line.startswith("next.sh failed"):
            print(line, file=sys.stderr)
    return len(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("challenge", help="a bundled challenge name or a challenge folder")
    parser.add_argument(
        "entry", type=Path, help="the real entry's folder (holding model.py or next.sh)"
    )
    parser.add_argument("--phase", default=None)
    parser.add_argument("--regenerate-answers", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-real-entry-") as scratch:
        Path(scratch).chmod(0o755)
        entry = Path(scratch) / "entry"
        shutil.copytree(args.entry, entry, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        for path in [entry, *entry.rglob("*")]:
            path.chmod(
                path.stat().st_mode | 0o555 if path.is_dir() else path.stat().st_mode | 0o444
            )
        if args.regenerate_answers:
            count = regenerate_answers(args.challenge, entry)
            print(f"answers.txt regenerated: {count} records")
        command = [str(PROCTOR), "run", str(entry), "-c", args.challenge, "--json"]
        if args.phase:
            command += ["--phase", args.phase]
        run = subprocess.run(command, capture_output=True, text=True, check=False)
        try:
            report = json.loads(run.stdout)
        except json.JSONDecodeError:
            print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
            return 1
    for stage in report["stages"]:
        print(f"{stage['name']:<28} {stage['status']:<8} {stage.get('message', '')[:200]}")
    for task, row in report.get("scores", {}).items():
        print(task, {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()})
    print("environment:", report.get("environment", {}).get("name"), "status:", report["status"])
    return 0 if report["status"] == "scored" else 1


if __name__ == "__main__":
    sys.exit(main())
