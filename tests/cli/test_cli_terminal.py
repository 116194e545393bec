"""What the terminal shows: ``--version``, 80-column tables, piped progress, the data folder.

Each command runs through Typer's ``CliRunner`` on the whole app, as ``proctor`` does.
"""

from __future__ import annotations

import io
import itertools
import os
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from proctor import __version__
from proctor.cli.catalog_cmd import NEXT_STEPS, print_summary, summary_line, typed_proctor
from proctor.cli.main import build_app
from proctor.cli.progress_display import RichProgress
from proctor.cli.run_cmd import print_report, print_scores
from proctor.errors import AuthenticationError
from proctor.pipeline.progress import StageKey
from proctor.pipeline.report import CaseCounts, StageReport, TaskReport, combine
from proctor.services.local.catalog import list_challenges
from proctor.services.local.reports import Standing
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.resources import open_platform
from proctor.settings import ServiceSettings
from proctor.types import RunStatus, Stage, StageStatus


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(build_app(), list(args), env=env, terminal_width=80)
    return result.exit_code, result.stdout, result.stderr


def test_version_prints_the_package_version() -> None:
    status, out, _ = _run("--version")
    assert status == 0
    assert out.strip() == f"proctor {__version__}"


def test_challenges_at_80_columns_shows_every_name_to_type_whole() -> None:
    status, out, _ = _run("challenges", env={"COLUMNS": "80"})
    assert status == 0
    assert "…" not in out.replace("classificati", "")  # only a title may fold
    words = set(out.replace("│", " ").split())
    for item in list_challenges():
        assert item.name in words
        assert set(item.tasks) <= words, item.name
        assert set(item.phases) <= words, item.name
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("command", [("user", "add", "olga"), ("token", "new", "olga")])
def test_user_add_and_token_new_refuse_to_create_a_data_folder_nobody_named(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("PROCTOR_DATA", "PROCTOR_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    status, _, err = _run(*command)
    assert status == 2
    assert not (tmp_path / "proctor-data").exists()
    said = " ".join(err.split())
    assert str(tmp_path / "proctor-data") in said
    assert "--data" in said and "PROCTOR_DATA" in said


def test_user_add_names_the_data_folder_it_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROCTOR_DATABASE_URL", raising=False)
    data = tmp_path / "chosen"
    status, out, err = _run("user", "add", "olga", "--data", str(data), "--json")
    assert status == 0, err
    assert out.lstrip().startswith("{")  # stdout stays one JSON object
    assert str(data.resolve()) in " ".join(err.split())
    status, _, err = _run("token", "new", "olga", env={"PROCTOR_DATA": str(data)})
    assert status == 0, err
    assert str(data.resolve()) in " ".join(err.split())
    assert os.path.exists(data / "proctor.sqlite3")


def test_piped_progress_prints_whole_stage_lines_without_bars() -> None:
    shown = io.StringIO()
    message = "x" * 150 + " the end\nsecond line"
    with RichProgress(Console(file=shown, width=40, force_terminal=False)) as display:
        display.stage_started(StageKey("arousal", Stage.EXAM), 3)
        for _ in range(3):
            display.case_finished(StageKey("arousal", Stage.EXAM), ok=True)
        display.stage_finished(
            StageReport(Stage.EXAM, StageStatus.PASSED, message, cases=CaseCounts(3, 3, 0, 0))
        )
        display.stage_finished(StageReport(Stage.SCORE, StageStatus.FAILED, "no scores"))
    lines = shown.getvalue().splitlines()
    assert lines == [f"exam: passed (3 cases) {'x' * 150} the end", "score: FAILED no scores"]


def test_piped_progress_prints_each_step_of_a_build_on_a_line_without_control_characters() -> None:
    shown = io.StringIO()
    prep = StageKey("arousal", Stage.PREP)
    steps = ["STEP 1/2: FROM python:3.10", "STEP 2/2: RUN echo \x1b[31mred\tx\nnext line"]
    with RichProgress(Console(file=shown, width=40, force_terminal=False)) as display:
        display.stage_started(prep, 0)
        for done, text in enumerate(steps):
            display.stage_step(prep, done, len(steps), text)
        display.stage_step(prep, 2, 2, "image sha256:0123456789ab built")
        display.stage_finished(StageReport(Stage.PREP, StageStatus.PASSED, "setup completed"))
    assert shown.getvalue().splitlines() == [
        "prep: STEP 1/2: FROM python:3.10",
        "prep: STEP 2/2: RUN echo \\x1b[31mred x",
        "prep: image sha256:0123456789ab built",
        "prep: passed setup completed",
    ]


def test_a_terminal_bar_counts_the_steps_then_runs_on_as_prep() -> None:
    display = RichProgress(Console(file=io.StringIO(), force_terminal=True, width=120))
    prep = StageKey("arousal", Stage.PREP)
    display.stage_started(prep, 0)
    display.stage_step(prep, 1, 3, "STEP 2/3: RUN [not markup] " + "y" * 200)
    task = display._progress.tasks[0]
    assert (task.completed, task.total) == (1, 3)
    assert task.fields["note"].startswith("STEP 2/3: RUN \\[not markup]")
    assert task.fields["note"].endswith("…")
    display.stage_step(prep, 3, 3, "image sha256:0123 built")
    task = display._progress.tasks[0]
    assert (task.completed, task.total) == (0, 1)
    assert task.fields["note"] == "running (image sha256:0123 built)"


def test_the_demo_summary_names_each_challenge_its_score_and_what_to_run_next() -> None:
    one = [
        Standing(1, "baseline", {"af": 0.83}, {"af": 1}, 1),
        Standing(2, "c", {"af": 0.1}, {"af": 2}, 2),
    ]
    assert summary_line("physionet2017", "f1", one, []) == (
        "  physionet2017    baseline f1 0.830000 (rank 1 of 2)"
    )
    tasks = [Standing(1, "baseline", {"pu": 0.9, "ssl": 0.8}, {"pu": 1, "ssl": 1}, 1)]
    assert "pu 0.900000, ssl 0.800000" in summary_line("autowsl", "auc", tasks, [])
    assert all(
        step.strip().startswith((".venv/bin/proctor", "docs/", "next", "(")) for step in NEXT_STEPS
    )


def test_the_demo_summary_keeps_whole_aligned_lines_when_piped() -> None:
    """Piped, rich wraps at 80 columns: the summary's lines stay whole and its names aligned."""
    best = [Standing(1, "baseline", {"CTce": 0.732875, "MRT1": 0.338004}, {}, 1)]
    names = ("autowsl", "visceral-anatomy3")
    width = max(map(len, names)) + 1
    lines = [summary_line(name, "organs_dice", best, [], width=width) for name in names]
    piped = io.StringIO()
    print_summary(Console(file=piped, width=80), lines)
    printed = piped.getvalue().splitlines()
    assert all(line in printed for line in lines), printed  # none broken in two
    assert all(step in printed and len(step) <= 80 for step in NEXT_STEPS)
    assert len({line.index(" baseline") for line in lines}) == 1  # the names' column aligned


def test_hints_name_the_proctor_that_runs_when_the_path_finds_another(tmp_path: Path) -> None:
    venv = tmp_path / ".venv" / "bin" / "proctor"
    venv.parent.mkdir(parents=True)
    venv.touch()
    assert typed_proctor(str(venv), None) == os.path.relpath(venv)
    assert typed_proctor(".venv/bin/proctor", "/usr/bin/proctor") == ".venv/bin/proctor"
    assert typed_proctor(str(venv), str(venv)) == "proctor"
    assert typed_proctor("/usr/lib/python3/pytest", None) == "proctor"


def test_scores_print_as_a_metric_by_task_table_with_intervals_and_counts_whole() -> None:
    def task(name: str, auc: float) -> TaskReport:
        scores = {"auc": auc, "auc_ci95_low": auc - 0.05, "auc_ci95_high": auc + 0.05}
        scores["datasets"] = 1.0
        efficiency = {"cpu_s_per_case": 0.5}
        counts = frozenset({"datasets"})
        return TaskReport(
            name, RunStatus.SCORED, (), scores=scores, efficiency=efficiency, count_metrics=counts
        )

    flat = task("final-noisy", 0.839)
    flat.scores.update(auc_ci95_low=0.839, auc_ci95_high=0.839)  # three records, one point
    report = combine("autowsl", "final", [task("final-pu", 0.9), task("final-ssl", 0.8), flat])
    shown = io.StringIO()
    print_scores(report, Console(file=shown, width=120))
    text = shown.getvalue()
    scores, efficiency = text.split("efficiency (exam)")
    assert "final-pu" in scores and "final-ssl" in scores
    assert "0.900000 [0.850000, 0.950000]" in scores
    assert "ci95" not in text  # bounds are not metrics of their own
    assert "[0.839000" not in text  # an interval without width is left out
    datasets = next(line for line in scores.splitlines() if "datasets" in line)
    assert "1.000000" not in datasets and " 1 " in datasets
    assert "cpu_s_per_case" in efficiency and "cpu_s_per_case" not in scores


def test_hidden_exam_figures_read_hidden_never_zero() -> None:
    """An exam whose time the phase withholds says "hidden" in its row and in the usage."""
    exam = StageReport(Stage.EXAM, StageStatus.PASSED, figures_hidden=True)
    quiz = StageReport(Stage.QUIZ, StageStatus.PASSED, wall_s=1.25)
    scored = TaskReport("arousal", RunStatus.SCORED, (quiz, exam), scores={"auprc": 0.5})
    report = combine("toy", "final", [scored])
    shown = io.StringIO()
    print_report(report, Console(file=shown, width=120), brief=True)
    text = shown.getvalue()
    exam_row = next(line for line in text.splitlines() if "exam" in line)
    assert "hidden" in exam_row and "0.00" not in exam_row, text
    assert "1.25" in text  # a figure the phase shows is shown
    assert "usage: hidden" in text and " s wall" not in text, text


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _command_paths(sub, (*path, name))
    return found


def test_every_help_text_wraps_cleanly_at_80_columns() -> None:
    """A line of a description breaks only where the next word would not fit (no ragged wrap)."""
    app = build_app()
    ragged = []
    for path in _command_paths(typer.main.get_group(app)):
        shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
        assert shown.exit_code == 0, shown.output
        lines = shown.output.split("╭")[0].splitlines()
        for line, after in itertools.pairwise(lines):
            words = after.split()
            if not line.strip() or not words or after.startswith("  "):
                continue
            # rich indents by one column and keeps one free: 78 for the text
            if len(line.rstrip()) + len(words[0]) <= 78 and not line.rstrip().endswith(":"):
                ragged.append(f"{' '.join(path)}: {line.strip()!r} / {after.strip()!r}")
    assert not ragged, "\n".join(ragged)


def test_an_unknown_token_says_it_may_come_from_another_data_folder(tmp_path: Path) -> None:
    platform = open_platform(ServiceSettings(data=tmp_path / "served"))
    try:
        with pytest.raises(AuthenticationError) as refused:
            authenticate(platform, "a-token-made-on-another-folder")
    finally:
        platform.close()
    said = str(refused.value)
    assert "not valid on this server" in said and "data folder" in said
    assert str(tmp_path) not in said  # the server's paths stay its own


def test_every_usage_line_names_its_arguments_in_capitals_at_80_columns() -> None:
    """``Usage: proctor env build [OPTIONS] CHALLENGE``: no ``{challenge}``, no lower-case name."""
    app = build_app()
    wrong = []
    for path in _command_paths(typer.main.get_group(app)):
        shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
        assert shown.exit_code == 0, shown.output
        usage = next(line for line in shown.output.splitlines() if "Usage:" in line).strip()
        pieces = usage.removeprefix("Usage: proctor").split()[len(path) :]
        arguments = [piece.strip("[].") for piece in pieces if piece != "[OPTIONS]"]
        if any("{" in piece or not piece[:1].isupper() for piece in arguments):
            wrong.append(usage)
    assert not wrong, "\n".join(wrong)
    shown = CliRunner().invoke(app, ["env", "build", "--help"], env={"COLUMNS": "80"})
    assert "Usage: proctor env build [OPTIONS] CHALLENGE" in shown.output
