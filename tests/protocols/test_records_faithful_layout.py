"""Real 2017/2018-style entries in the sandbox: the record's files in the working directory.

The 2018 entry reads ``RECORD.mat`` with ``scipy.io.loadmat`` and ``RECORD-arousal.mat`` with
h5py from its current directory only (as the organizers' sample code does, appending the (N, 1)
labels to the (N, channels) signals along axis 1), never ``$PROCTOR_DATA``. The 2017 entries
append ``RECORD,LABEL`` to ``answers.txt``: cases run in parallel into one shared file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from proctor_cli import proctor

from proctor.challenges import bundled_root

PN2018 = bundled_root() / "physionet2018"
PN2017 = bundled_root() / "physionet2017"

SAMPLE_2018 = """
import os, sys
import h5py, numpy, scipy.io

record = sys.argv[1]
with open(record + ".hea") as header:
    lines = [line.split() for line in header.read().splitlines()]
n_signals, n_samples = int(lines[0][1]), int(lines[0][3])
names = [line[8] for line in lines[1 : 1 + n_signals]]
signals = numpy.transpose(scipy.io.loadmat(record + ".mat")["val"])
assert signals.shape == (n_samples, 13), signals.shape
assert names[2] == "C3-M2" and names[11] == "SaO2" and names[12] == "ECG", names
if record.startswith("te"):
    # hidden records come without labels, in the working folder or anywhere else
    assert not os.path.exists(record + "-arousal.mat")
    assert not os.path.exists(os.environ["PROCTOR_DATA"] + "/" + record + "-arousal.mat")
else:
    arousals = numpy.array(h5py.File(record + "-arousal.mat", "r")["data"]["arousals"])
    assert arousals.shape == (n_samples, 1), arousals.shape
    data = numpy.append(signals, arousals, axis=1)
    assert data.shape == (n_samples, 14)
    stages = h5py.File(record + "-arousal.mat", "r")["data"]["sleep_stages"]
    assert sorted(stages) == sorted(["wake", "nonrem1", "nonrem2", "nonrem3", "rem", "undefined"])
numpy.savetxt(record + ".vec", numpy.full(n_samples, 0.25), fmt="%.3f")
"""


def _entry(folder: Path, next_sh: str, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in {"setup.sh": "#!/bin/sh\nexit 0\n", "next.sh": next_sh, **files}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (folder / "setup.sh").chmod(0o755)
    (folder / "next.sh").chmod(0o755)
    for name in ("AUTHORS.txt", "LICENSE.txt"):
        (folder / name).write_text("test\n")
    return folder


def _records(folder: Path) -> list[str]:
    return (folder / "RECORDS").read_text().split()


def _stages(report: dict[str, object]) -> dict[str, tuple[str, str]]:
    stages = report["stages"]
    assert isinstance(stages, list)
    return {s["name"]: (s["status"], s["message"]) for s in stages}


@pytest.mark.sandbox
def test_a_2018_sample_style_entry_reads_its_record_from_the_working_directory(
    shared_dir: Path,
) -> None:
    training = PN2018 / "data" / "training"
    answers = {}
    for record in _records(training):
        samples = int((training / f"{record}.hea").read_text().split()[3])
        answers[f"answers/{record}.vec"] = "0.250\n" * samples
    next_sh = '#!/bin/sh\nset -e\ncd "$(pwd)"\nexec python3 sample.py "$1"\n'
    entry = _entry(shared_dir / "entry", next_sh, {"sample.py": SAMPLE_2018, **answers})
    done = proctor("run", str(entry), "-c", "physionet2018", "--json", work_root=shared_dir)
    report = json.loads(done.stdout)
    assert done.returncode == 0, (done.stderr, report)
    stages = _stages(report)
    assert stages["quiz"][0] == "passed", stages["quiz"]
    assert stages["exam"] == ("passed", "exam: 8 cases, 8 passed, 0 failed (0 timed out)")
    assert report["scores"]["arousal"]["records_zero_filled"] == 0


@pytest.mark.sandbox
def test_2017_answers_appended_in_parallel_are_collected_per_record(shared_dir: Path) -> None:
    # The baseline appends to one answers.txt from cases running at once (jobs 2).
    entry = shared_dir / "baseline"
    shutil.copytree(PN2017 / "baseline", entry)
    done = proctor(
        "run", str(entry), "-c", "physionet2017", "--jobs", "2", "--json", work_root=shared_dir
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, (done.stderr, report)
    assert _stages(report)["quiz"] == ("passed", "48 records matched the shipped answers")
    scores = report["scores"]["af"]
    assert scores["records_zero_filled"] == 0
    trivial = proctor(
        "run", str(PN2017 / "trivial"), "-c", "physionet2017", "--json", work_root=shared_dir
    )
    assert trivial.returncode == 0, trivial.stderr
    assert scores["score"] > json.loads(trivial.stdout)["scores"]["af"]["score"] + 0.3


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", "answers.txt: next.sh appended no line A00001,ANSWER to it"),
        ('echo "$1,A"', "wrote 'A00001,A' where the shipped answers.txt says 'A00001,N'"),
    ],
)
def test_a_2017_quiz_failure_names_the_record_and_its_line(
    shared_dir: Path, line: str, expected: str
) -> None:
    answers = (PN2017 / "baseline" / "answers.txt").read_text()
    next_sh = f"#!/bin/sh\n{line} >> answers.txt\n" if line else "#!/bin/sh\nexit 0\n"
    entry = _entry(shared_dir / "entry", next_sh, {"answers.txt": answers})
    done = proctor("run", str(entry), "-c", "physionet2017", "--json", work_root=shared_dir)
    assert done.returncode == 1, done.stderr
    status, message = _stages(json.loads(done.stdout))["quiz"]
    assert status == "failed"
    assert expected in message
