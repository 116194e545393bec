"""Run a real entry written by others, which Proctor does not ship, through ``proctor run``.

Usage::

    .venv/bin/python bench/real_entries.py CHALLENGE ENTRY_FOLDER [--phase PHASE]
        [--train SCRIPT [--seconds S] [--records N]] [--regenerate-answers]
        [--ehealthkd-baseline] [--python-example [--entry-images]]

The entry is copied into a fresh folder every sandbox uid can read. With ``--train SCRIPT``
(physionet2018) a kit of freshly generated training records is written first (``proctor kit
physionet2018 KIT --seconds S --records N``, default 3600 s x 4) and the entry's own training
script runs on them in the copy (``python SCRIPT KIT/data/RECORD ...``, this interpreter: the
same library versions as the ``proctor-reference`` lock), as a 2018 participant trained on the
records they had. With ``--regenerate-answers`` (records challenges) the answers shipped for the
quiz are first rewritten by running the entry's own ``next.sh`` on every public training record
inside the challenge's environment (``proctor env shell``), as participants regenerated them on
the records they were given: ``answers.txt`` (2017) or ``answers/RECORD.vec`` (2018), whichever
the challenge's protocol names. With ``--ehealthkd-baseline`` ENTRY_FOLDER is a checkout of the
eHealth-KD 2019 repository: its ``scripts/baseline.py`` runs as its ``run_baseline_dev.sh`` and
``run_baseline_test.sh`` run it, on the ``proctor kit ehealthkd2019`` sentences, writing into
copies of its ``data/submit`` scenario folders (each holding its ``.gitignore``) as ``dev/``
and ``test/`` of the upload. With ``--python-example`` (physionet2026) ENTRY_FOLDER is a
checkout of the organizers' ``python-example-2026`` repository (or ``$PROCTOR_PYTHON_EXAMPLE``
names it), submitted as published: every file of the checkout but ``.git`` (its team code,
``Dockerfile``, ``requirements.txt``, and its copies of the challenge's scripts, which the
challenge replaces), nothing patched; the script prints the checkout's commit, the
``Dockerfile``'s ``FROM`` and what the entry ran in: ``entry-image`` (digest and base) where
the ``Dockerfile`` was built at prep, else the declared environment (the file kept as a file).
``--entry-images`` runs it on a copy of the bundled challenge whose environment allows entry
images and maps ``python:3.10.1-buster`` to ``physionet2026``, as the challenge's YAML says to
where images are built. Then ``proctor run --json`` evaluates the copy and the script
prints each stage and the scores; it exits 1 when the entry is not scored. ``make test`` runs
faithful equivalents written by us (``tests/data/entries/``: the same imports and calls); this
script
runs the originals, which have licences of their own and are fetched by hand (no network at
test time).

The real entries Proctor was checked on, and the patches they needed (packaging and their own
bit-rot only, never their method):

- physionet2017 -- the organizers' MATLAB sample ``sample2017.zip`` (``challenge.m``,
  ``rdmat.m``, ``qrs_detect2.m``, ``comput_AFEv.m``, ``comp_dRR.m``, ``BPcount.m``,
  ``metrics.m``, ``setup.sh``, ``next.sh``, ``AUTHORS.txt``, ``LICENSE.txt``). Packaging:
  ``next.sh`` with its template's Octave block active and the MATLAB block commented out;
  ``answers.txt`` regenerated (``--regenerate-answers``). Default phase; ``--phase`` not needed.
- physionet2018 -- the organizers' Python sample entry (Ghassemi and Moody, 2018):
  ``run_my_classifier.py``, ``train_classifier.py``, ``physionetchallenge2018_lib.py``,
  ``score2018.py`` (as kept in esanna-unimarconi/cinc-challenge2018-sample2, whose only
  change, ``get_files``'s root ``p_DATASET_DIR``, is set back to ``'.'``; ``next.sh`` never
  calls it). Its ``PrepareEntry.py`` (the organizers' driver: ``train()`` walks
  ``./training/RECORD/``) also trains and scores on a kit beside a link ``training ->
  KIT/data/training`` (with the same ``pylab`` patch).
  Packaging: ``next.sh`` (``python3 run_my_classifier.py "$RECORD"``, the 2018 contract),
  ``setup.sh`` (checks ``models/``), ``AUTHORS.txt``, ``LICENSE.txt``; ``models/`` trained by
  its own script (``--train train_classifier.py``: it needs records of at least 3600 s, 60
  windows; the bundled 60 s records and 600 s ones give one class per record and the script
  stops at "needs samples of at least 2 classes"); ``answers/`` regenerated
  (``--regenerate-answers``). Its own bit-rot, three lines: ``from sklearn.externals import
  joblib`` written ``import joblib`` (removed in scikit-learn 0.23), ``from pylab import find``
  written ``find = numpy.flatnonzero`` (removed in matplotlib 3.1; the only use of matplotlib
  at run time), and in ``train_classifier.py`` ``X_subj[idx, 0] = np.var(...)`` written
  ``X_subj[idx, :] = ...`` (NumPy 2 no longer sets one element from a 1-element array; its
  classifier script already writes ``[idx, :]``).
- ehealthkd2019 -- the organizers' example upload (``data/submit/submit_baseline_dev.zip``
  unzipped into ``dev/``, ``submit_baseline_test.zip`` into ``test/``; their scenario folders
  keep their ``.gitignore``, listed as litter at prep): no patch; it is scored (0: its
  predictions are for the 2019 sentences, which the official scorer skips as differing). Their
  baseline, ``scripts/baseline.py`` with ``scripts/utils.py`` (``--ehealthkd-baseline``): no
  patch; only the paths of its run scripts point at the kit.
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
- physionet2026 -- the organizers' ``python-example-2026`` repository as published (a checkout
  of commit c0bcd78: ``team_code.py``, ``channel_table.csv``, ``Dockerfile``,
  ``requirements.txt`` and their copies of the challenge's scripts): no patch. Its
  ``train_model.py``, ``run_model.py`` and ``helper_code.py`` are replaced by the challenge's;
  its ``requirements.txt`` is all pinned by the ``physionet2026`` environment (no download);
  its ``Dockerfile`` is kept as a file. It trains, runs and scores as the bundled baseline
  does (reward 0.7641, AUROC 0.9615). ``--python-example`` runs it so; with
  ``--entry-images`` its ``Dockerfile`` is offered to prep's build.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

PROCTOR = Path(sys.executable).with_name("proctor")
REGENERATE = (
    "cd /entry && rm -f answers.txt && touch answers.txt && "
    "for r in $(cat /data/RECORDS); do ln -sf /data/$r.hea /data/$r.mat . ; "
    './next.sh $r >/dev/null 2>&1 || echo "next.sh failed on $r" >&2; rm -f $r.hea $r.mat; '
    'done; sed "s/^/ANSWER:/" answers.txt\n'
)
REGENERATE_PER_RECORD = (
    "cd /entry && rm -rf answers && mkdir answers && "
    "for r in $(cat /data/RECORDS); do ln -sf /data/$r.hea /data/$r.mat . ; "
    './next.sh $r >/dev/null 2>&1 || echo "next.sh failed on $r" >&2; rm -f $r.hea $r.mat; '
    "mv $r.vec answers/ 2>/dev/null; done; "
    'echo "ARCHIVE:$(tar czf - answers | base64 -w0)"\n'
)
EXAMPLE_FILES = ("team_code.py", "Dockerfile", "requirements.txt", "train_model.py",
                 "run_model.py", "helper_code.py")  # fmt: skip
"""What a checkout of python-example-2026 holds at its root (checked before the run)."""
EXAMPLE_BASE = "python:3.10.1-buster"
SCENARIOS = {"scenario1-main": ("1", []), "scenario2-taskA": ("2", ["--skip-B"]),
             "scenario3-taskB": ("3", ["--skip-A"])}  # fmt: skip


def env_shell(challenge: str, entry: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in ``proctor env shell CHALLENGE --entry ENTRY``; stderr lines of
    ``next.sh`` failures are printed."""
    shell = subprocess.run(
        [str(PROCTOR), "env", "shell", challenge, "--entry", str(entry)],
        input=script,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in shell.stderr.splitlines():
        if line.startswith("next.sh failed"):
            print(line, file=sys.stderr)
    return shell


def answers_per_record(challenge: str) -> bool:
    """Whether the challenge's protocol ships one answers file per record (2018)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from proctor.services.local.catalog import resolve_challenge

    answers = getattr(resolve_challenge(challenge).protocol, "answers", None)
    return answers is not None and "{record}" in answers


def regenerate_answers(challenge: str, entry: Path) -> int:
    """Rewrite the entry's quiz answers from its own ``next.sh`` on the public records."""
    if answers_per_record(challenge):
        shell = env_shell(challenge, entry, REGENERATE_PER_RECORD)
        packed = next(
            (line for line in shell.stdout.splitlines() if line.startswith("ARCHIVE:")), ""
        )
        shutil.rmtree(entry / "answers", ignore_errors=True)
        data = base64.b64decode(packed.removeprefix("ARCHIVE:"))
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            archive.extractall(entry, filter="data")
        return len(list((entry / "answers").glob("*")))
    shell = env_shell(challenge, entry, REGENERATE)
    lines = [
        line.removeprefix("ANSWER:").strip()
        for line in shell.stdout.splitlines()
        if line.startswith("ANSWER:")
    ]
    (entry / "answers.txt").write_text("".join(f"{line}\n" for line in lines))
    return len(lines)


def train_on_kit(challenge: str, entry: Path, script: str, seconds: int, records: int) -> int:
    """Run the entry's training script on a kit of freshly generated records; the count of
    records it was given (raises when the script fails)."""
    kit = entry.parent / "kit"
    subprocess.run(
        [str(PROCTOR), "kit", challenge, str(kit), "--seconds", str(seconds),
         "--records", str(records)],
        check=True, capture_output=True,
    )  # fmt: skip
    names = (kit / "data" / "RECORDS").read_text().split()
    paths = [str(kit / "data" / name) for name in names]
    done = subprocess.run([sys.executable, script, *paths], cwd=entry, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed on {records} record(s) of {seconds} s")
    return len(names)


def ehealthkd_baseline_upload(repository: Path, upload: Path) -> None:
    """Run the eHealth-KD 2019 baseline as its run scripts do, on the kit's sentences, into
    copies of ``data/submit`` (the scenario folders and their ``.gitignore``)."""
    kit = upload.parent / "kit"
    subprocess.run(
        [str(PROCTOR), "kit", "ehealthkd2019", str(kit)], check=True, capture_output=True
    )
    for phase in ("dev", "test"):
        for scenario, (number, skip) in SCENARIOS.items():
            (upload / phase).mkdir(parents=True, exist_ok=True)
            shutil.copytree(repository / "data" / "submit" / scenario, upload / phase / scenario)
            source = kit / "data" / phase / scenario / f"input_scenario{number}.txt"
            target = upload / phase / scenario / f"output_scenario{number}.txt"
            training = kit / "training" / "input_training.txt"
            command = [sys.executable, "-m", "scripts.baseline", *skip, str(training)]
            command += [str(source), str(target)]
            subprocess.run(command, cwd=repository, check=True)


def python_example(checkout: Path) -> list[str]:
    """What the ``python-example-2026`` checkout is: its commit and its Dockerfile's FROM.

    Exits with the missing files when ``checkout`` is not laid out as the example is."""
    missing = [name for name in EXAMPLE_FILES if not (checkout / name).is_file()]
    if missing:
        raise SystemExit(f"{checkout} is not a checkout of python-example-2026: no {missing}")
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    lines = (checkout / "Dockerfile").read_text().splitlines()
    base = next((line.split()[1] for line in lines if line.upper().startswith("FROM ")), "?")
    return [f"python-example-2026 at {commit or 'an unknown commit (no .git)'}",
            f"its Dockerfile: FROM {base}"]  # fmt: skip


def with_entry_images(challenge: str, dest: Path) -> Path:
    """A copy of the bundled ``challenge`` whose environment (``physionet2026``, by name) is
    declared in full, allowing entry images with ``python:3.10.1-buster`` as its alias."""
    import yaml

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from proctor.challenges import bundled_root

    shutil.copytree(bundled_root() / challenge, dest, ignore=shutil.ignore_patterns("__pycache__"))
    data = yaml.safe_load((dest / "challenge.yaml").read_text())
    name = data["environment"]
    folder = bundled_root() / f"environment-{name}"
    environment = yaml.safe_load((folder / "environment.yaml").read_text())
    environment["python"] = {k: str(folder / v) for k, v in environment["python"].items()}
    environment["lock"] = str(folder / environment["lock"])
    environment["entry_images"] = {"allow": True, "bases": {EXAMPLE_BASE: name}}
    data["environment"] = environment
    (dest / "challenge.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def readable_copy(source: Path, dest: Path) -> None:
    """Copy ``source`` to ``dest`` readable (folders traversable) by every sandbox uid."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o555 if path.is_dir() else path.stat().st_mode | 0o444)


def arguments() -> argparse.Namespace:
    """The command line (ENTRY_FOLDER may come from ``$PROCTOR_PYTHON_EXAMPLE``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("challenge", help="a bundled challenge name or a challenge folder")
    example = os.environ.get("PROCTOR_PYTHON_EXAMPLE")
    parser.add_argument("entry", type=Path, nargs="?" if example else None, default=example,
                        help="the real entry's folder (or $PROCTOR_PYTHON_EXAMPLE)")  # fmt: skip
    parser.add_argument("--phase", default=None)
    parser.add_argument("--regenerate-answers", action="store_true")
    parser.add_argument("--train", metavar="SCRIPT", help="the entry's training script")
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--records", type=int, default=4)
    parser.add_argument("--ehealthkd-baseline", action="store_true")
    parser.add_argument("--python-example", action="store_true",
                        help="ENTRY_FOLDER is a checkout of python-example-2026")  # fmt: skip
    parser.add_argument("--entry-images", action="store_true",
                        help="with --python-example: allow entry images")  # fmt: skip
    return parser.parse_args()


def print_report(report: dict[str, Any], python_example: bool) -> None:
    """Each stage, the scores and what the entry ran in."""
    for stage in report["stages"]:
        print(f"{stage['name']:<28} {stage['status']:<8} {stage.get('message', '')[:200]}")
    for task, row in report.get("scores", {}).items():
        print(task, {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()})
    environment = report.get("environment") or {}
    print("environment:", environment.get("name"), "status:", report["status"])
    if python_example:
        built = environment.get("name") == "entry-image"
        print("the Dockerfile was " + (f"built: {environment.get('digest')}, base "
              f"{environment.get('base')}" if built else "kept as a file (not built)"))  # fmt: skip


def main() -> int:
    """Run the real entry through ``proctor run``; 0 when it is scored."""
    args = arguments()
    if args.python_example:
        for line in python_example(args.entry):
            print(line)
    with tempfile.TemporaryDirectory(prefix="proctor-real-entry-") as scratch:
        Path(scratch).chmod(0o755)
        entry = Path(scratch) / "entry"
        if args.ehealthkd_baseline:
            ehealthkd_baseline_upload(args.entry.resolve(), Path(scratch) / "upload")
            readable_copy(Path(scratch) / "upload", entry)
        else:
            readable_copy(args.entry, entry)
        if args.train:
            count = train_on_kit(args.challenge, entry, args.train, args.seconds, args.records)
            print(f"{args.train} trained on {count} record(s) of {args.seconds} s")
        if args.regenerate_answers:
            count = regenerate_answers(args.challenge, entry)
            print(f"answers regenerated: {count} records")
        readable_copy(entry, Path(scratch) / "run")
        challenge = args.challenge
        if args.entry_images:
            copy = with_entry_images(challenge, Path(scratch) / "challenge")
            readable_copy(copy, Path(scratch) / "challenge-readable")
            challenge = str(Path(scratch) / "challenge-readable")
        command = [str(PROCTOR), "run", str(Path(scratch) / "run"), "-c", challenge, "--json"]
        if args.phase:
            command += ["--phase", args.phase]
        run = subprocess.run(command, capture_output=True, text=True, check=False)
        try:
            report = json.loads(run.stdout)
        except json.JSONDecodeError:
            print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
            return 1
    print_report(report, args.python_example)
    return 0 if report["status"] == "scored" else 1


if __name__ == "__main__":
    sys.exit(main())
