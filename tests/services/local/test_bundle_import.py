"""`proctor challenge import` of Codabench (v2) and CodaLab (v1) bundles (issue 18).

The mapping is checked on the written challenge folder; the sandboxed runs check that each
imported bundle scores a result submission exactly as its own scoring program does when run
directly in Codabench's layout, and that a failing program is the organizer's failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import (
    PREDICTIONS,
    SCORE_JSON,
    TRUTH,
    V2_YAML,
    code_zip,
    make_code_bundle,
    make_v1_zip,
    make_v2_bundle,
    run_directly,
    score_task_directly,
    submission_zip,
)

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.services.local.authoring import check_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.bundle_import.pages import copy_pages
from proctor.services.local.bundle_import.programs import substitute
from proctor.services.local.bundle_import.reading import parse_date
from proctor.services.local.catalog import write_kit
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.platform.scorer_pages import team_may_read
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

PROCTOR = Path(sys.executable).parent / "proctor"


def _yaml(folder: Path) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load((folder / "challenge.yaml").read_text())
    return data


def test_a_codabench_bundle_maps_phases_tasks_and_columns(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    assert result.format == "codabench-v2"
    assert check_challenge(tmp_path / "challenge") == []
    challenge = load_challenge(tmp_path / "challenge")
    dev, final = challenge.phases
    assert (dev.name, dev.title, dev.tasks) == (
        "development-phase",
        "Development Phase",
        ("alpha-task", "beta-task"),
    )
    assert dev.opens is not None and dev.opens.isoformat() == "2020-01-01T00:00:00+00:00"
    assert dev.closes is not None and dev.closes.isoformat() == "2021-06-30T00:00:00+00:00"
    assert dev.quota is not None and (dev.quota.per_day, dev.quota.total) == (5, 100)
    assert challenge.phase("Final Phase") is final and challenge.phase("1") is final
    assert challenge.leaderboard is not None and challenge.leaderboard.metric == "accuracy"
    alpha = _yaml(tmp_path / "challenge")["tasks"][0]["scorer"]  # type: ignore[index]
    assert alpha["metrics"]["accuracy"] == {"direction": "higher", "description": "Accuracy"}
    precision = {"accuracy": 4, "error": 2, "mean": 2}  # mean gives none: Codabench's 2
    assert _yaml(tmp_path / "challenge")["precision"] == precision
    assert challenge.digits("accuracy") == 4
    assert alpha["metrics"]["error"]["direction"] == "lower"
    assert alpha["computed"] == {"mean": {"operation": "avg", "of": ["accuracy", "error"]}}
    assert alpha["limits"]["wall_s"] == 60
    beta = _yaml(tmp_path / "challenge")["tasks"][1]["scorer"]  # type: ignore[index]
    assert beta["limits"]["wall_s"] == 120  # the longest phase running it
    board = _yaml(tmp_path / "challenge")["phases"][0]["leaderboards"][0]  # type: ignore[index]
    assert board["metrics"] == ["accuracy", "error"]  # the hidden column is not shown
    assert challenge.pages == {"overview": "pages/overview.md", "terms": "pages/terms.md"}
    assert (tmp_path / "challenge/pages/terms.md").read_text().startswith("# Terms")
    assert (tmp_path / "challenge/baseline/predictions.txt").read_text() == PREDICTIONS
    assert any("submission_rule 'Force_Last'" in warning for warning in result.warnings)


def test_a_codalab_zip_with_crlf_and_a_duplicate_key_maps_each_phase_to_a_task(
    tmp_path: Path,
) -> None:
    result = import_challenge(make_v1_zip(tmp_path), tmp_path / "challenge", "host")
    assert result.format == "codalab-v1"
    assert check_challenge(tmp_path / "challenge") == []
    challenge = load_challenge(tmp_path / "challenge")
    assert challenge.title == "Old Toy Labels"  # the last of the duplicate keys
    dev, final = challenge.phases
    assert (dev.tasks, final.tasks) == (("development",), ("final",))
    assert dev.closes == final.opens  # a v1 phase ends where the next starts
    assert final.closes is not None and final.closes.year == 2030
    assert challenge.leaderboard is not None and challenge.leaderboard.metric == "accuracy"
    command = _yaml(tmp_path / "challenge")["tasks"][0]["scorer"]["command"]  # type: ignore[index]
    assert command == ["python3", "/app/program/evaluate.py", "/app/input", "/app/output"]
    assert challenge.pages == {
        "overview": "pages/overview.html",
        "terms": "pages/terms_and_conditions.html",
    }


def test_the_cli_prints_the_import_as_json(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    done = subprocess.run(
        [str(PROCTOR), "challenge", "import", str(bundle), str(tmp_path / "c"), "--json",
         "--environment", "host"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {
        "challenge", "path", "format", "phases", "tasks", "leaderboards", "warnings"
    }  # fmt: skip
    assert [phase["title"] for phase in answer["phases"]] == ["Development Phase", "Final Phase"]


@pytest.mark.parametrize(
    ("old", "new", "location"),
    [
        (
            "    reference_data: reference_alpha\n",
            "    reference_data: reference_alpha\n    ingestion_program: pages\n",
            "tasks[0].ingestion_program",
        ),
        ("        sorting: asc\n", "        sorting: up\n", "leaderboards[0].columns[1].sorting"),
        ("computation: avg", "computation: median", "leaderboards[0].columns[2].computation"),
        ("reference_data: reference_alpha", "reference_data: 7a1b-uuid", "tasks[0].reference_data"),
    ],
)
def test_what_would_change_results_is_refused_naming_the_key(
    tmp_path: Path, old: str, new: str, location: str
) -> None:
    assert old in V2_YAML
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=V2_YAML.replace(old, new))
    with pytest.raises(ConfigError) as caught:
        import_challenge(bundle, tmp_path / "challenge", "host")
    assert caught.value.location == location
    assert not (tmp_path / "challenge").exists()


def test_commands_and_dates_are_read_as_the_platform_reads_them() -> None:
    assert substitute("python $program/s.py $input $output $shared", scoring=True) == (
        "python /app/program/s.py /app/input /app/output /app/shared"
    )
    assert substitute("python $ingestion_program/i.py $input $predictions", scoring=False) == (
        "python /app/program/i.py /app/input_data /app/output"
    )
    assert substitute("$submission_program $hidden $predictions", scoring=True) == (
        "/app/ingested_program /app/input/ref /app/input/res"
    )
    for text in ("2026-01-01", "1-1-2026", "2026-01-01 00:00:00", "2026-01-01T00:00:00Z"):
        found = parse_date(text, "start")
        assert found is not None and found.isoformat() == "2026-01-01T00:00:00+00:00"


# --- sandboxed runs -------------------------------------------------------------------------


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


@pytest.mark.sandbox
@pytest.mark.slow
def test_each_task_scores_what_its_program_computes_run_directly(
    shared_dir: Path, settings: Settings
) -> None:
    bundle = make_v2_bundle(shared_dir / "bundle")
    challenge = shared_dir / "challenge"
    import_challenge(bundle, challenge, "host")
    upload = submission_zip(shared_dir)
    report = run_entry(RunRequest(upload, str(challenge), phase="0", keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    for task in TRUTH:
        expected = score_task_directly(
            challenge, f"{task}-task", PREDICTIONS, shared_dir / f"direct-{task}"
        )
        scores = report.scores[f"{task}-task"]
        assert scores["accuracy"] == expected["accuracy"]
        assert scores["error"] == expected["error"]
        assert scores["mean"] == (expected["accuracy"] + expected["error"]) / 2
        assert "extra_label" not in scores  # a key beyond the columns: kept out, no failure
    assert report.scores["alpha-task"] != report.scores["beta-task"]  # each its own references
    assert report.run_dir is not None
    detailed = report.run_dir / "detailed_results-alpha-task.html"
    assert detailed.read_text() == "<p>5 right</p>"  # kept in the run folder


@pytest.mark.sandbox
def test_a_page_of_another_name_is_kept_as_the_detailed_results(
    shared_dir: Path, settings: Settings
) -> None:
    """A CodaLab v1.5 program names its page as it likes: Codabench shows its first HTML file."""
    own_name = SCORE_JSON.replace('"detailed_results.html"', '"scores.html"')
    bundle = make_v2_bundle(shared_dir / "bundle", score_py=own_name)
    challenge = shared_dir / "challenge"
    import_challenge(bundle, challenge, "host")
    report = run_entry(
        RunRequest(submission_zip(shared_dir), str(challenge), phase="0", keep=True), settings
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.run_dir is not None
    detailed = report.run_dir / "detailed_results-alpha-task.html"
    assert detailed.read_text() == "<p>5 right</p>"
    spec = yaml.safe_load((challenge / "challenge.yaml").read_text())
    for task in spec["tasks"]:  # a challenge not written for Codabench: the named page only
        task["scorer"]["detailed_page"] = "detailed_results"
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    again = run_entry(
        RunRequest(submission_zip(shared_dir / "again"), str(challenge), phase="0", keep=True),
        settings,
    )
    assert again.run_dir is not None and again.status is RunStatus.SCORED
    assert not (again.run_dir / "detailed_results-alpha-task.html").exists()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_codalab_scores_txt_scores_as_run_directly(shared_dir: Path, settings: Settings) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_v1_zip(shared_dir), challenge, "host")
    upload = submission_zip(shared_dir, "a b a b b b\n")
    report = run_entry(RunRequest(upload, str(challenge), phase="Development"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = run_directly(
        challenge / "programs/development",
        challenge / "data/development/reference",
        "a b a b b b\n",
        shared_dir / "direct",
        ["python3", "/app/program/evaluate.py", "/app/input", "/app/output"],
    )
    assert report.scores["development"] == expected


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ("import sys\nprint('SECRET-LOG')\nsys.exit('broken program')\n", "exited with status 1"),
        ("print('SECRET-LOG')\n", "wrote no scores.json or scores.txt"),
        ("import time\nprint('SECRET-LOG', flush=True)\ntime.sleep(30)\n", "timed out"),
    ],
)
def test_a_failing_program_is_the_organizers_failure_with_its_log(
    shared_dir: Path, settings: Settings, program: str, reason: str
) -> None:
    text = V2_YAML.replace("execution_time_limit: 60", "execution_time_limit: 3").replace(
        "execution_time_limit: 120", "execution_time_limit: 3"
    )
    bundle = make_v2_bundle(shared_dir / "bundle", score_py=program, yaml_text=text)
    challenge = shared_dir / "challenge"
    import_challenge(bundle, challenge, "host")
    upload = submission_zip(shared_dir)
    report = run_entry(RunRequest(upload, str(challenge), phase="0", keep=True), settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.SCORER
    assert "SECRET-LOG" not in json.dumps(report.to_json())
    assert report.run_dir is not None
    logs = "".join(path.read_text() for path in report.run_dir.glob("*.txt")) + "".join(
        path.read_text() for path in report.run_dir.glob("scoring-*.log")
    )
    assert reason in logs and "SECRET-LOG" in logs


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_ingestion_program_runs_the_participants_model(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_code_bundle(shared_dir / "bundle"), challenge, "host")
    task = _yaml(challenge)["tasks"][0]  # type: ignore[index]
    assert task["hidden_inputs"] == "data/alpha-task/input_data"  # the code's input: not in the kit
    report = run_entry(RunRequest(code_zip(shared_dir), str(challenge), keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    predictions = "a\nb\na\nb\na\nb\n"  # what model.py predicts on 0..5
    expected = score_task_directly(challenge, "alpha-task", predictions, shared_dir / "direct")
    assert report.scores["alpha-task"] == {
        "accuracy": expected["accuracy"],
        "error": expected["error"],
    }


@pytest.mark.sandbox
@pytest.mark.slow
def test_code_that_fails_under_ingestion_is_the_entrys_failure(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_code_bundle(shared_dir / "bundle"), challenge, "host")
    broken = code_zip(shared_dir, "def predict(x):\n    raise RuntimeError('MODEL-SECRET')\n")
    report = run_entry(RunRequest(broken, str(challenge)), settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    shown = json.dumps(report.to_json())
    assert "failed under the ingestion program" in shown and "Traceback" not in shown


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_result_zip_to_an_ingestion_task_is_scored_as_codabench_does(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_code_bundle(shared_dir / "bundle"), challenge, "host")
    report = run_entry(RunRequest(submission_zip(shared_dir), str(challenge), keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = score_task_directly(challenge, "alpha-task", PREDICTIONS, shared_dir / "direct")
    assert report.scores["alpha-task"]["accuracy"] == expected["accuracy"]
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-alpha-task.log").read_text()
    assert "the exam's run failed (exited with status 1); what it wrote was scored anyway" in log


def test_the_kit_holds_the_sample_and_public_data_never_the_code_inputs(tmp_path: Path) -> None:
    results = tmp_path / "results"
    import_challenge(make_v2_bundle(tmp_path / "bundle"), results, "host")
    kit = write_kit(str(results), tmp_path / "kit")
    assert (tmp_path / "kit/entry/predictions.txt").read_text() == PREDICTIONS
    assert kit
    code = tmp_path / "code"
    import_challenge(make_code_bundle(tmp_path / "code-bundle"), code, "host")
    write_kit(str(code), tmp_path / "code-kit")
    assert not list((tmp_path / "code-kit").rglob("x.txt"))  # the ingestion's input data


def test_bundle_pages_map_to_the_pages_proctor_shows_by_their_titles(tmp_path: Path) -> None:
    bundle, dest = tmp_path / "bundle", tmp_path / "dest"
    bundle.mkdir()
    for name in ("welcome.md", "get_data.html", "rules.md", "faq.md", "logo.png"):
        (bundle / name).write_text("x")
    warnings: list[str] = []
    pages = [
        ("Welcome aboard", "welcome.md"),
        ("Get the data", "get_data.html"),
        ("Rules", "rules.md"),
        ("FAQ", "faq.md"),
        ("Logo", "logo.png"),
    ]
    found = copy_pages(bundle, pages, dest, warnings)
    assert found == {
        "overview": "pages/welcome.md",
        "data": "pages/get_data.html",
        "terms": "pages/rules.md",
    }
    assert (dest / "pages/faq.md").is_file()  # copied, not shown
    assert any("'FAQ'" in warning and "not shown" in warning for warning in warnings)
    assert any("'Logo'" in warning for warning in warnings)


@pytest.mark.parametrize("shown", [True, False])
def test_enable_detailed_results_shows_the_page_to_teams_with_their_scores(
    tmp_path: Path, shown: bool
) -> None:
    """Codabench shows the detailed page to participants where the bundle enables it."""
    yaml_text = V2_YAML.replace("version: 2\n", f"version: 2\nenable_detailed_results: {shown}\n")
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=yaml_text)
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    challenge = load_challenge(tmp_path / "challenge")
    assert challenge.disclosure.per_record == "none"  # per-case values stay hidden
    assert challenge.disclosure.detailed_results == ("scores" if shown else "per_record")
    assert all(team_may_read(challenge, phase.name) is shown for phase in challenge.phases)
    warned = [w for w in result.warnings if w.startswith("enable_detailed_results")]
    assert bool(warned) is shown
    if shown:
        assert "may carry whatever its program writes" in warned[0]


def test_a_codalab_bundle_with_detailed_results_shows_them_too(tmp_path: Path) -> None:
    archive = make_v1_zip(tmp_path)
    with zipfile.ZipFile(archive) as source:
        files = {name: source.read(name) for name in source.namelist()}
    files["competition.yaml"] = b"enable_detailed_results: True\r\n" + files["competition.yaml"]
    with zipfile.ZipFile(archive, "w") as rewritten:
        for name, data in files.items():
            rewritten.writestr(name, data)
    result = import_challenge(archive, tmp_path / "challenge", "host")
    challenge = load_challenge(tmp_path / "challenge")
    assert team_may_read(challenge, challenge.phases[0].name)
    assert any(w.startswith("enable_detailed_results") for w in result.warnings)
