"""Input validation errors shared by the metric modules.

Metrics import nothing of Proctor, so they raise their own ``ValueError`` subclass; callers in the
upper layers may catch it and turn it into a participant-facing error.
"""


class MetricInputError(ValueError):
    """A metric received input of the wrong shape, type or value range."""


class UndefinedMetricWarning(RuntimeWarning):
    """A metric is undefined on its input (e.g. a single class) and returns NaN."""
