"""The bounded YAML reader on its own: what it counts, on libyaml's parser and on PyYAML's."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from proctor.formats.bounded_yaml import (
    BoundedLoader,
    PureBoundedLoader,
    YamlBounds,
    YamlBoundsError,
    YamlDocumentError,
    load_text,
    read_file,
)
from proctor.protocols.upload_program import METADATA_BOUNDS, read_metadata

LOADERS = [BoundedLoader, PureBoundedLoader]


def laughs(levels: int, width: int = 10) -> str:
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_libyaml_is_used_when_pyyaml_has_it() -> None:
    assert yaml.__with_libyaml__
    assert BoundedLoader is not PureBoundedLoader


@pytest.mark.parametrize("loader", LOADERS)
def test_aliases_count_as_what_they_repeat(loader: type[BoundedLoader]) -> None:
    # levels 0..3 of 10 aliases: 1 + 11 + 111 + 1111 nodes, the mapping and its keys 9
    text = laughs(3)
    assert load_text(text, YamlBounds(max_nodes=1 + 4 * 1 + 1 + 11 + 111 + 1111), loader)
    with pytest.raises(YamlBoundsError, match="expands to more than 1000 values"):
        load_text(text, YamlBounds(max_nodes=1000), loader)


@pytest.mark.parametrize("loader", LOADERS)
def test_a_billion_laughs_is_refused_before_it_is_built(loader: type[BoundedLoader]) -> None:
    with pytest.raises(YamlBoundsError, match="100000"):
        load_text(laughs(9) + "title: *l9\n", loader=loader)


@pytest.mark.parametrize("loader", LOADERS)
def test_loops_and_depth_are_refused(loader: type[BoundedLoader]) -> None:
    with pytest.raises(YamlBoundsError, match="inside the node it names"):
        load_text("a: &a {b: *a}\n", loader=loader)
    with pytest.raises(YamlDocumentError, match="nested"):
        load_text("a: " + "[" * 200 + "]" * 200 + "\n", loader=loader)
    assert load_text("a: " + "[" * 99 + "]" * 99 + "\n", loader=loader) is not None


@pytest.mark.parametrize("loader", LOADERS)
def test_plain_yaml_reads_as_pyyaml_reads_it(loader: type[BoundedLoader]) -> None:
    text = "\ufeffa: 1\r\nb: &x [1, 2.5, yes, 2026-01-02]\r\nc: *x\r\na: last\r\n"
    assert load_text(text, loader=loader) == yaml.safe_load(text.lstrip("\ufeff"))
    assert load_text("", loader=loader) is None


def test_a_file_over_its_bytes_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * 100 + "\n")
    assert read_file(path, YamlBounds(max_bytes=104)) == {"a": "x" * 100}
    path.write_text("a: " + "x" * 101 + "\n")
    with pytest.raises(YamlBoundsError, match="105 bytes, over the 104"):
        read_file(path, YamlBounds(max_bytes=104))
    (tmp_path / "link.yaml").symlink_to(path)
    with pytest.raises(OSError):
        read_file(tmp_path / "link.yaml")


def test_a_metadata_of_exactly_64_kib_is_read(tmp_path: Path) -> None:
    head = "command: python $program/predict.py\n#"
    (tmp_path / "metadata").write_text(head + "x" * (METADATA_BOUNDS.max_bytes - len(head)))
    assert read_metadata(tmp_path) == ("python $program/predict.py", None)
    (tmp_path / "metadata").write_text(head + "x" * (METADATA_BOUNDS.max_bytes - len(head) + 1))
    command, problem = read_metadata(tmp_path)
    assert command is None and problem is not None and "keep it under 64 KiB" in problem
