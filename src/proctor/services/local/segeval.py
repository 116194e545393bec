"""Use case: VISCERAL's EvaluateSegmentation (``proctor segeval``), and the tool's output.

:func:`segeval_codes` reads a ``-use`` string; :func:`start_segeval` reads both images and
applies the tool's checks: a :class:`SegevalStop` carrying the tool's message, or a
:class:`SegevalRun` that computes the selected values section by section. While a face takes
those values, MAHLNBS may raise :class:`SingularCovarianceError`: the tool's own abort (it exits
255 and writes no XML), which a face shows as such rather than as an input error.

The tool's printed lines and XML file (:func:`metric_line`, :func:`result_xml`, :data:`SECTIONS`
...) define what every face must reproduce byte for byte; they are re-exported here from
``proctor.metrics.segmentation_report`` so that faces reach them through the services.
"""

from __future__ import annotations

from proctor.errors import InputFileError, UsageError
from proctor.metrics.segmentation_compat import SingularCovarianceError, ToolValue, selected_codes
from proctor.metrics.segmentation_report import (
    SECTIONS,
    XmlReport,
    message_xml,
    metric_line,
    result_xml,
    threshold_line,
    total_time_lines,
)
from proctor.scoring import segeval
from proctor.scoring.segeval import SegevalRequest, SegevalResult, SegevalRun, SegevalStop
from proctor.services.local.input_errors import input_errors_as

__all__ = [
    "SECTIONS",
    "SegevalRequest",
    "SegevalResult",
    "SegevalRun",
    "SegevalStop",
    "SingularCovarianceError",
    "ToolValue",
    "XmlReport",
    "message_xml",
    "metric_line",
    "result_xml",
    "segeval_codes",
    "start_segeval",
    "threshold_line",
    "total_time_lines",
]


def segeval_codes(use: str) -> dict[str, float | None]:
    """Each code a ``-use`` string selects (the tool's rule) with its parameter, in tool order.

    ``all`` selects every code, ``visceral`` all but DICE, AVGDIST, MUTINF and ADJRIND. A string
    naming no code, or a parameter that is not a number, raises ``UsageError``.
    """
    with input_errors_as(UsageError):
        return dict(selected_codes(use))


def start_segeval(request: SegevalRequest) -> SegevalRun | SegevalStop:
    """Read both images and apply the tool's checks, in its order.

    An image that is missing or cannot be read raises ``InputFileError`` naming the file.
    """
    with input_errors_as(InputFileError):
        return segeval.start_segeval(request)
