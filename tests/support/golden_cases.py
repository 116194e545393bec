"""The commands whose output is pinned by golden files in ``tests/data/golden/``.

Each case builds its inputs deterministically under a scratch folder, runs one ``proctor``
command in a subprocess (cwd = the scratch folder, so paths in messages are relative), and
returns exit status, stdout and stderr with the fields that vary between runs masked:
stage ``wall_s``, ``usage``, ``efficiency``, the environment image's ``digest`` (``proctor run
--json``), segeval's total-time line
and the XML execution time. ``tests/support/make_golden.py`` writes the files; ``test_golden.py``
compares. Later issues change a golden file only on purpose and list the changed keys.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np
from ehealthkd_trees import write_scenarios
from paths import BUNDLED, DATA
from toy_challenge import make_challenge, make_entry, make_exam_entry

from proctor.formats.arousal_mat import write_arousal_reference

PROCTOR = Path(sys.executable).parent / "proctor"
GOLDEN = DATA / "golden"
MASK = "<masked>"


@dataclass(frozen=True)
class Result:
    status: int
    stdout: str
    stderr: str

    def text(self) -> str:
        return f"exit {self.status}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


def _proctor(scratch: Path, *args: str) -> Result:
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(scratch / "work"), "COLUMNS": "200"}
    done = subprocess.run(
        [str(PROCTOR), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=scratch,
        timeout=600,
        check=False,
    )
    return Result(done.returncode, done.stdout, _mask_paths(done.stderr, scratch))


def _mask_paths(text: str, scratch: Path) -> str:
    return text.replace(str(scratch), "<scratch>")


def _mask_image(message: str) -> str:
    """An entry image's digest (its base's build varies) and whether the build was a cache hit."""
    message = re.sub(r"sha256:[0-9a-f]{12,64}", f"sha256:{MASK}", message)
    return re.sub(r" (built|reused from an earlier build of the same files) from the Dockerfile",
                  f" {MASK} from the Dockerfile", message)  # fmt: skip


def _mask_run_json(stdout: str) -> str:
    data = json.loads(stdout)
    for stage in data.get("stages", []):
        stage["wall_s"] = MASK
        if stage.get("message"):
            stage["message"] = _mask_image(stage["message"])
    if "usage" in data:
        data["usage"] = MASK
    if "efficiency" in data:
        data["efficiency"] = {task: MASK for task in data["efficiency"]}
    if data.get("environment", {}).get("digest"):
        data["environment"]["digest"] = MASK  # one build's content digest
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _run(scratch: Path, entry: Path, challenge: str, *extra: str) -> Result:
    result = _proctor(scratch, "run", str(entry.relative_to(scratch)), "-c", challenge, "--json",
                      *extra)  # fmt: skip
    stdout = _mask_run_json(result.stdout) if result.stdout.strip() else result.stdout
    return Result(result.status, stdout, result.stderr)


# ---- proctor run ---------------------------------------------------------------------------


def run_bundled_baseline(scratch: Path) -> Result:
    entry = scratch / "baseline"
    shutil.copytree(BUNDLED / "physionet2018" / "baseline", entry)
    return _run(scratch, entry, "physionet2018")


def run_physionet2026_baseline(scratch: Path) -> Result:
    entry = scratch / "baseline"
    shutil.copytree(BUNDLED / "physionet2026" / "baseline", entry)
    return _run(scratch, entry, "physionet2026")


def _toy(scratch: Path, **limits: Any) -> str:
    make_challenge(scratch / "toy", **limits)
    return "toy"


def run_toy_scored(scratch: Path) -> Result:
    return _run(scratch, make_entry(scratch / "entry"), _toy(scratch, determinism_cases=1))


def run_toy_dry_run(scratch: Path) -> Result:
    entry = make_entry(scratch / "entry", extra={"DRYRUN": ""})
    return _run(scratch, entry, _toy(scratch))


def run_toy_quiz_mismatch(scratch: Path) -> Result:
    entry = make_entry(scratch / "entry", next_sh="#!/bin/sh\nyes 0.5 | head -n 40 > $1.vec\n")
    return _run(scratch, entry, _toy(scratch))


def run_toy_setup_fails(scratch: Path) -> Result:
    entry = make_entry(scratch / "entry", setup_sh="#!/bin/sh\necho broken >&2\nexit 4\n")
    return _run(scratch, entry, _toy(scratch))


def run_toy_manifest_missing(scratch: Path) -> Result:
    entry = make_entry(scratch / "entry")
    (entry / "next.sh").unlink()
    return _run(scratch, entry, _toy(scratch))


def run_toy_exam_failures(scratch: Path) -> Result:
    entry = make_exam_entry(scratch / "entry", "  te02) echo hidden-oops >&2; exit 3 ;;")
    return _run(scratch, entry, _toy(scratch))


def run_toy_unsafe_archive(scratch: Path) -> Result:
    archive = scratch / "entry.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("setup.sh", "#!/bin/sh\n")
        handle.writestr("../escape.sh", "#!/bin/sh\n")
    return _run(scratch, archive, _toy(scratch))


def run_broken_challenge(scratch: Path) -> Result:
    root = Path(_toy(scratch))
    path = scratch / root / "challenge.yaml"
    path.write_text(path.read_text() + "unknown_key: 1\n")
    return _run(scratch, make_entry(scratch / "entry"), str(root))


# ---- proctor score ---------------------------------------------------------------------------


def _vec_2018(scratch: Path) -> tuple[Path, list[str]]:
    refdir = scratch / "training"
    rng = np.random.default_rng(3)
    names = []
    for index, name in enumerate(("tr03-0005", "tr03-0029", "tr03-0052")):
        labels = np.zeros(300)
        labels[50 + index * 20 : 120 + index * 10] = 1
        labels[200:230] = -1
        (refdir / name).mkdir(parents=True)
        write_arousal_reference(refdir / name / f"{name}-arousal.mat", labels)
        pred = np.clip(0.3 * (labels > 0) + rng.random(300) * 0.7, 0, 1)
        (scratch / f"{name}.vec").write_text("".join(f"{p:.3f}\n" for p in pred))
        names.append(f"{name}.vec")
    return refdir, names


def score_2018_table(scratch: Path) -> Result:
    _, vecs = _vec_2018(scratch)
    (scratch / vecs[1]).write_text("0.5\n" * 280)  # wrong length: warned, padded
    return _proctor(scratch, "score", "physionet2018", "-r", "training", *vecs)


def score_2018_json_with_error(scratch: Path) -> Result:
    _, vecs = _vec_2018(scratch)
    (scratch / vecs[2]).write_text("0.5\nabc\n" * 150)
    return _proctor(scratch, "score", "physionet2018", "-r", "training", *vecs, "--json")


def _labels_2017(scratch: Path) -> None:
    rng = np.random.default_rng(17)
    labels = "NAO~"
    truth = [labels[i] for i in rng.integers(0, 4, 60)]
    guess = [t if rng.random() < 0.7 else labels[rng.integers(0, 4)] for t in truth]
    names = [f"A{n:05d}" for n in range(1, 61)]
    (scratch / "REFERENCE.csv").write_text(
        "".join(f"{n},{t}\n" for n, t in zip(names, truth, strict=True))
    )
    (scratch / "answers.txt").write_text(
        "".join(f"{n},{g}\n" for n, g in zip(names, guess, strict=True))
    )


def score_2017_text(scratch: Path) -> Result:
    _labels_2017(scratch)
    return _proctor(scratch, "score", "physionet2017", "answers.txt", "REFERENCE.csv")


def score_2017_json(scratch: Path) -> Result:
    _labels_2017(scratch)
    return _proctor(scratch, "score", "physionet2017", "answers.txt", "REFERENCE.csv", "--json")


def score_2017_bad_label(scratch: Path) -> Result:
    _labels_2017(scratch)
    (scratch / "answers.txt").write_text("A00001,X\n")
    return _proctor(scratch, "score", "physionet2017", "answers.txt", "REFERENCE.csv")


def _auc_files(scratch: Path) -> None:
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 2, 80)
    scores = np.round(np.clip(truth * 0.3 + rng.random(80) * 0.7, 0, 1), 3)
    (scratch / "data.solution").write_text("label\n" + "".join(f"{t}\n" for t in truth))
    (scratch / "pred.csv").write_text("label\n" + "".join(f"{s}\n" for s in scores))


def score_auc_text(scratch: Path) -> Result:
    _auc_files(scratch)
    return _proctor(scratch, "score", "auc", "data.solution", "pred.csv")


def score_auc_json(scratch: Path) -> Result:
    _auc_files(scratch)
    return _proctor(scratch, "score", "auc", ".", "pred.csv", "--json")


def score_auc_wrong_rows(scratch: Path) -> Result:
    _auc_files(scratch)
    (scratch / "pred.csv").write_text("label\n0.5\n")
    return _proctor(scratch, "score", "auc", "data.solution", "pred.csv")


_SENTENCES = "ab cd ef\n"
_GOLD_A = "1\t0 2\tConcept\tab\n2\t3 5\tAction\tcd\n3\t6 8\tConcept\tef\n"
_GOLD_B = "target\t2\t1\nsame-as\t1\t3\n"


def _scenarios(root: Path, a_text: str, b_text: str, *, stem: str) -> None:
    write_scenarios(root, a_text, b_text, stem=stem, sentences=_SENTENCES)


def _ehealth_tree(scratch: Path) -> None:
    _scenarios(scratch / "gold", _GOLD_A, _GOLD_B, stem="input")
    subs = scratch / "submissions"
    _scenarios(subs / "team1" / "s1", _GOLD_A, _GOLD_B, stem="output")
    _scenarios(subs / "team1" / "s2", "1\t0 2\tConcept\tab\n2\t3 5\tConcept\tcd\n",
               "target\t2\t1\n", stem="output")  # fmt: skip
    _scenarios(subs / "team2" / "s1", "", "", stem="output")


def ehealthkd_json(scratch: Path) -> Result:
    _ehealth_tree(scratch)
    return _proctor(scratch, "score", "ehealthkd", "submissions", "gold")


def ehealthkd_best_csv(scratch: Path) -> Result:
    _ehealth_tree(scratch)
    return _proctor(scratch, "score", "ehealthkd", "submissions", "gold", "--best", "--csv")


def ehealthkd_best_pretty(scratch: Path) -> Result:
    _ehealth_tree(scratch)
    return _proctor(scratch, "score", "ehealthkd", "submissions", "gold", "--best", "--csv",
                    "--pretty")  # fmt: skip


def ehealthkd_single(scratch: Path) -> Result:
    _ehealth_tree(scratch)
    return _proctor(scratch, "score", "ehealthkd", "submissions/team1", "gold", "--single")


def ehealthkd_bad_line(scratch: Path) -> Result:
    _ehealth_tree(scratch)
    bad = scratch / "submissions" / "team1" / "s2" / "scenario2-taskA" / "output_a_scenario2.txt"
    bad.write_text("1\t0 2\tConcept\n")
    return _proctor(scratch, "score", "ehealthkd", "submissions", "gold")


# ---- proctor segeval -------------------------------------------------------------------------

_TIME_LINE = re.compile(r"^Total execution time= \d+ milliseconds$", re.MULTILINE)
_XML_TIME = re.compile(r'(executiontime|time)="?\d+"?', re.IGNORECASE)


def _volumes(scratch: Path) -> None:
    spacing = (0.8, 0.8, 2.0)
    truth = np.zeros((20, 20, 10), np.uint8)
    truth[5:12, 5:12, 3:7] = 1
    segment = np.zeros_like(truth)
    segment[6:14, 5:12, 3:6] = 1
    segment[18, 18, 9] = 1
    fuzzy = (segment * 200).astype(np.uint8)
    fuzzy[5, 5, 3] = 90
    for name, data in (("truth", truth), ("seg", segment), ("fuzzy", fuzzy)):
        nib.save(nib.Nifti1Image(data, np.diag([*spacing, 1.0])), str(scratch / f"{name}.nii.gz"))
    small = np.zeros((10, 10, 10), np.uint8)
    nib.save(nib.Nifti1Image(small, np.eye(4)), str(scratch / "small.nii.gz"))
    nib.save(nib.Nifti1Image(np.zeros_like(truth), np.eye(4)), str(scratch / "empty.nii.gz"))


def _segeval(scratch: Path, *args: str) -> Result:
    _volumes(scratch)
    result = _proctor(scratch, "segeval", *args)
    stdout = _TIME_LINE.sub("Total execution time= <masked> milliseconds", result.stdout)
    return Result(result.status, stdout, result.stderr)


def _segeval_xml(scratch: Path, *args: str) -> Result:
    result = _segeval(scratch, *args, "-xml", "out.xml")
    xml = (scratch / "out.xml").read_text() if (scratch / "out.xml").exists() else "(no xml)\n"
    xml = _XML_TIME.sub(lambda m: f'{m.group(1)}="<masked>"', xml)
    return Result(result.status, result.stdout + "--- out.xml\n" + xml, result.stderr)


def segeval_default(scratch: Path) -> Result:
    return _segeval(scratch, "truth.nii.gz", "seg.nii.gz")


def segeval_millimeter_xml(scratch: Path) -> Result:
    return _segeval_xml(scratch, "truth.nii.gz", "seg.nii.gz", "-unit", "millimeter")


def segeval_fuzzy_threshold(scratch: Path) -> Result:
    return _segeval(scratch, "truth.nii.gz", "fuzzy.nii.gz", "-thd", "0.5",
                    "-use", "DICE,HDRFDST@0.95@,AVGDIST,ICCORR")  # fmt: skip


def segeval_fuzzy_nostreaming(scratch: Path) -> Result:
    return _segeval(scratch, "truth.nii.gz", "fuzzy.nii.gz", "-nostreaming")


def segeval_different_sizes(scratch: Path) -> Result:
    return _segeval_xml(scratch, "truth.nii.gz", "small.nii.gz")


def segeval_empty(scratch: Path) -> Result:
    return _segeval(scratch, "truth.nii.gz", "empty.nii.gz")


def segeval_bad_option(scratch: Path) -> Result:
    return _segeval(scratch, "truth.nii.gz", "seg.nii.gz", "-bogus")


CASES: dict[str, Callable[[Path], Result]] = {
    name: function
    for name, function in sorted(globals().items())
    if name.startswith(("run_", "score_", "ehealthkd_", "segeval_")) and callable(function)
}
SANDBOXED = {name for name in CASES if name.startswith("run_")}
