"""Help texts that wrap at any width: a docstring's paragraphs joined into single lines.

Typer keeps a docstring's line breaks, so a text written at 96 columns breaks raggedly at 80.
Each command's help becomes its docstring with every paragraph on one line (the terminal wraps
it); a paragraph holding an indented or bulleted line keeps its lines.

Typer writes a required argument as ``{name}`` on the usage line; every command here is a
:class:`ProctorCommand`, whose usage line names arguments as click always did (``CHALLENGE``,
``[USER]``, ``FILES...``).
"""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer.core import TyperCommand

_KEPT_STARTS = (" ", "\t", "- ", "* ")


def reflowed(text: str) -> str:
    """``text`` with each plain paragraph's lines joined by spaces; blank lines kept."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(_joined(paragraph) for paragraph in paragraphs)


def _joined(paragraph: str) -> str:
    lines = paragraph.splitlines()
    if any(line.startswith(_KEPT_STARTS) for line in lines):
        return paragraph
    return " ".join(line.strip() for line in lines)


def usage_name(argument: Any) -> str:
    """An argument as the usage line shows it: ``NAME``, ``[NAME]``, ``NAME...`` or its metavar."""
    if argument.metavar is not None:
        return str(argument.metavar)
    name = str(argument.name).upper()
    if not argument.required:
        name = f"[{name}]"
    return f"{name}..." if argument.nargs != 1 else name


class ProctorCommand(TyperCommand):
    """A Typer command whose usage line names its arguments in capitals, as click's did."""

    # ``Any``: the Context class this method receives is private to typer (its vendored click).
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS]`` then each argument's usage name."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(usage_name(param))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


def reflow_helps(app: typer.Typer) -> None:
    """Give every command of ``app`` (and of its groups) its reflowed docstring as help.

    Each command also becomes a :class:`ProctorCommand` (unless it names a class of its own).
    """
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):  # Typer's default: no class of its own
            command.cls = ProctorCommand
        text = command.help or (command.callback.__doc__ if command.callback else None)
        if text:
            command.help = reflowed(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            reflow_helps(group.typer_instance)
