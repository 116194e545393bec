from pathlib import Path

import pytest
from minimal_challenge import MINIMAL, write

from proctor.errors import ConfigError
from proctor.resolve import load_challenge


@pytest.fixture
def challenge_dir(tmp_path: Path) -> Path:
    for folder in ("public", "hidden", "refs"):
        (tmp_path / folder).mkdir()
    return tmp_path


def test_a_minimal_challenge_loads_with_defaults_and_absolute_paths(challenge_dir: Path) -> None:
    write(challenge_dir, MINIMAL)
    challenge = load_challenge(challenge_dir)
    assert challenge.protocol.setup_s == 300  # type: ignore[attr-defined]
    assert challenge.protocol.case_s == 20  # type: ignore[attr-defined]
    assert challenge.disclosure.exam == "counts"
    task = challenge.task("main")
    assert task.public_inputs == (challenge_dir / "public").resolve()
    assert challenge.phase(None).name == "final"


def test_an_unknown_key_is_an_error_naming_file_and_yaml_path(challenge_dir: Path) -> None:
    data = {**MINIMAL, "tasks": [{**MINIMAL["tasks"][0], "pubic_inputs": "x"}]}  # type: ignore[dict-item]
    path = write(challenge_dir, data)
    with pytest.raises(ConfigError) as err:
        load_challenge(challenge_dir)
    assert str(path) in str(err.value)
    assert "tasks[0].pubic_inputs" in str(err.value)
    assert "unknown key" in str(err.value)


def test_an_unknown_protocol_key_names_the_protocol_path(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "protocol": {"kind": "records", "nxt": "next.sh"}})
    with pytest.raises(ConfigError, match=r"protocol\.nxt"):
        load_challenge(challenge_dir)


def test_a_phase_naming_an_unknown_task_is_rejected(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "phases": [{"name": "final", "tasks": ["other"]}]})
    with pytest.raises(ConfigError, match="unknown task 'other'"):
        load_challenge(challenge_dir)


def test_a_missing_data_folder_is_named(challenge_dir: Path) -> None:
    (challenge_dir / "refs").rmdir()
    write(challenge_dir, MINIMAL)
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.hidden_references"):
        load_challenge(challenge_dir)


def test_hidden_data_inside_the_public_folder_is_refused(challenge_dir: Path) -> None:
    (challenge_dir / "public" / "refs").mkdir()
    task = {**MINIMAL["tasks"][0], "hidden_references": "public/refs"}  # type: ignore[dict-item]
    write(challenge_dir, {**MINIMAL, "tasks": [task]})
    with pytest.raises(ConfigError, match="must not lie inside the public inputs"):
        load_challenge(challenge_dir)


def test_duplicate_keys_are_refused_not_silently_overwritten(challenge_dir: Path) -> None:
    (challenge_dir / "challenge.yaml").write_text("name: a\nname: b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="duplicate key 'name'"):
        load_challenge(challenge_dir)


def test_broken_yaml_names_the_file(challenge_dir: Path) -> None:
    (challenge_dir / "challenge.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_challenge(challenge_dir)


def test_a_missing_challenge_file_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no challenge\.yaml here"):
        load_challenge(tmp_path)


def test_wrong_types_name_the_key(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "protocol": {"kind": "records", "case_s": "twenty"}})
    with pytest.raises(ConfigError, match=r"protocol\.case_s"):
        load_challenge(challenge_dir)


def test_a_time_limit_under_limits_is_told_to_move_to_the_protocol(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "limits": {"case_s": 20}})
    with pytest.raises(ConfigError, match=r"limits\.case_s: .*move case_s to protocol\.case_s"):
        load_challenge(challenge_dir)


def test_an_unknown_protocol_kind_lists_the_runnable_ones(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "protocol": {"kind": "telepathy"}})
    with pytest.raises(ConfigError, match=r"protocol\.kind: unknown protocol kind .*use one of"):
        load_challenge(challenge_dir)


def test_scorer_names_and_metrics_are_checked_by_the_loader_alone(challenge_dir: Path) -> None:
    task = {**MINIMAL["tasks"][0], "metrics": ["auprc", "f1"]}  # type: ignore[dict-item]
    write(challenge_dir, {**MINIMAL, "tasks": [task]})
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.metrics\[1\]"):
        load_challenge(challenge_dir)


def test_the_leaderboard_direction_comes_from_the_metric(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "leaderboard": {"metric": "brier"}})
    assert not load_challenge(challenge_dir).leaderboard_direction().higher_is_better
    write(challenge_dir, {**MINIMAL, "leaderboard": {"metric": "auprc", "higher_is_better": False}})
    with pytest.raises(ConfigError, match=r"leaderboard\.higher_is_better: unknown key"):
        load_challenge(challenge_dir)


def test_a_count_cannot_rank_a_leaderboard(challenge_dir: Path) -> None:
    write(challenge_dir, {**MINIMAL, "leaderboard": {"metric": "records"}})
    with pytest.raises(ConfigError, match=r"leaderboard\.metric: 'records' is a count"):
        load_challenge(challenge_dir)


def test_the_spec_objects_are_frozen(challenge_dir: Path) -> None:
    write(challenge_dir, MINIMAL)
    challenge = load_challenge(challenge_dir)
    with pytest.raises(ValueError, match="frozen"):
        challenge.name = "other"  # type: ignore[misc]


def test_a_metric_the_scorer_does_not_offer_is_named(challenge_dir: Path) -> None:
    from proctor.services.local.catalog import resolve_challenge

    task = {**MINIMAL["tasks"][0], "metrics": ["auprc", "f1"]}  # type: ignore[dict-item]
    write(challenge_dir, {**MINIMAL, "tasks": [task]})
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.metrics\[1\]: scorer 'physionet2018' has"):
        resolve_challenge(str(challenge_dir))


def test_a_leaderboard_metric_no_task_reports_is_refused(challenge_dir: Path) -> None:
    from proctor.services.local.catalog import resolve_challenge

    write(challenge_dir, {**MINIMAL, "leaderboard": {"metric": "dice"}})
    with pytest.raises(ConfigError, match=r"leaderboard\.metric"):
        resolve_challenge(str(challenge_dir))


def test_an_unknown_scorer_is_named(challenge_dir: Path) -> None:
    from proctor.services.local.catalog import resolve_challenge

    task = {**MINIMAL["tasks"][0], "scorer": "nosuch"}  # type: ignore[dict-item]
    write(challenge_dir, {**MINIMAL, "tasks": [task]})
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer: unknown scorer 'nosuch'"):
        resolve_challenge(str(challenge_dir))


def test_a_hidden_record_without_a_reference_is_found_before_any_exam(challenge_dir: Path) -> None:
    from proctor.services.local.catalog import resolve_challenge

    (challenge_dir / "hidden" / "RECORDS").write_text("a\nb\n")
    (challenge_dir / "refs" / "a-arousal.mat").write_bytes(b"")
    write(challenge_dir, MINIMAL)
    with pytest.raises(
        ConfigError, match=r"tasks\[0\]\.hidden_references: 1 hidden record.*b-arousal"
    ):
        resolve_challenge(str(challenge_dir))


@pytest.mark.parametrize(
    ("limits", "location"),
    [
        ({"memory_bytes": True}, r"limits\.memory_bytes"),
        ({"home_bytes": "20"}, r"limits\.home_bytes"),
    ],
)
def test_booleans_and_strings_are_not_numbers(
    challenge_dir: Path, limits: dict[str, object], location: str
) -> None:
    """Hardening item 17: `true` was taken as 1 byte and "20" as a number."""
    write(challenge_dir, {**MINIMAL, "limits": limits})
    with pytest.raises(ConfigError, match=location):
        load_challenge(challenge_dir)
    write(challenge_dir, {**MINIMAL, "protocol": {"kind": "records", "case_s": "20"}})
    with pytest.raises(ConfigError, match=r"protocol\.case_s"):
        load_challenge(challenge_dir)


def test_every_problem_is_listed_not_counted(challenge_dir: Path) -> None:
    """Hardening item 17: '(and 7 more problems)' hid the problems."""
    write(challenge_dir, {**MINIMAL, "limits": {"memory_bytes": True, "tmp_bytes": -1},
                          "parallelism": {"jobs": "x"}})  # fmt: skip
    with pytest.raises(ConfigError) as err:
        load_challenge(challenge_dir)
    text = str(err.value)
    assert "more problem" not in text
    for location in ("limits.memory_bytes", "limits.tmp_bytes", "parallelism.jobs"):
        assert location in text


def test_more_determinism_cases_than_hidden_records_is_refused(challenge_dir: Path) -> None:
    """Hardening item 17: the rerun count was silently shrunk to the hidden set."""
    from proctor.services.local.catalog import resolve_challenge

    (challenge_dir / "hidden" / "RECORDS").write_text("a\n")
    (challenge_dir / "refs" / "a-arousal.mat").write_bytes(b"")
    phases = [{"name": "final", "tasks": ["main"], "determinism_cases": 3}]
    write(challenge_dir, {**MINIMAL, "phases": phases})
    with pytest.raises(ConfigError, match=r"phases\[0\]\.determinism_cases: 3 .* 1 hidden"):
        resolve_challenge(str(challenge_dir))
