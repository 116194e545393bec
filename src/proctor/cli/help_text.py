"""Help texts that wrap at any width: a docstring's paragraphs joined into single lines.

Typer keeps a docstring's line breaks, so a text written at 96 columns breaks raggedly at 80.
Each command's help becomes its docstring with every paragraph on one line (the terminal wraps
it); a paragraph holding an indented or bulleted line keeps its lines.
"""

from __future__ import annotations

import inspect

import typer

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


def reflow_helps(app: typer.Typer) -> None:
    """Give every command of ``app`` (and of its groups) its reflowed docstring as help."""
    for command in app.registered_commands:
        text = command.help or (command.callback.__doc__ if command.callback else None)
        if text:
            command.help = reflowed(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            reflow_helps(group.typer_instance)
