"""VISCERAL's EvaluateSegmentation as an evaluation any face can run: read, check, compute.

:func:`start_segeval` reads both images as the tool does and applies its checks in its order
(different voxel counts, then an empty fixed image, then an empty moving one): the result is a
:class:`SegevalStop` carrying the tool's message, or a :class:`SegevalRun` that computes the
selected codes section by section. :func:`evaluate_segeval` runs one to the end. Printing the
tool's lines and writing its XML (``proctor.metrics.segmentation_report``) is left to the faces.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from proctor.formats.volumes import Volume, read_tool_volume
from proctor.metrics.segmentation import METRICS
from proctor.metrics.segmentation_compat import ImageCounts, ToolEvaluation, ToolValue
from proctor.metrics.segmentation_report import SECTIONS


@dataclass(frozen=True)
class SegevalRequest:
    """What to compare and how, as the tool's options say.

    ``codes`` maps each selected code to its parameter (``segmentation_compat.selected_codes``
    reads them from a ``-use`` string); ``threshold`` is ``-thd``, ``millimeter`` is
    ``-unit millimeter``, ``streaming`` is off with ``-nostreaming``; ``strict`` (``-strict``,
    not the tool's) also refuses different voxel spacings and makes every stop a failure.
    """

    truth: str
    segment: str
    codes: Mapping[str, float | None]
    threshold: float | None = None
    millimeter: bool = False
    streaming: bool = True
    strict: bool = False


@dataclass(frozen=True)
class SegevalStop:
    """The tool stopped before any metric and printed ``message`` (exit status 0).

    ``failure``: in strict mode, a stop is a failure (exit status 1).
    """

    message: str
    failure: bool = False


@dataclass(frozen=True)
class SegevalResult:
    """A complete evaluation, as the tool's XML reports it.

    Voxel counts, the values in the tool's order, the shape of the fixed image and its voxel
    spacing in mm.
    """

    counts: ImageCounts
    values: tuple[ToolValue, ...]
    shape: tuple[int, int, int]
    spacing: tuple[float, float, float]


class SegevalRun:
    """Both images read and checked; each selected code is computed when it is taken."""

    def __init__(self, request: SegevalRequest, truth: Volume, evaluation: ToolEvaluation) -> None:
        self._codes = request.codes
        self._evaluation = evaluation
        self._values: list[ToolValue] = []
        self.counts = evaluation.counts()
        shape = truth.data.shape
        self.shape = (shape[0], shape[1], shape[2])

    def sections(self) -> Iterator[tuple[str, Iterator[ToolValue]]]:
        """The tool's sections in order, each with its selected values computed one at a time.

        A face can show each value as it comes, as the tool does: when MAHLNBS meets a singular
        covariance, ``SingularCovarianceError`` is raised after the values before it.
        """
        for section in SECTIONS:
            yield section, self._section_values(section)

    def _section_values(self, section: str) -> Iterator[ToolValue]:
        for code, info in METRICS.items():
            if info.section == section and code in self._codes:
                self._values.append(self._evaluation.value(code, self._codes[code]))
                yield self._values[-1]

    def result(self) -> SegevalResult:
        """The values computed so far (all of them once :meth:`sections` is exhausted)."""
        return SegevalResult(self.counts, tuple(self._values), self.shape, self._evaluation.spacing)


def start_segeval(request: SegevalRequest) -> SegevalRun | SegevalStop:
    """Read both images and apply the tool's checks; raises ``VolumeReadError`` for a bad file."""
    truth = read_tool_volume(request.truth, streaming=request.streaming)
    segment = read_tool_volume(request.segment, streaming=request.streaming)
    strict = request.strict
    if truth.data.size != segment.data.size:
        sizes = f"fixedImage={truth.data.size} movingImage={segment.data.size}"
        return SegevalStop(f"Images are from different Sizes: {sizes}", failure=strict)
    if strict and not _same_spacing(truth.spacing, segment.spacing):
        shown = f"fixedImage={truth.spacing} movingImage={segment.spacing}"
        return SegevalStop(f"Images have different spacing: {shown}", failure=True)
    evaluation = ToolEvaluation(truth.data, segment.data, spacing=truth.spacing,
                                threshold=request.threshold,
                                millimeter=request.millimeter)  # fmt: skip
    run = SegevalRun(request, truth, evaluation)
    for count, who in ((run.counts.truth, "Fixed"), (run.counts.segment, "Moving")):
        if count == 0:
            return SegevalStop(f"{who} image is empty!", failure=strict)
    return run


def evaluate_segeval(request: SegevalRequest) -> SegevalResult | SegevalStop:
    """Run the whole evaluation: the tool's stop message, or every selected value."""
    run = start_segeval(request)
    if isinstance(run, SegevalStop):
        return run
    for _section, values in run.sections():
        deque(values, maxlen=0)
    return run.result()


def _same_spacing(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    if len(a) != len(b):
        return False
    return all(abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in zip(a, b, strict=True))
