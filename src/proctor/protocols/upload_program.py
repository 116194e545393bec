"""An upload that is its own program: the ``command`` of its ``metadata``, as Codabench reads it.

In Codabench's prediction step (and CodaLab's), the compute worker looks at the upload's
``metadata`` (or ``metadata.yaml``): no such file, the upload is a result and is copied to the
output; a file without ``command``, the upload is code left for the ingestion program; a
``command``, the upload is a program and the worker runs it (CodaLab's classic code
submission), beside the task's ingestion program when there is one. Here:

- ``results`` (no code runs) refuses such an upload at prep: it would be scored as a result;
- ``ingestion`` runs it as the exam (and quiz) of a task without an ingestion program that
  takes submission programs (``protocols.codabench_settings``), with the compute worker's layout::

    /app/program      the upload (the entry's writable, capped home), the working folder
    /app/input_data   the split's inputs (read-only)
    /app/output       writable, capped: what it holds afterwards is the task's output
    /app/shared       writable, ``shared_bytes``, empty (CodaLab's ``$shared``)

  and refuses it at prep elsewhere (a task with an ingestion program, which runs the upload
  itself, or a task taking no submission program).

The command's variables are replaced as the compute worker replaces them for a program of
the prediction step, but ``$input``: CodaLab gave the program the input data there (the
classic ``python $program/predict.py $input $output``), where Codabench writes
``/app/input``, which it does not mount in that step; here it is ``/app/input_data``.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from proctor.formats.bounded_yaml import (
    YamlBounds,
    YamlBoundsError,
    YamlDocumentError,
    load_text,
    read_capped,
)
from proctor.protocols.base import DriverContext, run_limits
from proctor.protocols.codabench_settings import IngestionProtocol, ResultsProtocol
from proctor.sandbox.base import Mount, Outcome, RunSpec
from proctor.spec.ingestion import LAYOUT
from proctor.spec.protocols import ProtocolSettings

CODE_MARKERS = ("metadata.yaml", "metadata")
"""An upload holding one of these is code (never copied into ``/app/output``); the worker
reads ``metadata.yaml`` first."""
VARIABLES = {
    "$ingestion_program": LAYOUT.program,
    "$submission_program": LAYOUT.code,
    "$predictions": LAYOUT.output,
    "$program": LAYOUT.program,
    "$hidden": "/app/input/ref",
    "$shared": LAYOUT.shared,
    "$output": LAYOUT.output,
    "$input": LAYOUT.input_data,
    "$tmp": LAYOUT.output,
}
"""The compute worker's variables in a prediction-step program's command (longest first)."""
_PATTERN = re.compile("|".join(re.escape(name) for name in VARIABLES))


METADATA_BOUNDS = YamlBounds(max_bytes=64 * 1024, max_nodes=10_000, max_depth=20)
"""A ``metadata`` file at most: 64 KiB, 10,000 values once its aliases are expanded, 20 levels
deep (Codabench's are a few lines). Over them, it is refused at prep, unparsed."""


def read_metadata(folder: Path) -> tuple[Any, str | None]:
    """(the ``command`` the upload's ``metadata`` gives as written or None, why it is refused).

    The file is read at most once, within :data:`METADATA_BOUNDS`: a larger one is refused
    before a byte of it is parsed, one expanding past them while it is parsed. A file that
    is no YAML names no command (the compute worker runs none it cannot read).
    """
    for name in CODE_MARKERS:
        path = folder / name
        if not path.is_file() or path.is_symlink():
            continue
        size, limit = path.lstat().st_size, METADATA_BOUNDS.max_bytes
        if size > limit:
            return None, _too_large(name, size)
        try:
            data = read_capped(path, limit)
            found: Any = load_text(data.decode("utf-8", "replace"), METADATA_BOUNDS)
        except YamlBoundsError as err:
            return None, f"{name}: {err}"
        except (YamlDocumentError, OSError):
            return None, None
        command = found.get("command") if isinstance(found, dict) else None
        return command or None, None
    return None, None


def _too_large(name: str, size: int) -> str:
    return (
        f"{name}: {size} bytes, over the {METADATA_BOUNDS.max_bytes} a metadata file may take: "
        "keep it under 64 KiB: Codabench metadata files are a few lines (its `command`)"
    )


def metadata_command(folder: Path) -> Any:
    """The ``command`` the upload's ``metadata`` file gives, as written (None: none).

    A file that cannot be read, or is refused (:func:`read_metadata`), names no command.
    """
    return read_metadata(folder)[0]


def is_code(folder: Path) -> bool:
    """True when the upload holds a ``metadata`` file (code: not a result to copy)."""
    return any((folder / name).exists() for name in CODE_MARKERS)


def program_argv(command: Any) -> list[str]:
    """The argv of an upload's ``command``: variables replaced, split without a shell.

    ``python`` runs ``python3``. Raises ``ValueError`` (the reason, for the participant) for a
    command that is not one command line.
    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError("metadata: `command` must be one command line (a string)")
    line = _PATTERN.sub(lambda match: VARIABLES[match.group(0)], command)
    try:
        argv = shlex.split(line)
    except ValueError as err:
        raise ValueError(f"metadata: `command` cannot be split into words ({err})") from None
    if argv[0] == "python":
        argv[0] = "python3"
    return argv


RESULTS_ONLY = (
    "metadata: its `command` asks for your upload to run as a program, but this challenge "
    "takes result submissions: the scoring program would read your upload's files as your "
    "predictions. Run your program yourself on the challenge's input data and upload the "
    "files it writes (at the top of the zip, without the metadata file)"
)
WITH_INGESTION = (
    f"metadata: its `command` would start your upload as a program of its own beside the "
    f"organizer's ingestion program (as Codabench does); here the ingestion program alone "
    f"runs your code, found at {LAYOUT.code}: remove the command from metadata (a metadata "
    "file without `command` keeps your upload from being copied to the output)"
)
NO_PROGRAMS = (
    "metadata: its `command` asks for your upload to run as a program, but this task takes "
    "no submission program (its upload is scored as it is): remove the metadata file and "
    "upload your predictions"
)


def command_problem(settings: ProtocolSettings, task: str, upload: Path) -> str | None:
    """Why ``upload`` cannot be taken as it is by ``task`` under ``settings``, or None."""
    return upload_check(settings, task, upload)[0]


def upload_check(settings: ProtocolSettings, task: str, upload: Path) -> tuple[str | None, Any]:
    """(why ``upload`` cannot be taken by ``task`` under ``settings`` or None, its command).

    A ``metadata`` over its bounds is refused. An upload naming its own ``command`` is
    refused where it would not run as its program: under ``results``, and under
    ``ingestion`` on a task with an ingestion program or one that takes no submission
    program; a command that is not one line is refused too. The file is read once.
    """
    command, problem = read_metadata(upload)
    if problem is not None or command is None:
        return problem, command
    if isinstance(settings, ResultsProtocol):
        return RESULTS_ONLY, command
    if not isinstance(settings, IngestionProtocol):
        return None, command
    if settings.program_of(task) is not None:
        return WITH_INGESTION, command
    if settings.submission_program_of(task) is None:
        return NO_PROGRAMS, command
    try:
        program_argv(command)
    except ValueError as err:
        return str(err), command
    return None, command


def run_upload(
    context: DriverContext, argv: list[str], folders: tuple[Path, ...], wall_s: float
) -> Outcome:
    """Run the upload's program; ``folders``: the home (the upload), inputs, output, shared."""
    home, inputs, output, shared = folders
    own = {"PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"}
    return context.session.run(
        RunSpec(
            argv,
            mounts=[
                Mount(home, LAYOUT.program, writable=True),
                Mount(inputs, LAYOUT.input_data),
                Mount(output, LAYOUT.output, writable=True),
                Mount(shared, LAYOUT.shared, writable=True),
                *context.extra_mounts,
            ],
            limits=run_limits(context.limits, context.parallel_runs, wall_s),
            env={**context.variables, **own},
            cwd=LAYOUT.program,
        )
    )
