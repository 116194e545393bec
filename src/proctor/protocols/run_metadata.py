"""The ``metadata`` file Codabench's compute worker adds to what a prediction run wrote.

After the prediction step (the ingestion program running the participant's code, or the
upload's own program) the worker writes ``metadata`` into the run's output, which the scoring
program then finds in ``/app/input/res``: YAML with the run's exit codes and elapsed seconds.
CodaLab's starting-kit scoring programs read ``elapsedTime`` from it for a ``Duration``
column (``Duration: 0`` when the file is missing), so a bundle's leaderboard needs it to rank
as it did there. A run that writes ``metadata`` itself fails its case (Codabench fails the
submission); what it wrote is scored with the platform's file instead, as Proctor scores a
failed exam case's output.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from proctor import trees
from proctor.sandbox.base import Outcome

METADATA = "metadata"
WRITTEN_BY_RUN = (
    "the output already holds a file named 'metadata': Proctor writes that file (the run's "
    "exit codes and elapsed time, as Codabench's worker does); do not write it yourself"
)


def exit_code(outcome: Outcome) -> int | None:
    """The run's exit code as a container engine reports it (128 + signal when killed)."""
    if outcome.signal is not None:
        return 128 + outcome.signal
    return outcome.exit_status


def remove_run_metadata(output: Path) -> str | None:
    """Remove a ``metadata`` the run wrote into its ``output``; None, or the problem it is.

    Called once no process of the run is left, before ``output`` is copied, so that no copy
    (not even one that stops part way) carries it.
    """
    target = output / METADATA
    if not (target.exists() or target.is_symlink()):
        return None
    trees.remove_tree(target)
    return WRITTEN_BY_RUN


def write_run_metadata(
    store: Path, *, program: Outcome | None = None, ingestion: Outcome | None = None
) -> None:
    """Write ``store/metadata`` for a run of the upload's ``program`` or of the ``ingestion``."""
    elapsed = program or ingestion
    status = {
        "exitCode": exit_code(program) if program is not None else None,
        "elapsedTime": elapsed.wall_s if elapsed is not None else None,
        "ingestionExitCode": exit_code(ingestion) if ingestion is not None else None,
        "ingestionElapsedTime": ingestion.wall_s if ingestion is not None else None,
    }
    (store / METADATA).write_text(yaml.safe_dump(status, default_flow_style=False))
