"""Manifest checks and entry markers on unpacked entries."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from archive_craft import Item, build_zip

from proctor.entries import EntryFlags, Manifest, check_manifest, entry_flags, unpack_entry
from proctor.errors import EntryError, ManifestError

PHYSIONET = Manifest(
    required=("setup.sh", "next.sh", "AUTHORS.txt", "LICENSE.txt", "answers.txt"),
    executable=("setup.sh", "next.sh"),
    optional=("dependencies.txt", "DRYRUN"),
)


def write(root: Path, name: str, data: bytes = b"x\n", mode: int = 0o644) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    """A complete PhysioNet 2017-style entry."""
    root = tmp_path / "entry"
    write(root, "setup.sh", b"#!/bin/sh\nexit 0\n", 0o755)
    write(root, "next.sh", b"#!/bin/sh\necho $1,N >> answers.txt\n", 0o755)
    write(root, "AUTHORS.txt", b"A. Author\n")
    write(root, "LICENSE.txt", b"GPL\n")
    write(root, "answers.txt", b"A00001,N\n")
    write(root, "dependencies.txt", b"octave\n")
    return root


def test_a_complete_entry_passes_with_a_warning_for_each_missing_optional_file(entry) -> None:
    assert check_manifest(entry, PHYSIONET) == ["entry has no DRYRUN (optional)"]


def test_an_entry_with_every_optional_file_passes_without_warnings(entry) -> None:
    write(entry, "DRYRUN", b"")
    assert check_manifest(entry, PHYSIONET) == []


def test_an_optional_file_of_the_wrong_kind_is_a_warning(entry) -> None:
    (entry / "dependencies.txt").unlink()
    (entry / "dependencies.txt").mkdir()
    assert check_manifest(entry, PHYSIONET) == [
        "dependencies.txt is a folder, but it must be a file: put the file dependencies.txt there",
        "entry has no DRYRUN (optional)",
    ]


def test_a_missing_required_file_is_named_with_the_fix(entry) -> None:
    (entry / "setup.sh").unlink()
    with pytest.raises(ManifestError) as caught:
        check_manifest(entry, PHYSIONET)
    assert str(caught.value) == "entry is missing setup.sh: add it at the top level of the archive"
    assert isinstance(caught.value, EntryError)


def test_every_problem_is_reported_at_once(entry) -> None:
    (entry / "setup.sh").unlink()
    write(entry, "AUTHORS.txt", b"")
    (entry / "next.sh").chmod(0o644)
    (entry / "LICENSE.txt").unlink()
    (entry / "LICENSE.txt").mkdir()
    with pytest.raises(ManifestError) as caught:
        check_manifest(entry, PHYSIONET)
    message = str(caught.value)
    assert message.startswith("the entry has 4 problems:\n")
    assert "  - entry is missing setup.sh: add it at the top level of the archive" in message
    assert "  - next.sh is not executable: run `chmod +x next.sh` before archiving" in message
    assert "  - AUTHORS.txt is empty" in message
    assert "  - LICENSE.txt is a folder, but it must be a file" in message


def test_an_empty_script_without_exec_bit_gets_both_problems(entry) -> None:
    write(entry, "next.sh", b"", 0o644)
    with pytest.raises(ManifestError, match="2 problems") as caught:
        check_manifest(entry, PHYSIONET)
    assert "next.sh is empty" in str(caught.value)
    assert "next.sh is not executable" in str(caught.value)


@pytest.mark.parametrize("mode", [0o744, 0o654, 0o645])
def test_any_exec_bit_is_enough(entry, mode) -> None:
    (entry / "next.sh").chmod(mode)
    check_manifest(entry, PHYSIONET)


def test_an_executable_listed_only_as_executable_is_still_required(entry) -> None:
    manifest = Manifest(required=(), executable=("run.sh",))
    with pytest.raises(ManifestError, match=re.escape("entry is missing run.sh")):
        check_manifest(entry, manifest)


def test_a_name_differing_only_in_case_is_pointed_out(entry) -> None:
    (entry / "setup.sh").rename(entry / "Setup.sh")
    with pytest.raises(ManifestError, match=r"found Setup\.sh: names are case-sensitive"):
        check_manifest(entry, PHYSIONET)


def test_files_one_folder_too_deep_are_pointed_out(tmp_path: Path) -> None:
    root = tmp_path / "entry"
    write(root, "my-entry/setup.sh", b"#!/bin/sh\n", 0o755)
    with pytest.raises(ManifestError, match=r"found my-entry/setup\.sh"):
        check_manifest(root, Manifest(required=("setup.sh",)))


def test_required_folders_must_exist_be_folders_and_hold_something(tmp_path: Path) -> None:
    manifest = Manifest(required=("sources/", "AUTHORS"))
    root = tmp_path / "entry"
    write(root, "AUTHORS")
    with pytest.raises(ManifestError, match="entry is missing sources/"):
        check_manifest(root, manifest)
    (root / "sources").mkdir()
    with pytest.raises(ManifestError, match="sources/ is empty"):
        check_manifest(root, manifest)
    write(root, "sources/qrs.c")
    assert check_manifest(root, manifest) == []
    (root / "AUTHORS").unlink()
    (root / "AUTHORS").mkdir()
    with pytest.raises(ManifestError, match="AUTHORS is a folder, but it must be a file"):
        check_manifest(root, manifest)


def test_a_file_where_a_required_folder_belongs_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "sources")
    with pytest.raises(ManifestError, match="sources is a file, but it must be a folder"):
        check_manifest(tmp_path, Manifest(required=("sources/",)))


def test_nested_required_files_are_named_by_their_path(entry) -> None:
    with pytest.raises(
        ManifestError, match=re.escape("entry is missing model/weights.bin: add it as")
    ):
        check_manifest(entry, Manifest(required=("model/weights.bin",)))


def test_a_symlink_is_reported_not_followed(entry, tmp_path) -> None:
    (entry / "LICENSE.txt").unlink()
    (entry / "LICENSE.txt").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ManifestError, match=re.escape("LICENSE.txt is a symbolic link")):
        check_manifest(entry, PHYSIONET)


def test_a_fifo_is_not_a_regular_file(entry) -> None:
    (entry / "answers.txt").unlink()
    os.mkfifo(entry / "answers.txt")
    with pytest.raises(ManifestError, match=re.escape("answers.txt is not a regular file")):
        check_manifest(entry, PHYSIONET)


@pytest.mark.parametrize("bad", ["/etc/passwd", "../setup.sh", "a/../../b", "a\\b", ""])
def test_a_manifest_path_outside_the_entry_is_a_programming_error(bad) -> None:
    with pytest.raises(ValueError, match="relative path inside the entry"):
        Manifest(required=(bad,))


def test_a_bare_string_instead_of_a_tuple_is_caught() -> None:
    with pytest.raises(TypeError, match="tuple of paths"):
        Manifest(required="setup.sh")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, EntryFlags(dry_run=False, closed_source=False)),
        ({"DRYRUN": b""}, EntryFlags(dry_run=True, closed_source=False)),
        ({"CLOSEDSOURCE.txt": b"yes"}, EntryFlags(dry_run=False, closed_source=True)),
        ({"DRYRUN": b"1", "CLOSEDSOURCE.txt": b""}, EntryFlags(dry_run=True, closed_source=True)),
        ({"dryrun": b"", "sub/DRYRUN": b""}, EntryFlags(dry_run=False, closed_source=False)),
    ],
)
def test_entry_flags_read_the_top_level_markers(tmp_path, files, expected) -> None:
    for name, data in files.items():
        write(tmp_path, name, data)
    assert entry_flags(tmp_path) == expected


def test_a_marker_that_is_a_folder_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "DRYRUN").mkdir()
    assert entry_flags(tmp_path) == EntryFlags(dry_run=False, closed_source=False)


def test_an_unpacked_zip_without_exec_bits_fails_the_manifest(tmp_path: Path) -> None:
    items = [
        Item("entry/setup.sh", b"#!/bin/sh\n", mode=0o755),
        Item("entry/next.sh", b"#!/bin/sh\n", mode=0o644),
        Item("entry/AUTHORS.txt", b"me\n"),
        Item("entry/DRYRUN", b""),
    ]
    upload = tmp_path / "entry.zip"
    upload.write_bytes(build_zip(items))
    root = unpack_entry(upload, tmp_path / "unpacked")
    manifest = Manifest(required=("AUTHORS.txt",), executable=("setup.sh", "next.sh"))
    with pytest.raises(
        ManifestError, match=r"next\.sh is not executable: run `chmod \+x next\.sh`"
    ):
        check_manifest(root, manifest)
    assert entry_flags(root).dry_run
