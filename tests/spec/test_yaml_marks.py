"""YAML slips in ``challenge.yaml`` name the line and column as the YAML parser reports them.

An organizer wrote ``{mase: {direction: lower, m=12)}}``: valid YAML whose mapping holds a key
``m=12)`` with no value, refused as ``tasks[0].scorer.metrics.mase.m=12): unknown key`` with
no line. Each problem now says where the parser read the slip and what it read; a real syntax
error says the parser's own line and column, without its ``<unicode string>`` stream name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.services.local.authoring import new_challenge

METRICS = "      metrics:                   # every metric score.py writes to scores.json\n"


def _slipped(root: Path, line: str) -> Path:
    """A new records challenge whose program's metrics are the flow mapping ``line``."""
    new_challenge(root, "records")
    path = root / "challenge.yaml"
    text = path.read_text()
    start = text.index(METRICS)
    end = text.index("      limits:", start)
    path.write_text(text[:start] + f"      metrics: {line}\n" + text[end:])
    return root


def _refusal(root: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_challenge(root)
    return str(err.value)


def test_a_key_written_with_equals_says_where_and_what_the_parser_read(tmp_path: Path) -> None:
    line = "{mae: {direction: lower, m=12)}, within_1: {direction: higher}}"
    said = _refusal(_slipped(tmp_path / "c", line))
    column = len("      metrics: ") + line.index("m=12)") + 1
    assert said.endswith(
        "tasks[0].scorer.metrics.mae.m=12): unknown key: remove it or fix its spelling "
        f"(line 26, column {column}: the YAML parser read `m=12)` as a key with no value; "
        "write `m: 12` (a colon and a space) for a key and its value)"
    )


def test_a_mapping_holding_only_the_slip_names_it_at_its_mapping(tmp_path: Path) -> None:
    said = _refusal(_slipped(tmp_path / "c", "{mae: {m=12}, within_1: {direction: higher}}"))
    assert "metrics.mae.direction: required key is missing (line 26, column 22: " in said
    assert "the YAML parser read `m=12` as a key with no value; write `m: 12`" in said


def test_a_value_written_with_equals_is_named_as_text(tmp_path: Path) -> None:
    said = _refusal(_slipped(tmp_path / "c", "{mae: m=12), within_1: {direction: higher}}"))
    assert "tasks[0].scorer.metrics.mae: " in said
    assert "(line 26, column 22: the YAML parser read `m=12)` as a text; write `m: 12`" in said


def test_a_syntax_error_names_the_parsers_line_and_column(tmp_path: Path) -> None:
    said = _refusal(_slipped(tmp_path / "c", "{mae: {direction: lower}"))
    assert said.endswith(
        "challenge.yaml: not valid YAML: line 27, column 7: did not find expected ',' or '}' "
        "(while parsing a flow mapping that starts at line 26, column 16)"
    )
    assert "<unicode string>" not in said


def test_a_plain_unknown_key_is_placed_too(tmp_path: Path) -> None:
    root = tmp_path / "c"
    new_challenge(root, "records")
    path = root / "challenge.yaml"
    path.write_text(path.read_text() + "colour: blue\n")
    lines = path.read_text().count("\n")
    said = _refusal(root)
    assert said.endswith(
        f"colour: unknown key: remove it or fix its spelling (line {lines}, column 1)"
    )
