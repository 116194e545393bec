"""``proctor segeval``: VISCERAL's EvaluateSegmentation, same options, lines and XML.

``proctor segeval TRUTH SEGMENT [-use all|CODE,CODE@p@,...] [-thd T] [-unit millimeter]
[-nostreaming] [-xml FILE] [-strict]`` keeps the tool's single-dash options, so the arguments
are parsed here rather than by click. Exit status: 0 (also for the tool's "different sizes"
and "empty image" messages), 2 for a usage mistake or an unreadable image, 255 when MAHLNBS
meets a singular covariance (as the tool, which then writes no XML). ``-strict`` (not the
tool's) also refuses different voxel spacings and exits 1 on any of these stops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import typer

from proctor.errors import UsageError
from proctor.services.local.segeval import (
    SegevalRequest,
    SegevalStop,
    SingularCovarianceError,
    XmlReport,
    message_xml,
    metric_line,
    result_xml,
    segeval_codes,
    start_segeval,
    threshold_line,
    total_time_lines,
)
from proctor.wording import plural

USAGE = (
    "usage: proctor segeval TRUTH SEGMENT [-use all|CODE,CODE@param@,...] [-thd T] "
    "[-unit millimeter|voxel] [-nostreaming] [-xml FILE] [-strict]"
)
VALUE_OPTIONS = ("-use", "-thd", "-unit", "-xml")
ABORT_STATUS = 255


@dataclass(frozen=True)
class SegevalArgs:
    """The command line, parsed."""

    truth: str
    segment: str
    use: str = "all"
    threshold: float | None = None
    millimeter: bool = False
    streaming: bool = True
    xml: str | None = None
    strict: bool = False


def parse_args(args: list[str]) -> SegevalArgs:
    """Parse the tool's command line; mistakes raise :class:`UsageError` naming the argument."""
    files: list[str] = []
    options: dict[str, str] = {}
    streaming = True
    strict = "-strict" in args
    tokens = iter(arg for arg in args if arg != "-strict")
    for token in tokens:
        if token == "-nostreaming":  # noqa: S105 - a command-line word, not a secret
            streaming = False
        elif token in VALUE_OPTIONS:
            value = next(tokens, None)
            if value is None:
                raise UsageError(f"option {token} needs a value\n{USAGE}")
            options[token] = value
        elif token.startswith("-") and len(token) > 1:
            raise UsageError(f"unknown option {token!r}\n{USAGE}")
        else:
            files.append(token)
    if len(files) != 2:
        raise UsageError(
            f"expected TRUTH and SEGMENT image paths, got {plural(len(files), 'path')}\n{USAGE}"
        )
    unit = options.get("-unit", "voxel")
    if unit not in ("voxel", "millimeter"):
        raise UsageError(f"-unit must be 'millimeter' or 'voxel', got {unit!r}")
    return SegevalArgs(files[0], files[1], options.get("-use", "all"),
                       _threshold(options.get("-thd")), unit == "millimeter", streaming,
                       _xml_target(options.get("-xml")), strict)  # fmt: skip


def _xml_target(text: str | None) -> str | None:
    """The -xml file, refused before any work when it cannot be written."""
    if text is None:
        return None
    path = Path(text)
    if path.is_dir():
        raise UsageError(f"-xml {text} is a folder: name the XML file to write")
    if not path.parent.is_dir():
        raise UsageError(f"-xml {text}: folder {path.parent} does not exist: create it first")
    return text


def _write_xml(target: str, text: str) -> None:
    try:
        Path(target).write_text(text)
    except OSError as err:
        raise UsageError(f"-xml {target}: cannot write it ({err.strerror})") from None


def _threshold(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"-thd must be a number in [0, 1], got {text!r}") from None
    if not 0 <= value <= 1:
        raise UsageError(f"-thd must be a number in [0, 1], got {text!r}")
    return value


def _stop_with_message(args: SegevalArgs, message: str) -> None:
    typer.echo(message)
    if args.xml is not None:
        _write_xml(args.xml, message_xml(args.truth, args.segment, message))


def run_segeval(args: SegevalArgs) -> None:
    """Evaluate as the tool does, print its lines as each value comes and write its XML."""
    started = time.perf_counter()
    codes = segeval_codes(args.use)
    if args.threshold is not None:
        typer.echo(threshold_line(args.threshold) + "\n")
    request = SegevalRequest(args.truth, args.segment, codes, args.threshold, args.millimeter,
                             args.streaming, args.strict)  # fmt: skip
    run = start_segeval(request)
    if isinstance(run, SegevalStop):
        _stop_with_message(args, run.message)
        if run.failure:
            raise typer.Exit(1)
        return
    for index, (section, values) in enumerate(run.sections()):
        typer.echo(("\n" if index else "") + f"{section}:")
        for value in values:
            typer.echo(metric_line(value))
    total = int((time.perf_counter() - started) * 1000)
    typer.echo("\n".join(total_time_lines(total)))
    if args.xml is not None:
        result = run.result()
        report = XmlReport(args.truth, args.segment, result.counts, result.values, total,
                           result.shape, result.spacing)  # fmt: skip
        _write_xml(args.xml, result_xml(report))


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor segeval`` to the app."""

    @app.command(
        "segeval",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="Compare a segmentation with its truth exactly as VISCERAL's EvaluateSegmentation.\n\n"
        + USAGE,
    )
    def segeval(ctx: typer.Context) -> None:
        try:
            run_segeval(parse_args(list(ctx.args)))
        except SingularCovarianceError as err:  # the tool's own abort, not an input error
            typer.echo(f"Exception: {err}", err=True)
            raise typer.Exit(ABORT_STATUS) from None
