"""The starting kit is a replica of any challenge: the same challenge, scored on a public
stand-in, without a byte of hidden data (issue 26, item 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import V2_YAML, make_v2_bundle
from kit_audit import KITS_CHECKED, audit

from proctor.environments.digests import declaration_digest
from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.services.local.authoring import check_challenge, new_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.catalog import write_kit
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus, Stage


def _edit(folder: Path, change: dict[str, object]) -> None:
    path = folder / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    task = data["tasks"][0]
    for key, value in change.items():
        if value is None:
            task.pop(key, None)
        else:
            task[key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["records", "predictions"])
def test_the_kit_of_a_new_challenge_runs_every_stage_and_scores_on_its_stand_in(
    shared_dir: Path, protocol: str
) -> None:
    folder = shared_dir / "organizer"
    new_challenge(folder, protocol, name="replicated")
    assert check_challenge(folder) == []
    kit = shared_dir / "kit"
    write_kit(str(folder), kit)
    replica = load_challenge(kit / "challenge")
    original = load_challenge(folder)
    assert replica.protocol == original.protocol
    assert replica.limits == original.limits
    environments = [c.environment_of("main") for c in (replica, original)]
    assert None not in environments
    assert len({declaration_digest(e) for e in environments if e is not None}) == 1
    assert replica.tasks[0].hidden_references == (kit / "challenge/stand-in/main/references")
    report = run_entry(
        RunRequest(kit / "entry", str(kit / "challenge")), Settings(work_root=shared_dir / "runs")
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    assert set(report.scores["main"]) == {"mae", "within_1"}
    assert "proctor run entry --challenge challenge" in (kit / "README.md").read_text()
    assert audit([shared_dir]) == [] and kit in KITS_CHECKED


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["records", "predictions"])
def test_without_a_stand_in_the_replica_runs_prep_and_quiz_and_says_so(
    shared_dir: Path, protocol: str
) -> None:
    folder = shared_dir / "organizer"
    new_challenge(folder, protocol, name="nostand")
    _edit(folder, {"kit": None})
    kit = shared_dir / "kit"
    write_kit(str(folder), kit)
    readme = (kit / "README.md").read_text()
    assert "Task main runs prep and quiz only" in readme
    assert "no public stand-in" in readme
    text = (kit / "challenge/challenge.yaml").read_text()
    assert "hidden_inputs" not in text and "hidden_references" not in text
    report = run_entry(
        RunRequest(kit / "entry", str(kit / "challenge")), Settings(work_root=shared_dir / "runs")
    )
    stages = {str(stage.stage): str(stage.status) for stage in report.tasks["main"].stages}
    assert stages[Stage.QUIZ] == "passed" and stages[Stage.EXAM] == "skipped", stages
    assert stages.get(Stage.SCORE, "skipped") == "skipped", stages
    assert report.status is not RunStatus.FAILED, report.to_json()
    assert not report.scores.get("main")


def test_the_kit_omits_the_scoring_program_when_the_challenge_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "organizer"
    new_challenge(folder, "records", name="secretscorer")
    path = folder / "challenge.yaml"
    path.write_text(path.read_text() + "kit: {scorer: omit}\n")
    kit = tmp_path / "kit"
    write_kit(str(folder), kit)
    assert not (kit / "challenge/scoring").exists()
    assert not any(p.name == "score.py" for p in kit.rglob("*"))
    assert "the scoring program is not in the kit" in (kit / "README.md").read_text()
    assert load_challenge(kit / "challenge").tasks[0].hidden_inputs is None


def test_a_stand_in_is_checked_where_it_is_declared(tmp_path: Path) -> None:
    folder = tmp_path / "organizer"
    new_challenge(folder, "records", name="checked")
    _edit(folder, {"kit": {"stand_in": {"inputs": "nowhere", "references": "stand-in/references"}}})
    with pytest.raises(ConfigError) as missing:
        load_challenge(folder)
    assert missing.value.location == "tasks[0].kit.stand_in.inputs"
    assert "nowhere" in missing.value.message
    _edit(folder, {"kit": {"stand_in": {"inputs": "stand-in/inputs", "references": "data"}}})
    with pytest.raises(ConfigError) as overlap:
        load_challenge(folder)
    assert overlap.value.location == "tasks[0].kit.stand_in.references"
    assert "overlaps the hidden data" in overlap.value.message
    _edit(folder, {"kit": {"stand_in": {"inputs": "stand-in/inputs", "references": "baseline"}}})
    problems = check_challenge(folder)
    assert [p.location for p in problems] == ["tasks[0].kit.stand_in.references"]
    assert "no reference file" in problems[0].message


def test_the_audit_finds_hidden_bytes_copied_into_a_stand_in(tmp_path: Path) -> None:
    """The check every test's kits go through can fail: a stand-in copied from hidden data."""
    folder = tmp_path / "organizer"
    new_challenge(folder, "records", name="leaky")
    shutil.copy(folder / "data/reference/h01.txt", folder / "stand-in/references/s01.txt")
    kit = tmp_path / "kit"
    write_kit(str(folder), kit)
    leaks = audit([tmp_path])
    assert len(leaks) == 1 and "stand-in/main/references/s01.txt" in leaks[0]
    shutil.rmtree(kit)  # so the test's own audit passes


def test_a_bundled_challenge_s_kit_loads_as_a_replica_without_hidden_data(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    write_kit("physionet2017", kit)
    replica = load_challenge(kit / "challenge")
    assert replica.name == "physionet2017"
    assert all(task.hidden_inputs is None for task in replica.tasks)
    assert audit([tmp_path]) == []


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_imported_bundle_s_public_sample_is_its_kit_s_stand_in(shared_dir: Path) -> None:
    bundle = make_v2_bundle(
        shared_dir / "bundle",
        yaml_text=V2_YAML.replace(
            "    tasks: [0, 1]\n  - index: 1",
            "    tasks: [0, 1]\n    public_data: sample\n  - index: 1",
        ),
    )
    (bundle / "sample").mkdir()
    (bundle / "sample" / "truth.txt").write_text("b\nb\nb\na\na\na\n")  # made up: 3 of 6 right
    challenge = shared_dir / "imported"
    result = import_challenge(bundle, challenge, "host")
    tasks = yaml.safe_load((challenge / "challenge.yaml").read_text())["tasks"]
    assert [task["kit"]["stand_in"]["references"] for task in tasks] == ["kit/public_data"] * 2
    assert not any("runs prep and quiz only" in warning for warning in result.warnings)
    kit = shared_dir / "kit"
    write_kit(str(challenge), kit)
    report = run_entry(
        RunRequest(kit / "entry", str(kit / "challenge"), phase="Development Phase"),
        Settings(work_root=shared_dir / "runs"),
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["alpha-task"]["accuracy"] == pytest.approx(3 / 6)  # hidden: 5 / 6


def test_an_imported_bundle_without_a_sample_says_its_replica_stops_after_the_quiz(
    tmp_path: Path,
) -> None:
    challenge = tmp_path / "imported"
    import_challenge(make_v2_bundle(tmp_path / "bundle"), challenge, "host")
    tasks = yaml.safe_load((challenge / "challenge.yaml").read_text())["tasks"]
    assert all("kit" not in task for task in tasks)
    write_kit(str(challenge), tmp_path / "kit")
    assert "run prep and quiz only" in (tmp_path / "kit" / "README.md").read_text()


def test_challenge_check_refuses_a_folder_the_kit_copies_that_holds_hidden_data(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "organizer"
    new_challenge(folder, "records", name="nested")
    shutil.move(folder / "data/reference", folder / "scoring/reference")
    _edit(folder, {"hidden_references": "scoring/reference"})
    problems = check_challenge(folder)
    assert any("holds hidden data" in problem.message for problem in problems), problems
    with pytest.raises(ConfigError, match="holds hidden data"):
        write_kit(str(folder), tmp_path / "kit")
    assert not (tmp_path / "kit").exists()  # refused before anything was written
