"""Invariants checked once over every metric in the registry (cf. scikit-learn's test_common)."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import metric_registry as registry
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from metric_registry import (
    INPUT_KINDS,
    REGISTRY,
    MetricInfo,
    UnknownMetricError,
    build_registry,
    get_metric,
)
from paths import SUPPORT

from proctor.metrics._validation import MetricInputError
from proctor.metrics.extraction import (
    KEYPHRASE_LABELS,
    RELATION_LABELS,
    Keyphrase,
    Relation,
    Sentence,
)

Inputs = tuple[Any, ...]

# ---------------------------------------------------------------- valid inputs per input kind


@st.composite
def two_class_labels(draw: st.DrawFn, n: int) -> np.ndarray:
    """0/1 labels of length ``n`` (≥ 2) holding both classes."""
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
    negative, positive = draw(st.permutations(range(n)))[:2]
    labels[negative], labels[positive] = 0, 1
    return labels


@st.composite
def binary_scores(draw: st.DrawFn) -> Inputs:
    n = draw(st.integers(2, 40))
    scores = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e3, 1e3))
    return draw(two_class_labels(n)), draw(hnp.arrays(np.float64, n, elements=scores))


@st.composite
def probabilities(draw: st.DrawFn) -> Inputs:
    n = draw(st.integers(2, 40))
    probs = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.0, 1.0))
    return draw(two_class_labels(n)), draw(hnp.arrays(np.float64, n, elements=probs))


@st.composite
def segmentation(draw: st.DrawFn) -> Inputs:
    """Two volumes sharing a 2×2×2 foreground block and a background voxel, noise elsewhere.

    The shared block keeps every metric defined (a surface on both sides, an invertible
    covariance for MAHLNBS); the shared background voxel keeps specificity defined. Half the
    examples are fuzzy membership maps.
    """
    shape = tuple(draw(st.integers(3, 6)) for _ in range(3))
    corner = tuple(draw(st.integers(0, side - 2)) for side in shape)
    core = np.zeros(shape, bool)
    core[tuple(slice(c, c + 2) for c in corner)] = True
    background = draw(st.sampled_from(np.flatnonzero(~core).tolist()))
    # Voxel noise from a drawn seed: drawing each voxel through Hypothesis is slow.
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    fuzzy = draw(st.booleans())
    volumes = []
    for _ in range(2):
        volume = rng.random(shape) if fuzzy else rng.integers(0, 2, shape).astype(np.float64)
        volume[core] = 1.0
        volume.flat[background] = 0.0
        volumes.append(volume)
    return tuple(volumes)


@st.composite
def annotated_sentence(draw: st.DrawFn, text: str) -> Sentence:
    n_phrases = draw(st.integers(0, 4))
    phrases = []
    for phrase_id in range(1, n_phrases + 1):
        starts = draw(st.lists(st.integers(0, len(text) - 2), min_size=1, max_size=2))
        spans = tuple((start, draw(st.integers(start + 1, len(text)))) for start in sorted(starts))
        label = draw(st.sampled_from(KEYPHRASE_LABELS))
        phrases.append(Keyphrase(id=phrase_id, label=label, spans=spans))
    relations = []
    if n_phrases:
        ends = st.integers(1, n_phrases)
        for _ in range(draw(st.integers(0, 3))):
            label = draw(st.sampled_from(RELATION_LABELS))
            relations.append(Relation(label=label, source=draw(ends), target=draw(ends)))
    return Sentence(text=text, keyphrases=tuple(phrases), relations=tuple(relations))


@st.composite
def sentence_pairs(draw: st.DrawFn) -> Inputs:
    texts = [f"sentence {i} has a few words" for i in range(draw(st.integers(1, 4)))]
    gold = [draw(annotated_sentence(text)) for text in texts]
    submitted = [draw(annotated_sentence(text)) for text in texts]
    return gold, submitted


@st.composite
def score_tables(draw: st.DrawFn) -> Inputs:
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=2, max_side=7))
    values = st.one_of(st.integers(0, 3).map(float), st.floats(0.0, 1.0), st.just(math.nan))
    return (draw(hnp.arrays(np.float64, shape, elements=values)),)


@st.composite
def labels(draw: st.DrawFn, info: MetricInfo) -> Inputs:
    """y_true holding every class of the metric at least once; y_pred any allowed label."""
    n = draw(st.integers(len(info.classes), 30))
    y_true = [*info.classes, *draw(st.lists(st.sampled_from(info.classes), min_size=n))][:n]
    order = draw(st.permutations(range(n)))
    pred_labels = st.sampled_from(info.classes + info.extra_pred_classes)
    y_pred = draw(st.lists(pred_labels, min_size=n, max_size=n))
    return np.array(y_true)[order], np.array(y_pred)


Generator = Callable[[MetricInfo], st.SearchStrategy[Inputs]]

VALID_INPUTS: dict[str, Generator] = {
    "binary_scores": lambda info: binary_scores(),
    "probabilities": lambda info: probabilities(),
    "labels": labels,
    "segmentation": lambda info: segmentation(),
    "annotated_sentences": lambda info: sentence_pairs(),
    "ranks": lambda info: score_tables(),
}


@st.composite
def undefined_single_class(draw: st.DrawFn) -> Inputs:
    n = draw(st.integers(1, 20))
    y_true = np.full(n, draw(st.integers(0, 1)))
    return y_true, draw(hnp.arrays(np.float64, n, elements=st.floats(0.0, 1.0)))


@st.composite
def undefined_empty_volumes(draw: st.DrawFn) -> Inputs:
    shape = draw(hnp.array_shapes(min_dims=3, max_dims=3, min_side=2, max_side=5))
    return np.zeros(shape, np.uint8), np.zeros(shape, np.uint8)


@st.composite
def unannotated_sentences(draw: st.DrawFn) -> Inputs:
    texts = [f"sentence {i}" for i in range(draw(st.integers(0, 3)))]
    return [Sentence(text) for text in texts], [Sentence(text) for text in texts]


@st.composite
def undefined_one_class_labels(draw: st.DrawFn, info: MetricInfo) -> Inputs:
    only = draw(st.sampled_from(info.classes))
    y_true = np.array([only] * draw(st.integers(1, 10)))
    return y_true, y_true.copy()


UNDEFINED_INPUTS: dict[str, Generator] = {
    "binary_scores": lambda info: undefined_single_class(),
    "probabilities": lambda info: undefined_single_class(),
    "labels": undefined_one_class_labels,
    "segmentation": lambda info: undefined_empty_volumes(),
    "annotated_sentences": lambda info: unannotated_sentences(),
}


def reorder_cases(kind: str, inputs: Inputs, rng: np.random.Generator) -> Inputs:
    """The same inputs with their cases (tasks for ranks, voxels for volumes) shuffled alike."""
    if kind == "ranks":
        (table,) = inputs
        return (table[:, rng.permutation(table.shape[1])],)
    if kind == "annotated_sentences":
        order = rng.permutation(len(inputs[0]))
        return tuple([sentences[i] for i in order] for sentences in inputs)
    flat = [np.ravel(array) for array in inputs]
    order = rng.permutation(flat[0].size)
    return tuple(
        array[order].reshape(np.shape(orig)) for array, orig in zip(flat, inputs, strict=True)
    )


def call(info: MetricInfo, inputs: Inputs) -> np.ndarray:
    return np.asarray(info.func(*inputs), dtype=np.float64)


def entries(predicate: Callable[[MetricInfo], bool] = lambda info: True) -> list[Any]:
    return [pytest.param(info, id=name) for name, info in REGISTRY.items() if predicate(info)]


# ---------------------------------------------------------------- invariants over every entry


@pytest.mark.parametrize("info", entries())
def test_metric_name_follows_the_direction_convention(info: MetricInfo) -> None:
    if info.name.endswith("_score"):
        assert info.direction == "higher"
    if info.name.endswith(("_distance", "_loss", "_error", "_rank")):
        assert info.direction == "lower"
    assert info.description.strip()


@pytest.mark.parametrize("info", entries())
def test_every_metric_has_an_input_generator_for_its_kind(info: MetricInfo) -> None:
    assert info.input_kind in VALID_INPUTS
    if info.undefined_value is not None:
        assert info.input_kind in UNDEFINED_INPUTS


@pytest.mark.parametrize("info", entries())
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_metric_values_are_finite_and_within_bounds_on_valid_input(
    info: MetricInfo, data: st.DataObject
) -> None:
    value = call(info, data.draw(VALID_INPUTS[info.input_kind](info)))
    assert np.all(np.isfinite(value))
    if info.bounds is not None:
        low, high = info.bounds
        assert np.all((value >= low - 1e-12) & (value <= high + 1e-12))


@pytest.mark.parametrize("info", entries(lambda info: info.order_free))
@given(data=st.data(), seed=st.integers(0, 2**32))
@settings(max_examples=20, deadline=None)
def test_order_free_metric_ignores_the_order_of_cases(
    info: MetricInfo, data: st.DataObject, seed: int
) -> None:
    inputs = data.draw(VALID_INPUTS[info.input_kind](info))
    shuffled = reorder_cases(info.input_kind, inputs, np.random.default_rng(seed))
    np.testing.assert_allclose(call(info, shuffled), call(info, inputs), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("info", entries(lambda info: info.symmetric))
@given(data=st.data())
@settings(max_examples=20, deadline=None)
def test_symmetric_metric_ignores_which_input_comes_first(
    info: MetricInfo, data: st.DataObject
) -> None:
    first, second = data.draw(VALID_INPUTS[info.input_kind](info))
    np.testing.assert_allclose(
        call(info, (second, first)), call(info, (first, second)), rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("info", entries(lambda info: info.undefined_value is not None))
@given(data=st.data())
@settings(max_examples=10, deadline=None)
def test_undefined_input_gives_nan_with_a_warning_or_the_documented_value(
    info: MetricInfo, data: st.DataObject
) -> None:
    inputs = data.draw(UNDEFINED_INPUTS[info.input_kind](info))
    assert info.undefined_value is not None
    if math.isnan(info.undefined_value):
        with pytest.warns(Warning):
            value = call(info, inputs)
        assert np.all(np.isnan(value))
    else:
        np.testing.assert_array_equal(call(info, inputs), info.undefined_value)


@pytest.mark.parametrize("info", entries(lambda info: info.undefined_value is None))
@given(data=st.data())
@settings(max_examples=10, deadline=None)
def test_metric_declared_defined_everywhere_is_finite_without_warning_on_edge_input(
    info: MetricInfo, data: st.DataObject
) -> None:
    edge = UNDEFINED_INPUTS.get(info.input_kind, VALID_INPUTS[info.input_kind])(info)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(np.isfinite(call(info, data.draw(edge))))


# ---------------------------------------------------------------- the registry itself


def test_input_kind_generators_cover_every_declared_kind() -> None:
    assert set(VALID_INPUTS) == set(INPUT_KINDS)
    assert set(UNDEFINED_INPUTS) == set(INPUT_KINDS) - {"ranks"}


def test_registry_is_keyed_by_each_metric_name() -> None:
    assert len(REGISTRY) > 0
    assert all(name == info.name for name, info in REGISTRY.items())


def test_get_metric_returns_the_registered_entry() -> None:
    info = get_metric("mean_rank")
    assert info is REGISTRY["mean_rank"]
    assert not info.higher_is_better


def test_unknown_metric_error_lists_the_known_names() -> None:
    with pytest.raises(UnknownMetricError, match="mean_rank") as caught:
        get_metric("no_such_score")
    assert "no_such_score" in str(caught.value)
    assert isinstance(caught.value, KeyError)
    assert isinstance(caught.value, ValueError)


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        REGISTRY["mean_rank"] = get_metric("mean_rank")  # type: ignore[index]


def test_importing_the_registry_imports_no_metric_module() -> None:
    code = (
        "import sys, metric_registry as r\n"
        "loaded = {m for m in sys.modules if m.startswith('proctor.metrics.')}\n"
        "assert loaded == {'proctor.metrics._validation'}, loaded\n"
        "assert 'mean_rank' in r.REGISTRY\n"
        "assert 'proctor.metrics.ranking' in sys.modules\n"
    )
    tests = str(SUPPORT)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tests)


def test_a_name_registered_twice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twice = (registry._ranking_entries, registry._ranking_entries)
    monkeypatch.setattr(registry, "_ENTRY_GROUPS", twice)
    with pytest.raises(MetricInputError, match="registered twice"):
        build_registry()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"direction": "up"}, "direction"),
        ({"input_kind": "images"}, "input kind"),
        ({"bounds": (1.0, 0.0)}, "bounds"),
    ],
)
def test_metric_info_refuses_an_inconsistent_declaration(
    changes: dict[str, Any], message: str
) -> None:
    fields: dict[str, Any] = {
        "name": "example_score",
        "func": lambda y_true, y_score: 0.0,
        "direction": "higher",
        "input_kind": "binary_scores",
        "bounds": (0.0, 1.0),
        "symmetric": False,
        "description": "an example",
    }
    with pytest.raises(MetricInputError, match=message):
        MetricInfo(**(fields | changes))
