"""``proctor challenge new``, ``check`` and ``import``: authoring a challenge folder.

Each command imports its use case when it runs: ``challenge add`` and the other client
commands of the group start without the pipeline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from proctor.cli.untrusted import visible
from proctor.services.local.template_files import TEMPLATES
from proctor.wording import plural

PROTOCOLS = ", ".join(TEMPLATES)


def challenge_new(
    dest: Annotated[Path, typer.Argument(help="A new (or empty) folder for the challenge.")],
    protocol: Annotated[
        str, typer.Option("--protocol", "-p", help=f"The entry protocol: {PROTOCOLS}.")
    ],
    name: Annotated[
        str | None, typer.Option(help="The challenge's name (default: the folder's name).")
    ] = None,
) -> None:
    """Write a small working challenge: data, a scoring program, baseline/, KIT.md.

    Try it at once with `proctor run DEST/baseline --challenge DEST`; then replace the data,
    the scoring program and the baseline with your own (docs/host-your-own-challenge.md).
    """
    from proctor.services.local.authoring import new_challenge

    written = new_challenge(dest, protocol, name)
    typer.echo(f"wrote a {protocol} challenge in {dest} ({len(written)} files and folders)")
    typer.echo(f"try it: proctor run {dest / 'baseline'} --challenge {dest}")


def challenge_check(
    folder: Annotated[
        Path,
        typer.Argument(
            help="The challenge folder (or its challenge.yaml), or a bundled challenge's name."
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"ok": ..., "problems": [...]} on stdout.')
    ] = False,
    no_run: Annotated[
        bool,
        typer.Option(
            "--no-run",
            help="Do not run the samples (baseline/, kit/solutions/) through the pipeline.",
        ),
    ] = False,
) -> None:
    """Check a challenge folder as `challenge add` and `proctor run` do: every problem at once.

    Every Python program and sample is byte-compiled with its environment's Python
    (FILE:LINE: error). Then, unless --no-run, each sample runs once as `proctor run` runs
    it, and a failure names whose program failed: "ready" means the organizer's programs
    ran. Exit status: 0 ready; 2 problems (each with its location and the fix).
    """
    from proctor.services.local.authoring import check_challenge
    from proctor.settings import Settings

    problems = check_challenge(folder, Settings.from_env(), run=not no_run, listener=_CheckEcho())
    if as_json:
        answer = {"ok": not problems, "problems": [p.to_json() for p in problems]}
        typer.echo(json.dumps(answer, indent=2))
    elif problems:
        typer.echo(f"{plural(len(problems), 'problem')} in {folder}:", err=True)
        for problem in problems:
            where = f"{problem.location}: " if problem.location else ""
            typer.echo(f"  - {where}{visible(problem.message)}", err=True)
    else:
        typer.echo(f"{folder}: ready")
    raise typer.Exit(2 if problems else 0)


class _CheckEcho:
    """Says on stderr which Python compiled the programs and which sample runs."""

    def note(self, text: str) -> None:
        """One line of information."""
        typer.echo(f"note: {text}", err=True)

    def sample_started(self, name: str, index: int, total: int) -> None:
        """A sample starts its run."""
        typer.echo(f"running sample {index}/{total}: {name} ...", err=True)

    def build_started(self, name: str) -> None:
        """An environment a sample needs is being built."""
        typer.echo(f"building environment {name} (once; this takes minutes) ...", err=True)

    def build_step(self, name: str, step: str) -> None:
        """A build step: not shown."""

    def build_finished(self, name: str, seconds: float) -> None:
        """A build ended."""
        typer.echo(f"built environment {name} in {seconds:.0f} s", err=True)


def challenge_import(  # noqa: PLR0917 - typer maps parameters to options
    source: Annotated[Path, typer.Argument(help="The bundle: a zip or a folder.")],
    dest: Annotated[Path, typer.Argument(help="A new (or empty) folder for the challenge.")],
    environment: Annotated[
        str | None,
        typer.Option(
            "--environment",
            help="What the programs run in: a folder declaring one (environment.yaml), a "
            "bundled environment's name, or host (default: from a Codabench/CodaLab bundle's "
            "docker_image, or one scaffolded in environment/ for an image Proctor does not "
            "know; codabench for EvalAI).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print {"challenge", "path", "format", "phases", "tasks", "leaderboards", '
            '"warnings"} on stdout.',
        ),
    ] = False,
    max_bytes: Annotated[
        str | None,
        typer.Option(
            "--max-bytes",
            help="What the bundle's zips (the bundle and the zips in it) may unpack to in all, "
            "and one file of them: bytes or 512M, 4G (default: 1G, as an entry archive).",
        ),
    ] = None,
    max_ratio: Annotated[
        float | None,
        typer.Option(
            "--max-ratio",
            help="How many times its packed size a zip or one of its files may expand to "
            "(default: 200, as an entry archive; files under 1 MiB are not held to it).",
        ),
    ] = None,
) -> None:
    """Import a Codabench (v2), CodaLab (v1/v1.5) or EvalAI bundle as a challenge folder.

    The folder takes `challenge check`, `run`, `kit` and `challenge add`; the scoring
    programs run in the sandbox as their platform runs them (docs/import-bundles.md). What
    cannot be mapped is a warning; what would change results is refused, naming the YAML key
    (exit 2).
    """
    from proctor.services.local.bundle_import import import_challenge
    from proctor.services.local.bundle_import.unzip import parse_size

    size = None if max_bytes is None else parse_size(max_bytes)
    result = import_challenge(source, dest, environment, max_bytes=size, max_ratio=max_ratio)
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
        return
    phases = ", ".join(f"{p['name']} ({p['title']})" for p in result.phases)
    typer.echo(f"imported a {result.format} bundle as {result.challenge!r} in {dest}")
    typer.echo(f"  phases: {phases}")
    typer.echo(f"  tasks: {', '.join(task['name'] for task in result.tasks)}")
    for warning in result.warnings:
        typer.echo(f"  note: {warning}")
    typer.echo(f"check it: proctor challenge check {dest}")


def register(challenge: typer.Typer) -> None:
    """Add ``new``, ``check`` and ``import`` to the ``challenge`` commands."""
    challenge.command("new")(challenge_new)
    challenge.command("check")(challenge_check)
    challenge.command("import")(challenge_import)
