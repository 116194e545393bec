"""``proctor env``: lock, build, list, show, prune, export, import and shell of environments."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.build_display import RichBuild
from proctor.services.local.catalog import bundled_challenges, resolve_challenge
from proctor.services.local.environments import (
    declared_digests,
    declared_environment,
    ensure_environment,
    export_environment,
    import_environment,
    list_environments,
    lock_environment,
    open_shell,
    prune_environments,
    store_of,
)
from proctor.settings import Settings

env_app = typer.Typer(
    help="Declared test environments: the root filesystem entries see, built once, published.",
    no_args_is_help=True,
)
Challenge = Annotated[str, typer.Argument(help="A bundled challenge name or a challenge folder.")]
TaskOption = Annotated[
    str | None, typer.Option("--task", help="A task that declares its own environment.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _err() -> Console:
    return Console(stderr=True)


@env_app.command("lock")
def lock(challenge: Challenge, task: TaskOption = None) -> None:
    """Resolve the environment's requirements.in into its wheel lock (every wheel, hashed)."""
    spec = declared_environment(resolve_challenge(challenge), task)
    pins = lock_environment(spec)
    where = spec.python.lock if spec.python is not None else "the lock"
    typer.echo(f"wrote {where} ({len(pins)} wheels)")


@env_app.command("build")
def build(challenge: Challenge, task: TaskOption = None, as_json: JsonOption = False) -> None:
    """Build the environment into the store (a second build is a cache hit)."""
    spec = declared_environment(resolve_challenge(challenge), task)
    with RichBuild(_err()) as display:
        done = ensure_environment(spec, Settings.from_env(), None if as_json else display)
    manifest = done.built.manifest
    if as_json:
        payload = {"name": manifest.name, "digest": manifest.digest,
                   "declaration_digest": manifest.declaration_digest, "built": done.fresh,
                   "seconds": round(done.seconds, 3), "folder": str(done.built.folder)}  # fmt: skip
        typer.echo(json.dumps(payload, indent=2))
        return
    verb = "built" if done.fresh else "already built (cache hit)"
    typer.echo(f"{manifest.name}: {verb} in {done.seconds:.1f} s")
    typer.echo(f"digest {manifest.digest}\nstore  {done.built.folder}")


@env_app.command("list")
def list_(as_json: JsonOption = False) -> None:
    """List the environments in the store (PROCTOR_ENV_ROOT)."""
    found = list_environments(Settings.from_env())
    if as_json:
        rows = [{"name": b.manifest.name, "digest": b.manifest.digest,
                 "declaration_digest": b.manifest.declaration_digest,
                 "image_bytes": b.manifest.image_bytes, "source": b.manifest.source}
                for b in found]  # fmt: skip
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"environments · {store_of(Settings.from_env()).root}")
    for column in ("name", "digest", "declaration", "image MiB", "from"):
        table.add_column(column)
    for built in found:
        m = built.manifest
        table.add_row(m.name, m.digest[:16], m.declaration_digest[:16],
                      f"{m.image_bytes / 2**20:.0f}", m.source)  # fmt: skip
    Console().print(table)


@env_app.command("show")
def show(challenge: Challenge, task: TaskOption = None) -> None:
    """Show the environment's manifest: every Debian package and wheel with its version."""
    spec = declared_environment(resolve_challenge(challenge), task)
    with RichBuild(_err()) as display:
        built = ensure_environment(spec, Settings.from_env(), display).built
    typer.echo(json.dumps(built.manifest.to_json(), indent=2, sort_keys=True))


@env_app.command("prune")
def prune(
    keep: Annotated[
        list[str] | None,
        typer.Option("--keep", help="Also keep the environments of this challenge (repeatable)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only list what would be removed.")
    ] = False,
) -> None:
    """Remove build leftovers, entry images (archived or built) and unkept environments."""
    challenges = [*bundled_challenges(), *(resolve_challenge(ref) for ref in keep or [])]
    settings, digests = Settings.from_env(), declared_digests(challenges)
    removed = prune_environments(settings, digests, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for path in removed:
        typer.echo(f"{verb} {path}")
    typer.echo(f"{len(removed)} {'to remove' if dry_run else 'removed'}")


@env_app.command("export")
def export(
    challenge: Challenge,
    oci: Annotated[Path, typer.Option("--oci", help="The OCI image archive to write (.tar).")],
    task: TaskOption = None,
) -> None:
    """Write the environment as an OCI image archive (podman load / docker load)."""
    spec = declared_environment(resolve_challenge(challenge), task)
    with RichBuild(_err()) as display:
        built, manifest_digest = export_environment(spec, oci, Settings.from_env(), display)
    typer.echo(f"wrote {oci}: {built.manifest.name}, digest {built.manifest.digest}")
    typer.echo(f"load it with: podman load -i {oci}   (or docker load -i {oci})")
    typer.echo(f"image manifest sha256:{manifest_digest}")


@env_app.command("import")
def import_(
    archive: Annotated[
        Path, typer.Argument(help="An OCI image archive from `proctor env export`.")
    ],
    digest: Annotated[
        str | None, typer.Option("--digest", help="The published digest it must have.")
    ] = None,
) -> None:
    """Load a published environment image into the store, checking its digests."""
    built = import_environment(archive, Settings.from_env(), expect=digest)
    typer.echo(f"imported {built.manifest.name}: digest {built.manifest.digest}")


@env_app.command("shell")
def shell(
    challenge: Challenge,
    task: TaskOption = None,
    entry: Annotated[
        Path | None, typer.Option("--entry", help="An entry folder to copy in as the home.")
    ] = None,
) -> None:
    """Open a shell in the sandbox with the environment as root, the entry as home, the data."""
    if not sys.stdin.isatty():
        typer.echo("note: stdin is not a terminal; the shell reads commands from it", err=True)
    with RichBuild(_err()) as display:
        status = open_shell(resolve_challenge(challenge), task, Settings.from_env(), entry, display)
    raise typer.Exit(status)


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor env``."""
    app.add_typer(env_app, name="env")
