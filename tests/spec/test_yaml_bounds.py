"""YAML a participant or a bundle author writes is read within bounds (issue 24, findings 3, 7).

A ``metadata`` over 64 KiB is refused at prep before it is parsed, and one whose aliases
expand past a few thousand values is refused too; a bundle's YAML (Codabench, CodaLab,
EvalAI, a program's ``metadata``) whose aliases expand past 100,000 values ("billion laughs")
is refused at import naming the file, as is a value of the wrong type (a list for a title),
naming the key; a ``scores.txt`` that expands too far is the scoring program's failure
(``E-SCORE``), with the reason for the organizer. Everything runs through the real importer,
the real pipeline and the real sandbox; the imports that would expand run as the real CLI
in a process whose address space is capped, so that today's code fails without taking the
host's memory.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import (
    PROGRAM_METADATA,
    V1_PROGRAM_YAML,
    V2_YAML,
    make_v1_program_zip,
    make_v2_bundle,
    program_zip,
    submission_zip,
)
from evalai_challenge import CONFIG, make_evalai_challenge

from proctor.errors import ConfigError
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

PROCTOR = str(Path(sys.executable).with_name("proctor"))
ADDRESS_SPACE = 3 * 1024**3
"""The import's process may map this much: a billion laughs expanded needs far more."""


def laughs(levels: int = 9, width: int = 10) -> str:
    """Anchors ``l0`` .. ``lN``, each a list of ``width`` aliases of the one before."""
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        aliases = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def bomb_key(text: str, key: str, levels: int = 9) -> str:
    """``text`` whose top-level ``key`` is the last anchor of :func:`laughs`, defined first."""
    kept = [line for line in text.splitlines() if not line.startswith(f"{key}:")]
    return laughs(levels) + f"{key}: *l{levels}\n" + "\n".join(kept) + "\n"


def capped_import(bundle: Path, dest: Path) -> subprocess.CompletedProcess[str]:
    """``proctor challenge import BUNDLE DEST --json`` in a process of capped address space."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run(
        [PROCTOR, "challenge", "import", str(bundle), str(dest), "--environment", "host",
         "--json"],
        capture_output=True, text=True, timeout=240, check=False, preexec_fn=cap,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip


def refused_naming(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """The import failed as a usage error whose message holds ``words``, without a traceback."""
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "Traceback" not in said and "MemoryError" not in said, said[-2000:]
    for word in words:
        assert word in said, said[-2000:]


# --- finding 7: a bundle's YAML -------------------------------------------------------------


def test_a_codabench_billion_laughs_title_is_refused_naming_the_file(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=bomb_key(V2_YAML, "title"))
    assert (bundle / "competition.yaml").stat().st_size < 2000
    done = capped_import(bundle, tmp_path / "challenge")
    refused_naming(done, "competition.yaml", "100000", "aliases")
    assert not (tmp_path / "challenge/challenge.yaml").exists()


def test_a_codalab_billion_laughs_is_refused_naming_the_file(tmp_path: Path) -> None:
    bundle = make_v1_program_zip(tmp_path, bomb_key(V1_PROGRAM_YAML, "title"))
    refused_naming(capped_import(bundle, tmp_path / "challenge"), "competition.yaml", "100000")


def test_an_evalai_billion_laughs_is_refused_naming_the_file(tmp_path: Path) -> None:
    root = make_evalai_challenge(tmp_path / "evalai")
    config = CONFIG.replace("title: Toy Accuracy Challenge (EvalAI)\n", "")
    (root / "challenge_config.yaml").write_text(bomb_key(config, "title"))
    done = capped_import(root, tmp_path / "challenge")
    refused_naming(done, "challenge_config.yaml", "100000")


def test_a_bomb_in_a_scoring_programs_metadata_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    (bundle / "scoring_program/metadata.yaml").write_text(bomb_key(PROGRAM_METADATA, "command"))
    done = capped_import(bundle, tmp_path / "challenge")
    refused_naming(done, "metadata.yaml")


def test_an_alias_inside_the_node_it_names_is_refused(tmp_path: Path) -> None:
    looped = V2_YAML.replace("title: Toy Labels Challenge", "title: &t [a, *t]")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=looped)
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.path is not None and caught.value.path.name == "competition.yaml"
    assert "inside the node it names" in caught.value.message


def test_a_document_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    deep = V2_YAML.replace("title: Toy Labels Challenge", "title: " + "[" * 500 + "]" * 500)
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=deep)
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.path is not None and caught.value.path.name == "competition.yaml"
    assert "nested" in caught.value.message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("title", "[a, b]"),
        ("description", "{a: b}"),
        ("docker_image", "[codalab/codalab-legacy:py37]"),
    ],
)
def test_a_codabench_value_of_the_wrong_type_is_refused_naming_the_key(
    tmp_path: Path, key: str, value: str
) -> None:
    lines = [line for line in V2_YAML.splitlines() if not line.startswith(f"{key}:")]
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=f"{key}: {value}\n" + "\n".join(lines))
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == key, caught.value
    assert caught.value.path is not None and caught.value.path.name == "competition.yaml"


def test_a_codabench_phase_name_of_the_wrong_type_is_refused_naming_the_key(
    tmp_path: Path,
) -> None:
    text = V2_YAML.replace("name: Final Phase", "name: {final: phase}")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == "phases[1].name", caught.value


@pytest.mark.parametrize(
    ("old", "new", "location"),
    [
        (
            "execution_time_limit: 60",
            "execution_time_limit: [60]",
            "phases[0].execution_time_limit",
        ),
        ("max_submissions: 100", "max_submissions: {a: 1}", "phases[0].max_submissions"),
        ("tasks: [0, 1]\n  - index: 1", "tasks: [zero, 1]\n  - index: 1", "phases[0].tasks"),
        ("precision: 4", "precision: [4]", "leaderboards[0].columns[0].precision"),
        ("title: Accuracy", "title: [Accuracy]", "leaderboards[0].columns[0].title"),
        ("name: Alpha Task", "name: [Alpha]", "tasks[0].name"),
    ],
)
def test_a_codabench_number_or_name_of_the_wrong_type_is_refused_naming_the_key(
    tmp_path: Path, old: str, new: str, location: str
) -> None:
    assert V2_YAML.count(old) == 1
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=V2_YAML.replace(old, new))
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == location, caught.value


def test_a_codalab_title_of_the_wrong_type_is_refused_naming_the_key(tmp_path: Path) -> None:
    text = V1_PROGRAM_YAML.replace("title: Old Program Toy", "title: [a, b]")
    with pytest.raises(ConfigError) as caught:
        import_challenge(make_v1_program_zip(tmp_path, text), tmp_path / "challenge", "host")
    assert caught.value.location == "title", caught.value
    assert caught.value.path is not None and caught.value.path.name == "competition.yaml"


def test_an_evalai_title_of_the_wrong_type_is_refused_naming_the_key(tmp_path: Path) -> None:
    root = make_evalai_challenge(tmp_path / "evalai")
    config = CONFIG.replace("title: Toy Accuracy Challenge (EvalAI)", "title: [a, b]")
    (root / "challenge_config.yaml").write_text(config)
    with pytest.raises(ConfigError) as caught:
        import_challenge(root, tmp_path / "challenge", "host")
    assert caught.value.location == "title", caught.value
    assert caught.value.path is not None and caught.value.path.name == "challenge_config.yaml"


def test_plain_aliases_crlf_a_bom_and_python_string_tags_still_import(tmp_path: Path) -> None:
    text = V2_YAML.replace("title: Toy Labels Challenge", "title: !!python/unicode 'Toy Tags'")
    data = ("\ufeff" + text.replace("\n", "\r\n")).encode()
    bundle = make_v2_bundle(tmp_path / "bundle")
    (bundle / "competition.yaml").write_bytes(data)
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    written = yaml.safe_load((tmp_path / "challenge/challenge.yaml").read_text())
    assert written["title"] == "Toy Tags" and result.challenge == "toy-tags"


# --- finding 3: a participant's metadata, through the real pipeline -------------------------


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def code_upload(root: Path, metadata: bytes, name: str = "metadata") -> Path:
    """The sample code submission whose ``metadata`` file is ``metadata``."""
    program_zip(root, name="upload")
    folder = root / "upload"
    (folder / "metadata").unlink()
    (folder / name).write_bytes(metadata)
    archive = root / "upload-with-metadata.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(folder.iterdir()):
            zipped.write(path, path.name)
    return archive


def over_64_kib() -> bytes:
    """A ``metadata`` naming the command, one byte over 64 KiB (a long comment after it)."""
    head = PROGRAM_METADATA.encode()
    return head + b"#" + b"x" * (64 * 1024 - len(head) - 1) + b"\n"


def alias_bomb() -> bytes:
    """A small ``metadata`` whose ``command`` comes after 6 levels of 10 aliases (10^6)."""
    return (PROGRAM_METADATA + laughs(6)).encode()


def prep_message(report_json: dict[str, object]) -> str:
    stages = report_json["stages"]
    assert isinstance(stages, list)
    prep = next(stage for stage in stages if stage["name"] == "prep")
    assert prep["status"] == "failed", stages
    return str(prep["message"])


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("name", ["metadata", "metadata.yaml"])
@pytest.mark.parametrize("kind", ["64 KiB + 1", "alias bomb"])
def test_a_metadata_too_large_or_expanding_too_far_is_refused_at_prep(
    shared_dir: Path, settings: Settings, kind: str, name: str
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_v1_program_zip(shared_dir), challenge, "host")
    metadata = over_64_kib() if kind == "64 KiB + 1" else alias_bomb()
    assert len(metadata) == 64 * 1024 + 1 or len(metadata) < 1024
    upload = code_upload(shared_dir, metadata, name)
    report = run_entry(RunRequest(upload, str(challenge)), settings)
    assert report.status is RunStatus.FAILED, report.to_json()
    message = prep_message(report.to_json())
    assert name in message
    if kind == "64 KiB + 1":
        assert "keep it under 64 KiB" in message
        assert "Codabench metadata files are a few lines" in message
    else:
        assert "aliases" in message


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_results_challenge_refuses_a_metadata_over_64_kib_at_prep(
    shared_dir: Path, settings: Settings
) -> None:
    bundle = make_v2_bundle(shared_dir / "bundle")
    challenge = shared_dir / "challenge"
    import_challenge(bundle, challenge, "host")
    upload = submission_zip(shared_dir)
    with zipfile.ZipFile(upload, "a") as zipped:
        zipped.writestr("metadata", b"# " + b"x" * (64 * 1024) + b"\n")
    report = run_entry(RunRequest(upload, str(challenge)), settings)
    assert report.status is RunStatus.FAILED, report.to_json()
    assert "keep it under 64 KiB" in json.dumps(report.to_json())


# --- finding 3: a scores.txt a scoring program writes ---------------------------------------

WRITES_LAUGHS = """\
import sys
from pathlib import Path
output = Path(sys.argv[2])
output.mkdir(parents=True, exist_ok=True)
lines = ['l0: &l0 "lol"']
for level in range(1, 10):
    lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
(output / "scores.txt").write_text("\\n".join(lines) + "\\naccuracy: *l9\\nerror: 0\\n")
"""
WRITES_HUGE = """\
import sys
from pathlib import Path
output = Path(sys.argv[2])
output.mkdir(parents=True, exist_ok=True)
with open(output / "scores.txt", "w") as scores:
    scores.write("accuracy: 0.5\\nerror: 0.5\\nnoise:\\n")
    for index in range(300_000):
        scores.write(f"  - {index}\\n")
"""


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(
    ("program", "reason"),
    [(WRITES_LAUGHS, "aliases"), (WRITES_HUGE, "100000")],
    ids=["billion laughs", "300,000 values"],
)
def test_a_scores_txt_expanding_too_far_is_the_scoring_programs_failure(
    shared_dir: Path, settings: Settings, program: str, reason: str
) -> None:
    bundle = make_v2_bundle(shared_dir / "bundle", score_py=program)
    challenge = shared_dir / "challenge"
    import_challenge(bundle, challenge, "host")
    report = run_entry(RunRequest(submission_zip(shared_dir), str(challenge), keep=True), settings)
    shown = report.to_json()
    assert report.status is RunStatus.FAILED, shown
    assert shown["failure"] == Failure.SCORER
    assert "E-SCORE" in json.dumps(shown)
    assert report.run_dir is not None
    logs = [*report.run_dir.glob("score-error.txt"), *report.run_dir.glob("scoring-*.log")]
    log = "".join(path.read_text() for path in logs)
    assert "scores.txt" in log and reason in log, log[-2000:]
