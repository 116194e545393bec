"""Codabench's compute worker layout: where an ingestion program finds things.

The ``ingestion`` protocol (``protocols.ingestion``, its block in
``protocols.codabench_settings``) and the scorer's concurrent ingestion
(``scoring.concurrent_ingestion``) both run ingestion programs with it (:data:`LAYOUT`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IngestionLayout:
    """Where an ingestion program finds things, as Codabench's compute worker mounts them."""

    program: str = "/app/program"
    """The ingestion program's folder, the working folder: in the exam a writable copy made
    for the run; beside scoring, read-only unless the scorer has ``writable_inputs``."""
    input_data: str = "/app/input_data"
    """The task's input data (read-only): hidden inputs in the exam, public ones in the quiz."""
    code: str = "/app/ingested_program"
    """The participant's upload (writable, in the entry's capped home)."""
    output: str = "/app/output"
    """Writable, capped: what is there afterwards is the task's output (``/app/input/res``)."""
    shared: str = "/app/shared"
    """Writable, capped, empty: Codabench's folder shared with a scoring program."""
    predictions: str = "/app/input/res"
    """The upload again, where the scoring program sees it (ingestion during scoring)."""


LAYOUT = IngestionLayout()
