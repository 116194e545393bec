"""The bundled visceral-anatomy3 challenge: its data, its baseline, its kit, its boards."""

from __future__ import annotations

import math
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
import yaml

from proctor.challenges import bundled_root
from proctor.challenges.visceral_anatomy3.generate import generate
from proctor.errors import ConfigError
from proctor.leaderboard.organs import best_dice_per_organ
from proctor.protocols.command import CommandProtocol, case_argv, list_inputs
from proctor.protocols.command_outputs import match_names
from proctor.resolve import load_challenge
from proctor.scoring.visceral import dashboard
from proctor.services.local.catalog import resolve_challenge, write_kit
from proctor.services.local.demo import demo_entries
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus

ROOT = bundled_root() / "visceral_anatomy3"


def test_the_generator_reproduces_the_committed_voxels(tmp_path: Path) -> None:
    generate(tmp_path)
    committed = sorted(p.relative_to(ROOT / "data") for p in (ROOT / "data").rglob("*.nii.gz"))
    assert committed == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.nii.gz"))
    for rel in committed[:6]:
        fresh, kept = nib.load(tmp_path / rel), nib.load(ROOT / "data" / rel)
        assert np.array_equal(np.asarray(fresh.dataobj), np.asarray(kept.dataobj)), rel
        assert np.allclose(fresh.affine, kept.affine)


def test_the_volumes_are_anisotropic_and_hold_several_organs() -> None:
    reference = next((ROOT / "data" / "CTce" / "test-reference").glob("*.nii.gz"))
    image = nib.load(reference)
    assert len(set(image.header.get_zooms())) > 1
    organs = set(np.unique(np.asarray(image.dataobj)).tolist()) - {0}
    assert organs == {29663, 29662, 86, 58, 1326, 1302, 237}


def test_the_argv_template_expands_the_ids_as_items() -> None:
    protocol = resolve_challenge("visceral-anatomy3").protocol
    assert isinstance(protocol, CommandProtocol)
    argv = case_argv(protocol, "10000200_1_CTce_ThAb")
    assert argv[:6] == ["./execute_standard", "-i", "/data/10000200_1_CTce_ThAb.nii.gz",
                        "-o", "/output", "-r"]  # fmt: skip
    assert argv[6:] == list(protocol.task_ids)
    cases = list_inputs(protocol, ROOT / "data" / "CTce" / "training")
    assert cases == ["10000100_1_CTce_ThAb", "10000101_1_CTce_ThAb"]  # not segmentations/


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"argv": ["{program}", "-r", "ids:{task_ids}"]}, "must be an argv item of its own"),
        ({"argv": ["{program}", "{inptu}"]}, "unknown field"),
        ({"output_pattern": "{case}_{task_id}.nii.gz"}, "{participant}"),
        ({"task_ids": ["58", "58"]}, "must not repeat"),
        ({"program": "../execute_standard"}, "plain relative path"),
    ],
)
def test_a_bad_command_block_names_its_key(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    data = yaml.safe_load((ROOT / "challenge.yaml").read_text())
    data["protocol"].update(change)
    for task in data["tasks"]:
        for key in ("public_inputs", "hidden_inputs", "hidden_references"):
            task[key] = str(ROOT / task[key])
    data.pop("environment")
    (tmp_path / "challenge.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"protocol\.") as raised:
        load_challenge(tmp_path)
    assert message in str(raised.value)


def test_output_names_follow_the_convention(tmp_path: Path) -> None:
    for name in ("C_58_team-1_1.nii.gz", "C_86_x_1.nii.gz"):
        (tmp_path / name).write_bytes(b"")
    pattern = "{case}_{task_id}_{participant}_1.nii.gz"
    found = match_names(tmp_path, pattern=pattern, case="C", asked=("58", "86"))
    assert found == {"58": "C_58_team-1_1.nii.gz", "86": "C_86_x_1.nii.gz"}
    (tmp_path / "C_58_other_1.nii.gz").write_bytes(b"")
    twice = match_names(tmp_path, pattern=pattern, case="C", asked=("58", "86"))
    assert isinstance(twice, str) and "a second file for ID 58" in twice
    (tmp_path / "C_58_other_1.nii.gz").unlink()
    (tmp_path / "C_58_x_2.nii.gz").write_bytes(b"")
    wrong = match_names(tmp_path, pattern=pattern, case="C", asked=("58", "86"))
    assert wrong == "C_58_x_2.nii.gz: not named C_RADLEXID_PARTICIPANT_1.nii.gz"


def test_the_dashboard_gives_empty_count_and_statistics() -> None:
    board = dashboard({("DICE", "liver"): (1, [0.9, 0.5, 0.7]), ("DICE", "spleen"): (3, [])})
    assert board["DICE"]["liver"] == {
        "empty": 1.0, "count": 3.0, "min": 0.5, "max": 0.9, "median": 0.7,
        "mean": pytest.approx(0.7),
    }  # fmt: skip
    spleen = board["DICE"]["spleen"]
    assert (spleen["empty"], spleen["count"]) == (3.0, 0.0) and math.isnan(spleen["mean"])


def test_the_board_shows_the_best_published_dice_per_organ() -> None:
    scores = {
        "a": {"CTce": {"dice_liver": 0.8, "dice_spleen": 0.4}, "MRT1": {"dice_liver": 0.6}},
        "b": {"CTce": {"dice_liver": 0.7, "dice_spleen": 0.6}, "MRT1": {"dice_liver": 0.9}},
    }
    rows = {row.organ: row for row in best_dice_per_organ(scores)}
    assert (rows["liver"].dice, rows["liver"].entry, rows["liver"].task) == (0.9, "b", "MRT1")
    assert rows["liver"].per_task == {"CTce": (0.8, "a"), "MRT1": (0.9, "b")}
    only = best_dice_per_organ(scores, published={"a": {"liver", "spleen"}, "b": {"liver"}})
    assert {row.organ: row.entry for row in only} == {"liver": "b", "spleen": "a"}


def test_the_kit_holds_the_baseline_public_data_only_and_its_readme(tmp_path: Path) -> None:
    write_kit("visceral-anatomy3", tmp_path / "kit")
    kit = tmp_path / "kit"
    assert (kit / "entry" / "execute_standard").stat().st_mode & 0o111
    assert (kit / "data" / "CTce" / "segmentations").is_dir()
    assert not list(kit.rglob("*test*"))
    assert "proctor run entry --challenge visceral-anatomy3" in (kit / "README.md").read_text()


@pytest.mark.sandbox
@pytest.mark.environment
@pytest.mark.slow
def test_the_baseline_scores_the_same_twice_and_beats_empty_masks(
    shared_dir: Path, reference_env: object
) -> None:
    challenge = resolve_challenge("visceral-anatomy3")
    settings = Settings(work_root=shared_dir / "runs")
    entries = dict(demo_entries(challenge, shared_dir / "scratch"))
    runs = [
        run_entry(RunRequest(entries[label], "visceral-anatomy3"), settings)
        for label in ("baseline", "baseline", "empty-masks")
    ]
    assert [r.status for r in runs] == [RunStatus.SCORED] * 3, runs[2].to_json()
    first, second, empty = (r.to_json()["scores"] for r in runs)
    assert first == second
    for task in ("CTce", "MRT1"):
        assert first[task]["organs_dice"] > 0.3
        assert first[task]["organs_segmented"] >= 2
        assert empty[task]["organs_dice"] == 0 and empty[task]["organs_segmented"] == 0
    assert runs[0].determinism["CTce"] == {"rerun": 1.0, "identical": 1.0}
