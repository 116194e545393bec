"""Warnings captured per thread: two captures open at once never take each other's warnings."""

from __future__ import annotations

import threading
import warnings

import pytest

from proctor.metrics.warning_capture import captured_warnings, warn


def test_captures_open_at_once_in_two_threads_keep_their_own_warnings() -> None:
    """The interleaving that mixed eHealth-KD's scenarios, forced step by step with barriers."""
    both_open, first_warned, second_closed = (threading.Barrier(2, timeout=30) for _ in range(3))
    caught: dict[str, list[str]] = {}

    def first() -> None:
        with captured_warnings() as notes:
            both_open.wait()
            warn("first 1", UserWarning)
            first_warned.wait()
            second_closed.wait()
            warn("first 2", UserWarning)
        caught["first"] = [str(note) for note in notes]

    def second() -> None:
        with captured_warnings() as notes:
            both_open.wait()
            first_warned.wait()
            warn("second", UserWarning)
        second_closed.wait()
        caught["second"] = [str(note) for note in notes]

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert caught == {"first": ["first 1", "first 2"], "second": ["second"]}


def test_without_a_capture_a_warning_goes_through_the_warnings_module() -> None:
    with pytest.warns(UserWarning, match="no capture"):
        warn("no capture", UserWarning)


def test_captures_nest_and_the_innermost_one_receives() -> None:
    with captured_warnings() as outer:
        with captured_warnings() as inner:
            warn("inner", UserWarning)
        warn("outer", UserWarning)
    assert [str(n) for n in inner] == ["inner"] and [str(n) for n in outer] == ["outer"]


def test_a_capture_leaves_the_process_wide_filters_alone() -> None:
    before = list(warnings.filters)
    with captured_warnings():
        assert warnings.filters == before
