"""A build's changes as one OCI layer, and the OCI archive of an image (no sandbox needed)."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import tarfile
from pathlib import Path

import pytest

from proctor.environments.built_layers import (
    Layer,
    LayerTooLargeError,
    diff_layer,
    file_sha256,
    write_oci_archive,
)


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    base = tmp_path / "base"
    (base / "usr" / "share" / "doc").mkdir(parents=True)
    (base / "usr" / "share" / "doc" / "README").write_text("docs")
    (base / "etc").mkdir()
    (base / "etc" / "motd").write_text("old")
    (base / "etc" / "kept").write_text("same")
    (base / "opt").mkdir()
    (base / "opt" / "tool").write_text("a file that becomes a folder")
    tree = tmp_path / "tree"
    shutil.copytree(base, tree, symlinks=True)
    return base, tree


def _members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {member.name: member for member in tar.getmembers()}


def test_the_layer_holds_what_changed_and_whiteouts_for_what_went(tmp_path: Path) -> None:
    base, tree = _trees(tmp_path)
    shutil.rmtree(tree / "usr" / "share" / "doc")
    (tree / "etc" / "motd").write_text("new text")
    (tree / "opt" / "tool").unlink()
    (tree / "opt" / "tool").mkdir()
    (tree / "opt" / "tool" / "bin").write_text("x")
    (tree / "app").mkdir()
    (tree / "app" / "link").symlink_to("/etc/shadow")
    (tree / "app" / "suid").write_text("#!/bin/sh\n")
    (tree / "app" / "suid").chmod(0o4755)
    os.mkfifo(tree / "app" / "fifo")
    (tree / ".proctor-copy").mkdir()
    sink = io.BytesIO()
    summary = diff_layer(base, tree, sink, skip=[".proctor-copy"])
    members = _members(sink.getvalue())
    assert set(members) == {
        "app", "app/link", "app/suid", "etc", "etc/motd", "opt", "opt/.wh.tool", "opt/tool",
        "opt/tool/bin", "usr", "usr/share", "usr/share/.wh.doc",
    }  # fmt: skip
    assert members["app/link"].issym() and members["app/link"].linkname == "/etc/shadow"
    assert stat.S_IMODE(members["app/suid"].mode) == 0o755
    assert all(m.uid == 0 and m.gid == 0 for m in members.values())
    assert summary.skipped == ("app/fifo",)
    assert summary.whiteouts == 2


def test_an_unchanged_tree_gives_an_empty_layer(tmp_path: Path) -> None:
    base, tree = _trees(tmp_path)
    sink = io.BytesIO()
    summary = diff_layer(base, tree, sink)
    assert summary.entries == 0 and summary.whiteouts == 0
    assert _members(sink.getvalue()) == {}


def test_the_archive_is_an_oci_layout_whose_blobs_match_their_digests(tmp_path: Path) -> None:
    base, tree = _trees(tmp_path)
    (tree / "etc" / "motd").write_text("new")
    layer_path = tmp_path / "layer.tar"
    with layer_path.open("wb") as sink:
        summary = diff_layer(base, tree, sink)
    assert summary.digest == file_sha256(layer_path)
    archive = tmp_path / "image.tar"
    config = {"Env": ["A=b"], "Cmd": ["python3", "x.py"], "WorkingDir": "/challenge"}
    digest = write_oci_archive(
        archive, [Layer(layer_path, summary.digest, "build")], config, ref="entry:x"
    )
    with tarfile.open(archive) as tar:
        index = json.load(tar.extractfile("index.json"))  # type: ignore[arg-type]
        assert index["manifests"][0]["digest"] == digest
        manifest_file = tar.extractfile(f"blobs/sha256/{digest.removeprefix('sha256:')}")
        assert manifest_file is not None
        manifest = json.load(manifest_file)
        config_name = f"blobs/sha256/{manifest['config']['digest'].removeprefix('sha256:')}"
        image_config = json.load(tar.extractfile(config_name))  # type: ignore[arg-type]
        assert image_config["config"] == config
        assert image_config["rootfs"]["diff_ids"] == [f"sha256:{summary.digest}"]
        layer = tar.extractfile(f"blobs/sha256/{summary.digest}")
        assert layer is not None and layer.read() == layer_path.read_bytes()


def test_sparse_files_count_whole_against_the_cap(tmp_path: Path) -> None:
    base, tree = _trees(tmp_path)
    with (tree / "sparse").open("wb") as handle:
        handle.truncate(1 << 30)
    sink = io.BytesIO()
    with pytest.raises(LayerTooLargeError, match=f"{1 << 30} bytes, over the cap of 1048576"):
        diff_layer(base, tree, sink, max_bytes=1 << 20)
    assert sink.getvalue() == b""
