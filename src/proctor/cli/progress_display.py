"""A live rich display of an evaluation's stages and cases, drawn on stderr."""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from proctor.cli.untrusted import visible
from proctor.services.local.reports import StageKey, StageReport
from proctor.types import StageStatus

_MARKS = {
    StageStatus.PASSED: "[green]✓",
    StageStatus.FAILED: "[red]✗",
    StageStatus.SKIPPED: "[dim]·",
}


_WORDS = {
    StageStatus.PASSED: "passed",
    StageStatus.FAILED: "FAILED",
    StageStatus.SKIPPED: "skipped",
}


NOTE_WIDTH = 72
"""A step's line on a bar is cut at this many characters (piped, it is printed whole)."""


def _one_line(text: str) -> str:
    """``text``'s first line, made visible (entry text), tabs as spaces."""
    first = text.splitlines()[0] if text else ""
    return visible(first.replace("\t", " "))


class RichProgress:
    """Shows one bar per stage; thread-safe (cases finish on worker threads).

    A ``services.reports.ProgressListener``. On a console that is not a terminal (output piped
    to a file or a program) there are no bars: each finished stage prints one whole line,
    ``exam: passed (8 cases) first line of its message``, never cut to a width, and each step
    of a stage's own work (prep's build of a ``Dockerfile``) one line as it starts,
    ``prep: STEP 3/5: RUN pip install -r requirements.txt``. On a terminal the stage's bar
    counts the steps and shows the running one, then goes back to ``running``.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._live = console.is_terminal
        self._progress = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RichProgress:
        if self._live:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._live:
            self._progress.stop()

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        """Add a bar for the stage."""
        with self._lock:
            self._tasks[key.label] = self._progress.add_task(
                key.label, total=total_cases or 1, note="running"
            )

    def case_finished(self, key: StageKey, ok: bool) -> None:
        """Advance the stage's bar."""
        with self._lock:
            self._progress.advance(self._tasks[key.label])

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """Show the stage's step: its bar counts the steps (piped: print the step's line)."""
        line = _one_line(text)
        if not self._live:
            with self._lock:
                self._console.out(f"{key.label}: {line}", highlight=False)
            return
        with self._lock:
            task = self._task(key.label)
            shown = escape(line if len(line) <= NOTE_WIDTH else line[: NOTE_WIDTH - 1] + "…")
            if done < total:
                self._progress.update(task, total=total, completed=done, note=shown)
            else:  # the steps are over; the rest of the stage runs as it would without them
                self._progress.update(task, total=1, completed=0, note=f"running ({shown})")

    def _task(self, label: str) -> TaskID:
        """The bar of stage ``label``, added if its start was not heard (hold the lock)."""
        task = self._tasks.get(label)
        if task is None:
            task = self._progress.add_task(label, total=1, note="")
            self._tasks[label] = task
        return task

    def stage_finished(self, report: StageReport) -> None:
        """Complete the stage's bar with its mark (piped: print the stage's line)."""
        if not self._live:
            self._print_line(report)
            return
        with self._lock:
            task = self._task(report.label)
            total = self._progress.tasks[task].total or 1
            first_line = report.message.splitlines()[0] if report.message else ""
            shown = escape(visible(first_line))  # entry text: never markup, never escapes
            self._progress.update(task, completed=total, note=f"{_MARKS[report.status]}[/] {shown}")

    def _print_line(self, report: StageReport) -> None:
        first_line = report.message.splitlines()[0] if report.message else ""
        total = report.cases.total
        cases = f" ({total} case{'' if total == 1 else 's'})" if total else ""
        line = f"{report.label}: {_WORDS[report.status]}{cases} {visible(first_line)}".rstrip()
        with self._lock:
            self._console.out(line, highlight=False)  # out(): never wrapped or cut
