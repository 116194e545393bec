"""A live display of an environment build, drawn on stderr."""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

STEPS = ("debian", "wheels", "files", "pack", "digest", "commit")


class RichBuild:
    """Shows one line per environment build, with its current step and elapsed time."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TextColumn("{task.fields[step]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RichBuild:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def build_started(self, name: str) -> None:
        """Start a line for the build (the display appears only when something is built)."""
        with self._lock:
            self._progress.start()
            self._tasks[name] = self._progress.add_task(
                f"building environment {name}", total=len(STEPS), step="starting"
            )

    def build_step(self, name: str, step: str) -> None:
        """Show the step the build entered."""
        with self._lock:
            task = self._tasks[name]
            done = STEPS.index(step) if step in STEPS else 0
            self._progress.update(task, completed=done, step=f"{step} ({done + 1}/{len(STEPS)})")

    def build_finished(self, name: str, seconds: float) -> None:
        """Mark the build done."""
        with self._lock:
            task = self._tasks[name]
            self._progress.update(task, completed=len(STEPS), step=f"built in {seconds:.0f} s")
