"""``proctor NAME`` loads only the modules that register NAME (``proctor.cli.main.COMMANDS``).

Each narrow app must give NAME exactly as the whole app does: the same subcommands, options,
arguments and help. A command added to a module without its entry in ``COMMANDS`` fails here.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from proctor.cli.main import COMMANDS, REGISTERS, build_app, modules_for


def _helps(app: typer.Typer, path: list[str]) -> dict[str, str]:
    """The ``--help`` text of the command at ``path`` and of every command below it."""
    shown = CliRunner().invoke(app, [*path, "--help"], terminal_width=100)
    assert shown.exit_code == 0, shown.output
    found = {" ".join(path): shown.output}
    command: Any = typer.main.get_group(app)
    for name in path:
        command = command.commands[name]
    for sub in sorted(getattr(command, "commands", {})):  # a group: each subcommand too
        found |= _helps(app, [*path, sub])
    return found


WHOLE = build_app()


def test_every_top_level_command_has_its_modules_named() -> None:
    assert sorted(COMMANDS) == sorted(typer.main.get_group(WHOLE).commands)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_narrow_app_gives_its_command_as_the_whole_app_does(name: str) -> None:
    narrow = build_app(modules_for([name, "--help"]))
    assert _helps(narrow, [name]) == _helps(WHOLE, [name])


def test_help_misspelled_and_option_first_calls_build_the_whole_app() -> None:
    assert modules_for([]) == REGISTERS
    assert modules_for(["--help"]) == REGISTERS
    assert modules_for(["rnu", "entry"]) == REGISTERS


HEAVY = ("proctor.pipeline.task", "proctor.store.db", "proctor.services.platform.serving", "scipy")


@pytest.mark.parametrize(
    ("args", "loaded"),
    [
        (["submit", "--help"], []),
        (["team", "--help"], []),
        (["token", "--help"], []),
        (["run", "--help"], ["proctor.pipeline.task"]),
    ],
)
def test_a_client_command_starts_without_the_store_the_server_or_the_pipeline(
    args: list[str], loaded: list[str]
) -> None:
    code = (
        "import sys; from proctor.cli.main import build_app, modules_for; "
        f"build_app(modules_for({args!r})); "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, timeout=120)  # fmt: skip
    assert shown.stdout.strip() == str(loaded)
