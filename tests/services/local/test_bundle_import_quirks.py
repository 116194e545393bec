"""Quirks of real public bundles, each on a small look-alike written for the purpose.

Every case here was met importing or running public Codabench/CodaLab bundles and EvalAI
challenges (docs/import-bundles.md, "Real bundles tried"); none of their files is used.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import (
    PREDICTIONS,
    SCORE_JSON,
    V2_YAML,
    make_v1_zip,
    make_v2_bundle,
    score_task_directly,
    submission_zip,
)
from evalai_challenge import make_evalai_challenge
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.errors import ConfigError, UsageError
from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.bundle_import.reading import parse_date
from proctor.services.local.catalog import write_kit
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus


def _yaml(folder: Path) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load((folder / "challenge.yaml").read_text())
    return data


@pytest.mark.parametrize(
    ("image", "environment"),
    [
        ("codalab/codalab-legacy:py312", "codabench"),
        ("codalab/codalab-legacy:py37", "codabench-legacy"),
        ("codalab/codalab-legacy:py3", "codabench-legacy"),
        ("codalab/codalab-legacy:gpu", "codabench"),
    ],
)
def test_the_docker_image_tag_names_the_environment(
    tmp_path: Path, image: str, environment: str
) -> None:
    text = V2_YAML.replace("codalab/codalab-legacy:py37", image)
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    result = import_challenge(bundle, tmp_path / "challenge")
    assert _yaml(tmp_path / "challenge")["environment"] == environment
    assert result.warnings[0].startswith(f"environment: {environment} (docker_image {image}")
    chosen = import_challenge(bundle, tmp_path / "on-host", "host")  # the organizer chose
    assert chosen.warnings[0] == f"environment: host (docker_image {image})"


def test_a_bundle_without_solutions_still_gives_a_kit(tmp_path: Path) -> None:
    text = V2_YAML.replace(
        "solutions:\n  - index: 0\n    tasks: [0, 1]\n    path: solutions/sample.zip\n", ""
    )
    text = text.replace("    tasks: [1]\n", "    tasks: [1]\n    starting_kit: pages\n")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    import_challenge(bundle, tmp_path / "challenge", "host")
    written = write_kit(str(tmp_path / "challenge"), tmp_path / "kit")
    assert not (tmp_path / "kit/entry").exists()
    assert (tmp_path / "kit/starting_kit/overview.md").is_file()
    assert "No baseline entry" in (tmp_path / "kit/README.md").read_text()
    assert tmp_path / "kit/README.md" in written
    said = CliRunner().invoke(
        build_app(), ["kit", str(tmp_path / "challenge"), str(tmp_path / "k2")]
    )
    assert said.exit_code == 0, said.output
    assert "try it" not in said.output and "no baseline entry: see" in said.output


def test_a_refusal_in_a_zipped_bundle_names_the_zip_not_a_scratch_folder(tmp_path: Path) -> None:
    text = V2_YAML.replace("        sorting: asc\n", "        sorting: up\n")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    archive = shutil.make_archive(str(tmp_path / "bundle"), "zip", bundle)
    with pytest.raises(ConfigError) as caught:
        import_challenge(Path(archive), tmp_path / "challenge", "host")
    assert str(caught.value).startswith(f"{archive}/competition.yaml: leaderboards[0]")
    assert "proctor-import-" not in str(caught.value)


def test_codalabs_own_export_tags_are_read_as_strings(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    shutil.unpack_archive(make_v1_zip(tmp_path), folder)
    yaml_file = folder / "competition.yaml"
    text = yaml_file.read_text().replace(
        "scoring_program: scoring_program.zip",
        "scoring_program: !!python/unicode 'scoring_program.zip'",
    )
    yaml_file.write_text(text.replace("label: Error", "label: !!python/str Error"))
    import_challenge(folder, tmp_path / "challenge", "host")
    challenge = load_challenge(tmp_path / "challenge")
    assert challenge.tasks[0].scorer.metrics["error"].description == "Error"  # type: ignore[union-attr]


def test_a_date_with_a_one_digit_day_is_read() -> None:
    found = parse_date("2012-10-2", "end_date")
    assert found is not None and found.isoformat() == "2012-10-02T00:00:00+00:00"


def test_a_bundle_listing_tasks_without_a_version_is_read_as_codabench_v2(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=V2_YAML.replace("version: 2\n", ""))
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    assert result.format == "codabench-v2"
    assert [task["name"] for task in result.tasks] == ["alpha-task", "beta-task"]
    assert any(warning.startswith("version: none written") for warning in result.warnings)


def test_another_tools_challenge_config_is_not_taken_for_evalais(tmp_path: Path) -> None:
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim/challenge_config.yaml").write_text("width: 640\nheight: 480\nmax_steps: 500\n")
    with pytest.raises(UsageError) as caught:
        import_challenge(tmp_path / "sim", tmp_path / "challenge")
    assert "not a bundle Proctor imports" in str(caught.value)


INSTALLING_INIT = '''\
import subprocess
import sys


def install(package):
    subprocess.check_call([sys.executable, "-m", "pip", "install", package])


install("nltk")
"""
install("commented-out")
"""
from .main import evaluate
'''


def test_programs_reaching_for_the_network_are_named_in_warnings(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "evalai")
    (source / "evaluation_script/__init__.py").write_text(INSTALLING_INIT)
    main_py = source / "evaluation_script/main.py"
    main_py.write_text("import nltk\nnltk.download('punkt')\n" + main_py.read_text())
    warnings = import_challenge(source, tmp_path / "imported", "host").warnings
    assert any(
        text.startswith("evaluation_script/__init__.py: installs packages with pip")
        and "install('nltk') (line 9)" in text
        and "commented-out" not in text
        for text in warnings
    )
    assert any("nltk.download('punkt') (line 2)" in text for text in warnings)
    score_py = "import os\nos.system('pip install shapely')\n" + SCORE_JSON
    bundle = make_v2_bundle(tmp_path / "bundle", score_py=score_py)
    warnings = import_challenge(bundle, tmp_path / "challenge", "host").warnings
    pip = [text for text in warnings if "installs packages with pip" in text]
    assert len(pip) == 1  # one program, copied for both tasks: named once
    assert pip[0].startswith("programs/alpha-task/score.py: installs packages with pip")


RANK_AVERAGE = """\
    ave_rank:
      leaderboard: *RESULTS
      label: < Rank >
      rank: 0
      sort: asc
      computed:
        operation: Avg
        fields: accuracy, error
"""


def test_a_codalab_rank_average_column_is_left_out_not_averaged_as_scores(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "v1"
    shutil.unpack_archive(make_v1_zip(tmp_path), folder)
    yaml_file = folder / "competition.yaml"
    text = yaml_file.read_text().replace("  columns:\n", "  columns:\n" + RANK_AVERAGE)
    assert RANK_AVERAGE in text
    yaml_file.write_text(text)
    result = import_challenge(folder, tmp_path / "challenge", "host")
    challenge = load_challenge(tmp_path / "challenge")
    assert list(challenge.tasks[0].scorer.metrics) == ["accuracy", "error"]  # type: ignore[union-attr]
    assert challenge.leaderboard is not None and challenge.leaderboard.metric == "accuracy"
    assert any(
        warning.startswith("leaderboard.columns.ave_rank.computed: CodaLab averaged the ranks")
        for warning in result.warnings
    )


def test_a_page_the_bundle_does_not_hold_is_named_in_a_warning(tmp_path: Path) -> None:
    text = V2_YAML.replace(
        "    file: pages/overview.md\n",
        "    file: pages/overview.md\n  - title: Goals\n    file: goals.html\n",
    )
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    assert "page 'Goals' (goals.html): no such file in the bundle: left out" in result.warnings


def test_an_imported_evalai_challenge_gives_a_kit(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "evalai")
    import_challenge(source, tmp_path / "challenge", "host")  # three tasks, one case name
    write_kit(str(tmp_path / "challenge"), tmp_path / "kit")
    assert (tmp_path / "kit/README.md").is_file()
    assert (tmp_path / "kit/data/public/submission").is_dir()


def test_a_docker_based_evalai_challenge_is_refused_naming_the_key(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "evalai")
    config = source / "challenge_config.yaml"
    config.write_bytes(
        config.read_bytes().replace(
            b"    codename: dev\r\n", b"    codename: dev\r\n    is_docker_based: True\r\n"
        )
    )
    with pytest.raises(ConfigError) as caught:
        import_challenge(source, tmp_path / "challenge", "host")
    assert caught.value.location == "challenge_phases[dev].is_docker_based"
    assert "set `is_docker_based: False`" in str(caught.value)


def test_a_column_without_precision_shows_the_platforms_two_digits(tmp_path: Path) -> None:
    result = import_challenge(make_v1_zip(tmp_path), tmp_path / "v1", "host")
    assert load_challenge(tmp_path / "v1").digits("accuracy") == 4  # numeric_format: 4
    text = (tmp_path / "v1/challenge.yaml").read_text()
    assert result.format == "codalab-v1" and "numeric_format" not in text
    source = make_evalai_challenge(tmp_path / "evalai")  # no leaderboard_decimal_precision
    import_challenge(source, tmp_path / "evalai-challenge", "host")
    assert load_challenge(tmp_path / "evalai-challenge").digits("Accuracy") == 2
    bundle = make_v2_bundle(
        tmp_path / "bundle", yaml_text=V2_YAML.replace("        precision: 4\n", "")
    )
    import_challenge(bundle, tmp_path / "v2", "host")
    assert load_challenge(tmp_path / "v2").digits("accuracy") == 2


def test_evalai_ranks_its_default_order_by_as_the_split_says(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "evalai")  # splits descending; Accuracy ranks
    config = source / "challenge_config.yaml"
    text = config.read_bytes().replace(
        b'"metadata": {', b'"metadata": {"Accuracy": {"sort_ascending": True}, '
    )
    config.write_bytes(text)
    result = import_challenge(source, tmp_path / "challenge", "host")
    scorer = load_challenge(tmp_path / "challenge").tasks[0].scorer
    assert scorer.metrics["Accuracy"].direction == "higher"  # type: ignore[union-attr]
    assert scorer.metrics["Errors"].direction == "lower"  # type: ignore[union-attr]
    assert any("schema.metadata.Accuracy.sort_ascending True" in text for text in result.warnings)


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        (None, "the program has no `metadata` file (at its top, or one folder down): add one"),
        ("description: scores\n", "the program's metadata.yaml has no `command`: add one"),
        ("command: [python\n", "the program's metadata.yaml: not a YAML document"),
    ],
)
def test_a_program_without_a_usable_metadata_is_refused_with_the_fix(
    tmp_path: Path, metadata: str | None, said: str
) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    target = bundle / "scoring_program/metadata.yaml"
    target.unlink()
    if metadata is not None:
        target.write_text(metadata)
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == "tasks[0].scoring_program"
    assert said in str(caught.value)
    assert "command: python $program/score.py $input $output" in str(caught.value) or metadata


PARENT_PHASE = """\
phases:
  0:
    phasenumber: 0
    label: "All tracks"
    start_date: 2019-12-01
    is_parallel_parent: True
"""


def test_a_codalab_parallel_parent_phase_is_left_out_and_hidden_results_warned(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "v1"
    shutil.unpack_archive(make_v1_zip(tmp_path), folder)
    yaml_file = folder / "competition.yaml"
    text = yaml_file.read_text().replace("phases:\n", PARENT_PHASE, 1)
    text = text.replace('    label: "Final"\n', '    label: "Final"\n    parent_phasenumber: 0\n')
    text = text.replace(
        "    max_submissions: 3\n",
        "    max_submissions: 3\n    leaderboard_management_mode: hide_results\n",
    )
    yaml_file.write_text(text)
    result = import_challenge(folder, tmp_path / "challenge", "host")
    assert [phase["title"] for phase in result.phases] == ["Development", "Final"]
    assert any(text.startswith("phases.0.is_parallel_parent") for text in result.warnings)
    assert any(
        text.startswith("phases.2.leaderboard_management_mode hide_results")
        for text in result.warnings
    )


def test_codalab_phases_starting_together_run_side_by_side(tmp_path: Path) -> None:
    folder = tmp_path / "v1"
    shutil.unpack_archive(make_v1_zip(tmp_path), folder)
    yaml_file = folder / "competition.yaml"
    text = yaml_file.read_text().replace("start_date: 2029-01-01", "start_date: 2020-01-01")
    yaml_file.write_text(text)
    import_challenge(folder, tmp_path / "challenge", "host")
    development, final = load_challenge(tmp_path / "challenge").phases
    assert development.opens == final.opens
    assert development.closes == final.closes and final.closes is not None
    assert final.closes.year == 2030  # the competition's end_date


def test_a_phase_ending_before_it_starts_is_refused_at_its_end_key(tmp_path: Path) -> None:
    text = V2_YAML.replace("end: 2021-06-30", "end: 2019-06-30")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == "phases[0].end"
    assert "before it starts" in str(caught.value)
    assert not (tmp_path / "challenge").exists()


def test_an_import_that_would_not_load_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "evalai")
    config = source / "challenge_config.yaml"
    config.write_bytes(
        config.read_bytes().replace(b"end_date: 2099-04-25", b"end_date: 2018-04-25", 1)
    )
    with pytest.raises(ConfigError) as caught:
        import_challenge(source, tmp_path / "challenge", "host")
    assert "does not load" in str(caught.value) and "closes before it opens" in str(caught.value)
    assert not (tmp_path / "challenge").exists()


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ("pages/terms.md", "is a file, not a folder or a zip: the platform unzips every dataset"),
        ("c4819120-18a2-4466-9c82-f51cbbe8b667", "is the key of a dataset stored on the platform"),
        ("no_such_folder", "is neither a folder nor a zip of the bundle"),
    ],
)
def test_a_dataset_the_bundle_lacks_is_refused_saying_what_to_do(
    tmp_path: Path, reference: str, said: str
) -> None:
    text = V2_YAML.replace("reference_data: reference_alpha", f"reference_data: {reference}")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=text)
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == "tasks[0].reference_data"
    assert said in str(caught.value)


def test_an_imported_program_may_write_true_and_false_as_codabench_stores_them(
    tmp_path: Path,
) -> None:
    import_challenge(make_v2_bundle(tmp_path / "bundle"), tmp_path / "challenge", "host")
    scorer = load_challenge(tmp_path / "challenge").tasks[0].scorer
    assert scorer.booleans == "numbers"  # type: ignore[union-attr]
    source = make_evalai_challenge(tmp_path / "evalai")
    import_challenge(source, tmp_path / "evalai-challenge", "host")  # EvalAI sorts floats only
    assert load_challenge(tmp_path / "evalai-challenge").tasks[0].scorer.booleans == "refused"  # type: ignore[union-attr]


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_column_key_that_is_no_metric_name_scores_under_its_key(shared_dir: Path) -> None:
    """Codabench stores any column key (``error-rate``, ``mean acc``) the program writes."""
    score_py = SCORE_JSON.replace('"error": 1 - accuracy', '"error-rate": 1 - accuracy')
    score_py = score_py.replace('"extra_label": 7', '"error_rate": 7, "mean acc": accuracy')
    text = V2_YAML.replace("        key: error\n", "        key: error-rate\n")
    text = text.replace("        key: mean\n", "        key: mean acc\n").replace(
        "        computation: avg\n        computation_indexes: [0, 1]\n", ""
    )
    text += (
        "      - {title: Mean, key: mean, computation: avg,\n"
        "         computation_keys: [accuracy, error-rate]}\n"
    )
    bundle = make_v2_bundle(shared_dir / "bundle", score_py=score_py, yaml_text=text)
    challenge = shared_dir / "challenge"
    result = import_challenge(bundle, challenge, "host")
    assert any("'error-rate' is no metric name" in warning for warning in result.warnings)
    scorer = load_challenge(challenge).tasks[0].scorer
    assert scorer.score_keys == {"error_rate": "error-rate", "mean_acc": "mean acc"}  # type: ignore[union-attr]
    assert _yaml(challenge)["precision"] == {
        "accuracy": 4,
        "error_rate": 2,
        "mean_acc": 2,
        "mean": 2,
    }
    settings = Settings(work_root=shared_dir / "runs")
    upload = submission_zip(shared_dir)
    report = run_entry(RunRequest(upload, str(challenge), phase="0"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = score_task_directly(challenge, "alpha-task", PREDICTIONS, shared_dir / "direct")
    assert report.scores["alpha-task"] == {
        "accuracy": expected["accuracy"],
        "error_rate": expected["error-rate"],
        "mean_acc": expected["mean acc"],
        "mean": (expected["accuracy"] + expected["error-rate"]) / 2,
    }


def test_a_terms_page_listed_again_among_the_pages_is_shown_without_a_warning(
    tmp_path: Path,
) -> None:
    text = V2_YAML.replace(
        "    file: pages/overview.md\n",
        "    file: pages/overview.md\n  - title: Terms\n    file: pages/terms.md\n",
    )
    result = import_challenge(
        make_v2_bundle(tmp_path / "bundle", yaml_text=text), tmp_path / "c", "host"
    )
    assert _yaml(tmp_path / "c")["pages"] == {
        "terms": "pages/terms.md",
        "overview": "pages/overview.md",
    }
    assert not [warning for warning in result.warnings if warning.startswith("page ")]
