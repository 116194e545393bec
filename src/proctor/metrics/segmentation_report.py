"""EvaluateSegmentation's output: the printed metric lines and the XML result file.

The XML follows what ITK's DOM writer produces for the tool: no declaration, two-space indent,
attributes in the order the tool sets them, ``<dimention>`` spelt as the tool spells it.
Unlike the tool, an existing XML file is replaced rather than merged into.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from proctor.metrics.segmentation import METRICS
from proctor.metrics.segmentation_compat import ImageCounts, ToolValue

SECTIONS = ("Similarity", "Distance", "Classic Measures")


def format_number(value: float, *, integer: bool = False) -> str:
    """``printf("%.6f")`` (``%.0f`` for counts) as glibc prints it; NaN from 0/0 is ``-nan``."""
    if math.isnan(value):
        return "-nan"
    return f"{value:.0f}" if integer else f"{value:.6f}"


def metric_line(item: ToolValue) -> str:
    """``CODE<TAB>= value<TAB>description`` plus `` (in unit)``, or a trailing space without."""
    unit = f" (in {item.unit})" if item.unit is not None else " "
    value = format_number(item.value, integer=item.integer)
    return f"{item.code}\t= {value}\t{METRICS[item.code].name}{unit}"


def threshold_line(threshold: float) -> str:
    """The line printed first in crisp mode (C++ ``<<`` formats the double like ``%g``)."""
    return f"Crisp segmentation at threshold= {threshold:g}"


def total_time_lines(milliseconds: int) -> list[str]:
    """The closing lines of a run."""
    return ["", f"Total execution time= {milliseconds} milliseconds", "", "",
            "  ---** VISCERAL 2013, www.visceral.eu **---", ""]  # fmt: skip


@dataclass(frozen=True)
class XmlReport:
    """Everything the tool writes to ``-xml FILE`` after a complete run."""

    truth_file: str
    segment_file: str
    counts: ImageCounts
    values: Sequence[ToolValue]
    total_milliseconds: int
    shape: tuple[int, int, int]
    spacing: tuple[float, float, float]


def _element(name: str, attributes: Sequence[tuple[str, str]], indent: str) -> str:
    text = "".join(f" {key}={quoteattr(value)}" for key, value in attributes)
    return f"{indent}<{name}{text}/>"


def _image_elements(truth: str, segment: str, counts: ImageCounts | None) -> list[str]:
    lines = []
    for tag, name, own in (("fixed-image", truth, 0), ("moving-image", segment, 1)):
        attributes = [("filename", name)]
        if counts is not None:
            mine = (counts.truth, counts.segment)[own]
            attributes += [("nonzeropoints", str(mine - counts.both)),
                           ("intersection", str(counts.both))]  # fmt: skip
        lines.append(_element(tag, attributes, "  "))
    return lines


def _metric_element(item: ToolValue) -> str:
    info = METRICS[item.code]
    attributes = [
        ("name", info.name),
        ("symbol", info.code),
        ("type", "similarity" if info.similarity else "distance"),
        ("value", format_number(item.value, integer=item.integer)),
    ]
    if item.milliseconds is not None:
        attributes.append(("executiontime", f"{item.milliseconds:.0f}"))
    if item.unit is not None:
        attributes.append(("unit", item.unit))
    return _element(item.code, attributes, "    ")


def result_xml(report: XmlReport) -> str:
    """The XML document of a complete run."""
    lines = [
        "<measurement>",
        *_image_elements(report.truth_file, report.segment_file, report.counts),
    ]
    if report.values:
        lines += ["  <metrics>", *(_metric_element(v) for v in report.values), "  </metrics>"]
    lines.append(_element("time", [("total-executiontime", str(report.total_milliseconds))], "  "))
    size = [("max_x", str(report.shape[0] - 1)), ("max_y", str(report.shape[1] - 1)),
            ("max_z", str(report.shape[2] - 1))]  # fmt: skip
    size += [
        (f"voxelspacing_{axis}", f"{v:.6f}") for axis, v in zip("xyz", report.spacing, strict=True)
    ]
    lines += [_element("dimention", size, "  "), "</measurement>"]
    return "\n".join(lines) + "\n"


def message_xml(truth_file: str, segment_file: str, message: str) -> str:
    """The XML document of a run stopped by a message (different sizes, an empty image)."""
    escaped = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    lines = ["<measurement>", *_image_elements(truth_file, segment_file, None), "  <message>",
             f"    {escaped}", "  </message>", "</measurement>"]  # fmt: skip
    return "\n".join(lines) + "\n"
