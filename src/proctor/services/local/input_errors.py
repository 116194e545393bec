"""Where the refusals of metrics and file readers become :mod:`proctor.errors` types.

``proctor.metrics`` imports nothing of Proctor, so its functions, and the readers of
``proctor.formats`` built on them, refuse bad input with their own ``ValueError`` subclass,
:class:`MetricInputError` (``VecFormatError``, ``VolumeReadError``, ``ExtractionFormatError``
...). The scoring services call them under :func:`input_errors_as`, so a face receives an
``InputFileError`` (or ``UsageError``) carrying the same message.

``MetricInputError`` is re-exported for a face's error table only, as a safety net: a refusal
raised where no service can translate it (a value a face takes lazily from an evaluation, as
segeval's) is still the caller's input at fault, not a bug.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from proctor.errors import UsageError
from proctor.metrics._validation import MetricInputError

__all__ = ["MetricInputError", "input_errors_as"]


@contextmanager
def input_errors_as(kind: type[UsageError]) -> Iterator[None]:
    """Raise a :class:`MetricInputError` from the block as ``kind``, same message, chained.

    Example: ``with input_errors_as(InputFileError): values = read_label_column(path)``.
    """
    try:
        yield
    except MetricInputError as err:
        raise kind(str(err)) from err
