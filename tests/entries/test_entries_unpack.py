"""Safe unpacking of entry archives and folders: hostile inputs are refused, clean ones land."""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from archive_craft import (
    Item,
    build_tar,
    build_zip,
    patch_zip_member,
    rename_zip_member,
    zip_bomb,
    zip_crc,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from proctor.entries import ArchiveLimits, fsafe, unpack_entry, unpack_upload
from proctor.entries import unpack as unpack_module
from proctor.entries.limits import Kind, Member
from proctor.entries.litter import litter_prefix
from proctor.entries.names import MAX_DEPTH, member_parts
from proctor.entries.unpack import ByteMeter
from proctor.errors import ArchiveError, PlatformError

GB = 10**9
MiB = 1 << 20

ENTRY = [
    Item("entry/setup.sh", b"#!/bin/sh\nexit 0\n", mode=0o755),
    Item("entry/next.sh", b'#!/bin/sh\necho "$1,N" >> answers.txt\n', mode=0o755),
    Item("entry/AUTHORS.txt", b"A. Author\n"),
    Item("entry/src/model.py", b"print('hi')\n" * 100),
]


def snapshot(root: Path) -> set[str]:
    """Every path below ``root``, links included, as relative strings."""
    return {str(path.relative_to(root)) for path in root.rglob("*")}


@pytest.fixture
def place(tmp_path: Path) -> Callable[[str, bytes], Path]:
    """Write an upload below ``tmp_path/uploads`` and return its path."""

    def write(name: str, data: bytes) -> Path:
        path = tmp_path / "uploads" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        return path

    return write


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    return tmp_path / "jobs" / "job-1" / "entry"


def assert_refused(
    tmp_path: Path, source: Path, dest: Path, *needles: str, limits: ArchiveLimits | None = None
) -> str:
    """Unpacking must fail with ArchiveError naming ``needles`` and leave no trace anywhere."""
    (tmp_path / "jobs").mkdir(exist_ok=True)
    before = snapshot(tmp_path)
    with pytest.raises(ArchiveError) as caught:
        unpack_entry(source, dest, limits=limits or ArchiveLimits())
    message = str(caught.value)
    for needle in needles:
        assert needle in message
    assert snapshot(tmp_path) == before
    return message


# --- clean entries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build", [build_zip, build_tar, lambda items: build_tar(items, gzipped=False)]
)
def test_an_entry_in_one_top_folder_unpacks_to_that_folder(place, dest, build) -> None:
    root = unpack_entry(place("entry.bin", build(ENTRY)), dest)
    assert root == dest / "entry"
    assert (root / "src" / "model.py").read_bytes() == ENTRY[3].data
    assert sorted(p.name for p in root.iterdir()) == ["AUTHORS.txt", "next.sh", "setup.sh", "src"]


@pytest.mark.parametrize("build", [build_zip, build_tar])
def test_an_entry_without_a_top_folder_unpacks_to_dest_itself(place, dest, build) -> None:
    flat = [Item(item.name.removeprefix("entry/"), item.data, mode=item.mode) for item in ENTRY]
    root = unpack_entry(place("entry.bin", build(flat)), dest)
    assert root == dest
    assert (root / "setup.sh").read_bytes() == ENTRY[0].data


@pytest.mark.parametrize("build", [build_zip, build_tar])
def test_a_top_level_file_beside_the_folder_keeps_dest_as_the_root(place, dest, build) -> None:
    root = unpack_entry(place("e.bin", build([*ENTRY, Item("README", b"x")])), dest)
    assert root == dest


def test_macos_resource_folders_are_skipped_and_do_not_hide_the_top_folder(place, dest) -> None:
    items = [*ENTRY, Item("__MACOSX/entry/._setup.sh", b"\x00\x05\x16\x07")]
    root = unpack_entry(place("entry.zip", build_zip(items)), dest)
    assert root == dest / "entry"
    assert not (dest / "__MACOSX").exists()


@pytest.mark.parametrize("build", [build_zip, build_tar])
@pytest.mark.parametrize(
    ("mode", "expected"),
    [(0o755, 0o755), (0o700, 0o755), (0o4755, 0o755), (0o2711, 0o755), (0o600, 0o644)],
)
def test_exec_bits_are_kept_and_nothing_else_of_the_mode(place, dest, build, mode, expected):
    root = unpack_entry(place("e.bin", build([Item("next.sh", b"#!/bin/sh\n", mode=mode)])), dest)
    assert stat.S_IMODE((root / "next.sh").stat().st_mode) == expected


@pytest.mark.parametrize("build", [build_zip, build_tar])
def test_folders_and_parents_are_created_world_readable(place, dest, build) -> None:
    items = [Item("a", kind="dir", mode=0o700), Item("a/b/c/d.txt", b"d")]
    unpack_entry(place("e.bin", build(items)), dest)
    for folder in (dest / "a", dest / "a" / "b", dest / "a" / "b" / "c"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_an_existing_empty_dest_is_used(place, dest) -> None:
    dest.mkdir(parents=True)
    assert unpack_entry(place("e.zip", build_zip(ENTRY)), dest) == dest / "entry"


def test_a_root_member_and_dot_slash_prefixes_are_accepted(place, dest) -> None:
    items = [Item("./", kind="dir"), Item("./setup.sh", b"x"), Item(".//src/./a.py", b"y")]
    root = unpack_entry(place("e.tgz", build_tar(items)), dest)
    assert (root / "src" / "a.py").read_bytes() == b"y"


# --- hostile archives ------------------------------------------------------------------------

REFUSED = {
    "zip slip": (build_zip([*ENTRY, Item("../x", b"1")]), ["'../x'", "'..'"]),
    "zip slip nested": (build_zip([Item("entry/../../x", b"1")]), ["'entry/../../x'", "'..'"]),
    "tar slip": (build_tar([*ENTRY, Item("entry/../../x", b"1")]), ["'entry/../../x'", "'..'"]),
    "zip absolute": (build_zip([Item("/etc/x", b"1")]), ["'/etc/x'", "absolute"]),
    "tar absolute": (build_tar([Item("/etc/x", b"1")]), ["'/etc/x'", "absolute"]),
    "drive letter": (build_zip([Item("C:/x", b"1")]), ["'C:/x'", "drive letter"]),
    "drive relative": (build_zip([Item("c:x", b"1")]), ["'c:x'", "drive letter"]),
    "backslash": (build_zip([Item("entry\\..\\x", b"1")]), ["backslash", "'/'"]),
    "zip symlink to /etc/passwd": (
        build_zip([*ENTRY, Item("entry/data", kind="symlink", target="/etc/passwd")]),
        ["'entry/data'", "symbolic link", "/etc/passwd"],
    ),
    "zip symlink upwards": (
        build_zip([Item("entry/up", kind="symlink", target="../../x")]),
        ["'entry/up'", "symbolic link", "../../x"],
    ),
    "tar symlink to /etc/passwd": (
        build_tar([*ENTRY, Item("entry/data", kind="symlink", target="/etc/passwd")]),
        ["'entry/data'", "symbolic link", "/etc/passwd"],
    ),
    "tar symlink upwards": (
        build_tar([Item("entry/up", kind="symlink", target="../../x")]),
        ["'entry/up'", "symbolic link", "../../x"],
    ),
    "tar hard link": (
        build_tar([*ENTRY, Item("entry/copy", kind="hardlink", target="entry/setup.sh")]),
        ["'entry/copy'", "hard link"],
    ),
    "tar character device": (build_tar([Item("null", kind="chardev")]), ["'null'", "device"]),
    "tar block device": (build_tar([Item("sda", kind="blockdev")]), ["'sda'", "block device"]),
    "tar fifo": (build_tar([*ENTRY, Item("entry/pipe", kind="fifo")]), ["'entry/pipe'", "FIFO"]),
    "zip character device": (build_zip([Item("null", kind="chardev")]), ["'null'", "device"]),
    "zip fifo": (build_zip([Item("pipe", kind="fifo")]), ["'pipe'", "FIFO"]),
    "zip duplicate": (build_zip([*ENTRY, ENTRY[0]]), ["'entry/setup.sh'", "more than once"]),
    "tar duplicate": (build_tar([*ENTRY, ENTRY[1]]), ["'entry/next.sh'", "more than once"]),
    "duplicate after normalising": (
        build_zip([Item("a/b", b"1"), Item("a//./b", b"2")]),
        ["'a//./b'", "more than once", "'a/b'"],
    ),
    "duplicate folder": (
        build_zip([Item("a", kind="dir"), Item("a/", kind="dir"), Item("b", b"1")]),
        ["'a/'", "more than once"],
    ),
    "file used as folder": (
        build_zip([Item("a", b"1"), Item("a/b", b"2")]),
        ["'a/b'", "'a'", "folder"],
    ),
    "folder used as file": (
        build_tar([Item("a/b", b"2"), Item("a", b"1")]),
        ["'a'", "as a folder"],
    ),
    "newline in name": (build_tar([Item("a\nb", b"1")]), ["'a\\nb'", "control character"]),
    "escape in name": (build_zip([Item("a\x1b[2Jb", b"1")]), ["control character"]),
    "too deep": (
        build_zip([Item("d/" * (MAX_DEPTH + 1) + "x", b"1")]),
        ["'d/d/", "deep"],
    ),
    "part too long": (build_tar([Item("x" * 300, b"1")]), ["longer than 255 bytes"]),
    "empty archive": (build_zip([]), ["holds no files"]),
    "only folders": (build_tar([Item("entry", kind="dir")]), ["holds no files"]),
    "zip folder with data": (
        build_zip([Item("a/", b"payload"), Item("b", b"1")]),
        ["'a/'", "holds data"],
    ),
}


@pytest.mark.parametrize(("data", "needles"), REFUSED.values(), ids=REFUSED.keys())
def test_hostile_archives_are_refused_naming_the_member(
    tmp_path, place, dest, data, needles
) -> None:
    assert_refused(tmp_path, place("upload.bin", data), dest, *needles)


def test_a_nul_in_a_zip_name_is_refused_although_zipfile_would_cut_the_name(
    tmp_path, place, dest
) -> None:
    data = rename_zip_member(
        build_zip([*ENTRY, Item("entry/a_b", b"1")]), "entry/a_b", "entry/a\0b"
    )
    assert_refused(tmp_path, place("e.zip", data), dest, "'entry/a\\x00b'", "control character")


def test_an_absolute_member_is_never_written_at_its_absolute_path(tmp_path, place, dest) -> None:
    target = tmp_path / "outside" / "planted"
    for data in (build_zip([Item(str(target), b"1")]), build_tar([Item(str(target), b"1")])):
        assert_refused(tmp_path, place("e.bin", data), dest, repr(str(target)), "absolute")
        assert not target.exists()


def test_an_encrypted_zip_member_is_refused(tmp_path, place, dest) -> None:
    data = patch_zip_member(build_zip([*ENTRY, Item("entry/key", b"x")]), "entry/key", flag_bits=1)
    assert_refused(tmp_path, place("e.zip", data), dest, "'entry/key'", "encrypted", "password")


def test_an_unknown_zip_compression_method_is_refused(tmp_path, place, dest) -> None:
    data = patch_zip_member(build_zip([*ENTRY, Item("entry/x", b"x")]), "entry/x", method=99)
    assert_refused(tmp_path, place("e.zip", data), dest, "'entry/x'", "compression method 99")


def test_an_unsupported_tar_member_type_is_refused(tmp_path, place, dest) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("entry/volume")
        info.type = b"V"
        archive.addfile(info)
    assert_refused(tmp_path, place("e.tar", buffer.getvalue()), dest, "'entry/volume'", "type")


@pytest.mark.parametrize(
    ("name", "needle"),
    [("a/\udcffb", "not valid UTF-8"), ("ab/" * 400 + "x", "longer than 1024 bytes")],
)
def test_names_that_no_file_system_should_see_are_refused(name, needle) -> None:
    with pytest.raises(ArchiveError, match=needle):
        member_parts(name)


def test_a_folder_that_changes_between_the_passes_is_refused(tmp_path, monkeypatch) -> None:
    source, dest = tmp_path / "entry", tmp_path / "out"
    source.mkdir()
    (source / "a.txt").write_bytes(b"short")
    real = unpack_module._take_inventory

    def inventory_then_grow(*args: object, **kwargs: object) -> object:
        inventory = real(*args, **kwargs)  # type: ignore[arg-type]
        (source / "a.txt").write_bytes(b"much longer now")
        return inventory

    monkeypatch.setattr(unpack_module, "_take_inventory", inventory_then_grow)
    assert_refused(tmp_path, source, dest, "changed while it was being unpacked", "'a.txt'")


def test_an_honest_one_gigabyte_zip_bomb_is_refused_from_its_headers(tmp_path, place, dest) -> None:
    source = place("bomb.zip", zip_bomb(GB, name="entry/weights.bin"))
    assert_refused(tmp_path, source, dest, "'entry/weights.bin'", "limit for one file")
    roomy = ArchiveLimits(max_member_bytes=2 * GB, max_total_bytes=2 * GB)
    assert_refused(tmp_path, source, dest, "'entry/weights.bin'", "zip bomb", limits=roomy)


def test_a_zip_bomb_whose_headers_understate_its_size_is_refused(tmp_path, place, dest) -> None:
    bomb = zip_bomb(GB, name="entry/weights.bin")
    liar = patch_zip_member(bomb, "entry/weights.bin", size=1024)
    assert zipfile.ZipFile(io.BytesIO(liar)).getinfo("entry/weights.bin").file_size == 1024
    assert_refused(tmp_path, place("liar.zip", liar), dest, "'entry/weights.bin'", "forged")


def test_a_lying_bomb_that_also_forges_its_compressed_size_and_crc_writes_no_more_than_declared(
    tmp_path, place, dest
) -> None:
    bomb = zip_bomb(64 * MiB, name="weights.bin")
    liar = patch_zip_member(bomb, "weights.bin", size=1024, packed=2048, crc=0)
    assert_refused(tmp_path, place("liar.zip", liar), dest, "'weights.bin'", "corrupt")


def test_a_member_over_the_compression_ratio_is_refused(tmp_path, place, dest) -> None:
    source = place("ratio.zip", zip_bomb(64 * MiB, name="entry/zeros.bin"))
    assert_refused(tmp_path, source, dest, "'entry/zeros.bin'", "200 times", "zip bomb")


def test_an_archive_over_the_ratio_in_total_is_refused_though_each_member_is_small(
    tmp_path, place, dest
) -> None:
    items = [Item(f"entry/part{index:02}.bin", bytes(512 * 1024)) for index in range(40)]
    message = assert_refused(tmp_path, place("many.zip", build_zip(items)), dest, "zip bomb")
    assert "at member 'entry/part" in message


def test_a_gzip_tar_over_the_ratio_is_refused(tmp_path, place, dest) -> None:
    data = build_tar([Item("entry/zeros.bin", bytes(16 * MiB))])
    assert_refused(tmp_path, place("e.tgz", data), dest, "'entry/zeros.bin'", "zip bomb")


def test_small_files_that_compress_well_are_not_taken_for_bombs(place, dest) -> None:
    items = [Item(f"blank{index}.txt", b" " * 100_000) for index in range(5)]
    assert unpack_entry(place("e.zip", build_zip(items)), dest) == dest


@pytest.mark.parametrize("build", [build_zip, build_tar])
@pytest.mark.parametrize(
    ("limits", "needles"),
    [
        (ArchiveLimits(max_files=5), ["over 5 files and folders"]),
        (ArchiveLimits(max_total_bytes=2500), ["'entry/f2'", "over 2.4 KiB"]),
        (ArchiveLimits(max_member_bytes=999), ["'entry/f0'", "limit for one file"]),
    ],
    ids=["files", "total", "member"],
)
def test_caps_on_count_and_size_are_enforced(tmp_path, place, dest, build, limits, needles):
    items = [Item(f"entry/f{index}", os.urandom(1000)) for index in range(8)]
    assert_refused(tmp_path, place("e.bin", build(items)), dest, *needles, limits=limits)


def test_a_truncated_zip_is_refused_naming_the_archive(tmp_path, place, dest) -> None:
    data = build_zip(ENTRY)
    assert_refused(tmp_path, place("entry.zip", data[: len(data) - 30]), dest, "entry.zip", "trunc")


def test_a_truncated_tar_gz_is_refused_naming_the_member(tmp_path, place, dest) -> None:
    data = build_tar([*ENTRY, Item("entry/big.bin", os.urandom(200_000))])
    source = place("entry.tar.gz", data[: len(data) // 2])
    assert_refused(tmp_path, source, dest, "'entry/big.bin'", "truncated")


def test_a_truncated_plain_tar_is_refused(tmp_path, place, dest) -> None:
    data = build_tar([*ENTRY, Item("entry/big.bin", os.urandom(200_000))], gzipped=False)
    assert_refused(tmp_path, place("entry.tar", data[:100_000]), dest, "'entry/big.bin'")


def test_a_tar_gz_with_a_bad_gzip_crc_is_refused(tmp_path, place, dest) -> None:
    data = bytearray(build_tar(ENTRY))
    data[-8] ^= 0xFF  # the gzip trailer: CRC-32, then the length
    assert_refused(tmp_path, place("entry.tgz", bytes(data)), dest, "entry.tgz", "CRC")


def test_a_tar_gz_with_a_long_tail_after_the_tar_data_is_refused(tmp_path, place, dest) -> None:
    tail = gzip.compress(build_tar(ENTRY, gzipped=False) + bytes(20 * MiB), mtime=0)
    assert_refused(tmp_path, place("entry.tgz", tail), dest, "after the end of the tar data")


def test_a_bad_crc_after_good_members_leaves_nothing_behind(tmp_path, place, dest) -> None:
    data = build_zip([*ENTRY, Item("entry/last.txt", b"hello")])
    forged = patch_zip_member(data, "entry/last.txt", crc=zip_crc(data, "entry/last.txt") ^ 1)
    assert_refused(tmp_path, place("e.zip", forged), dest, "'entry/last.txt'", "CRC")


def test_a_failure_in_an_existing_dest_empties_it_but_keeps_it(tmp_path, place, dest) -> None:
    dest.mkdir(parents=True)
    data = build_zip([*ENTRY, Item("entry/last.txt", b"hello")])
    forged = patch_zip_member(data, "entry/last.txt", crc=0)
    with pytest.raises(ArchiveError, match=r"entry/last\.txt"):
        unpack_entry(place("e.zip", forged), dest)
    assert dest.is_dir()
    assert list(dest.iterdir()) == []


def test_a_corrupt_tar_header_in_the_middle_is_not_taken_for_the_end(tmp_path, place, dest) -> None:
    data = bytearray(build_tar([Item("entry/a", b"1"), Item("entry/b", b"2")], gzipped=False))
    data[512 * 2 + 148 : 512 * 2 + 156] = b"0000000\0"  # second header's checksum
    source = place("e.tar", bytes(data))
    assert_refused(tmp_path, source, dest, "after member 'entry/a'", "corrupt")


def test_a_huge_pax_header_is_refused_before_it_is_read_into_memory(tmp_path, place, dest):
    data = build_tar([Item("entry/" + "n/" * 10 + "x" * 200, b"1")], gzipped=False)
    assert b"path=" in data  # the long name went into a pax header
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("proctor.entries.tarsource.MAX_META_BYTES", 100)
        assert_refused(tmp_path, place("e.tar", data), dest, "metadata header")


def test_data_that_is_no_archive_is_refused_naming_the_upload(tmp_path, place, dest) -> None:
    assert_refused(tmp_path, place("entry.zip", b"not an archive " * 100), dest, "entry.zip")


# --- the counting guard and the link-proof writer --------------------------------------------


def test_the_meter_stops_a_stream_longer_than_its_declared_size() -> None:
    member = Member("entry/x", ("entry", "x"), Kind.FILE, size=10)
    with pytest.raises(ArchiveError, match=r"'entry/x' holds more data than the 10 bytes"):
        b"".join(ByteMeter(10**6).chunks(member, io.BytesIO(bytes(11))))


def test_the_meter_stops_the_total_across_members() -> None:
    meter = ByteMeter(15)
    first = Member("a", ("a",), Kind.FILE, size=10)
    second = Member("b", ("b",), Kind.FILE, size=10)
    assert b"".join(meter.chunks(first, io.BytesIO(bytes(10)))) == bytes(10)
    with pytest.raises(ArchiveError, match="at member 'b'"):
        b"".join(meter.chunks(second, io.BytesIO(bytes(10))))


def test_the_writer_refuses_a_link_planted_as_a_folder_inside_dest(tmp_path: Path) -> None:
    outside, dest = tmp_path / "outside", tmp_path / "dest"
    outside.mkdir()
    dest.mkdir()
    (dest / "entry").symlink_to(outside)
    fd = os.open(dest, fsafe.DIR_FLAGS)
    try:
        with pytest.raises(OSError):
            fsafe.write_file(fd, ("entry", "x"), [b"1"], executable=False)
        with pytest.raises(OSError):
            fsafe.make_dir(fd, ("entry", "sub"))
    finally:
        os.close(fd)
    assert list(outside.iterdir()) == []


def test_the_writer_refuses_a_link_planted_as_the_file_itself(tmp_path: Path) -> None:
    victim, dest = tmp_path / "victim", tmp_path / "dest"
    victim.write_bytes(b"keep")
    dest.mkdir()
    (dest / "x").symlink_to(victim)
    fd = os.open(dest, fsafe.DIR_FLAGS)
    try:
        with pytest.raises(FileExistsError):
            fsafe.write_file(fd, ("x",), [b"overwritten"], executable=False)
    finally:
        os.close(fd)
    assert victim.read_bytes() == b"keep"


def test_a_dest_that_is_a_link_is_refused(tmp_path, place) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "dest").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        unpack_entry(place("e.zip", build_zip(ENTRY)), tmp_path / "dest")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_dest_that_is_not_empty_is_refused_and_left_alone(place, dest) -> None:
    dest.mkdir(parents=True)
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        unpack_entry(place("e.zip", build_zip(ENTRY)), dest)
    assert (dest / "keep.txt").read_text() == "mine"


def test_write_failures_on_the_host_are_platform_errors(tmp_path, place, dest) -> None:
    dest.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    source = place("e.zip", build_zip(ENTRY))
    real_make_dir = fsafe.make_dir

    def plant_then_make(base_fd: int, parts: tuple[str, ...]) -> None:
        os.symlink(tmp_path / "outside", "src", dir_fd=base_fd)  # someone else's surprise
        real_make_dir(base_fd, parts)

    items = [Item("src", kind="dir"), Item("src/a.py", b"1")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fsafe, "make_dir", plant_then_make)
        with pytest.raises(PlatformError, match="'src/'"):
            unpack_entry(place("e2.zip", build_zip(items)), dest)
    assert list((tmp_path / "outside").iterdir()) == []
    assert list(dest.iterdir()) == []
    assert source.exists()


# --- folder sources --------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "entry"
    (root / "src").mkdir(parents=True)
    (root / "setup.sh").write_bytes(b"#!/bin/sh\n")
    (root / "setup.sh").chmod(0o750)
    (root / "src" / "model.py").write_bytes(b"x = 1\n")
    (root / "src" / "model.py").chmod(0o640)
    (root / "empty").mkdir()
    return root


def test_a_folder_is_copied_with_exec_bits_and_empty_folders(folder, dest) -> None:
    root = unpack_entry(folder, dest)
    assert root == dest
    assert (root / "src" / "model.py").read_bytes() == b"x = 1\n"
    assert stat.S_IMODE((root / "setup.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "src" / "model.py").stat().st_mode) == 0o644
    assert (root / "empty").is_dir()


def test_a_folder_with_one_subfolder_returns_that_subfolder(folder, dest) -> None:
    assert unpack_entry(folder.parent, dest) == dest / "entry"


@pytest.mark.parametrize("target", ["/etc/passwd", "../../x", "setup.sh"])
def test_a_folder_holding_a_symlink_is_refused(tmp_path, folder, dest, target) -> None:
    (folder / "src" / "link").symlink_to(target)
    assert_refused(tmp_path, folder, dest, "'src/link'", "symbolic link")


def test_a_folder_holding_a_symlinked_folder_is_refused(tmp_path, folder, dest) -> None:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key").write_text("k")
    (folder / "data").symlink_to(tmp_path / "secret")
    assert_refused(tmp_path, folder, dest, "'data'", "symbolic link")


def test_a_folder_holding_a_hard_link_is_refused(tmp_path, folder, dest) -> None:
    os.link(folder / "setup.sh", folder / "src" / "again.sh")
    assert_refused(tmp_path, folder, dest, "'setup.sh'", "hard link")


def test_a_folder_holding_a_fifo_is_refused_without_hanging(tmp_path, folder, dest) -> None:
    os.mkfifo(folder / "src" / "pipe")
    assert_refused(tmp_path, folder, dest, "'src/pipe'", "FIFO")


def test_a_folder_over_the_caps_is_refused(tmp_path, folder, dest) -> None:
    assert_refused(tmp_path, folder, dest, "over 3 files", limits=ArchiveLimits(max_files=3))


def test_a_dest_inside_the_folder_is_refused(folder) -> None:
    with pytest.raises(ValueError, match="lies inside it"):
        unpack_entry(folder, folder / "copy")


# --- properties ------------------------------------------------------------------------------

SAFE_PART = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cc", "Cs"), exclude_characters="/\\"
    ),
    min_size=1,
    max_size=12,
).filter(lambda part: part not in (".", "..") and not re.match("[A-Za-z]:", part))
SAFE_PATHS = st.lists(st.lists(SAFE_PART, min_size=1, max_size=4), min_size=1, max_size=8)
ANY_NAMES = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
    min_size=1,
    max_size=6,
)


def _files_only(paths: list[list[str]]) -> list[tuple[str, ...]]:
    """Drop duplicates, litter (left out by design) and paths another uses as a folder."""
    unique = {tuple(path) for path in paths if litter_prefix(tuple(path), is_dir=False) is None}
    return sorted(p for p in unique if not any(q[: len(p)] == p and q != p for q in unique))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=SAFE_PATHS, tar=st.booleans())
def test_safe_member_names_always_extract_inside_dest(paths, tar) -> None:
    files = _files_only(paths)
    assume(files)  # an upload of litter only holds no files, and is refused
    items = [Item("/".join(parts), "/".join(parts).encode()) for parts in files]
    with tempfile.TemporaryDirectory() as scratch:
        source, dest = Path(scratch) / "upload", Path(scratch) / "out" / "dest"
        source.write_bytes(build_tar(items) if tar else build_zip(items))
        unpack_entry(source, dest)
        written = sorted(p for p in dest.rglob("*") if p.is_file())
        assert len(written) == len(files)
        for path in written:
            assert path.resolve().is_relative_to(dest.resolve())
            assert path.read_bytes() == str(path.relative_to(dest)).encode()
        for path in Path(scratch).rglob("*"):
            assert path in (source, dest.parent) or path.is_relative_to(dest)


@settings(max_examples=60, deadline=None)
@given(names=ANY_NAMES)
def test_any_member_names_are_either_refused_or_extracted_inside_dest(names) -> None:
    items = [Item(name, b"1") for name in names]
    with tempfile.TemporaryDirectory() as scratch:
        source, dest = Path(scratch) / "upload", Path(scratch) / "out" / "dest"
        source.write_bytes(build_zip(items))
        try:
            unpack_entry(source, dest)
        except ArchiveError:
            assert snapshot(Path(scratch)) == {"upload"}
            return
        for path in Path(scratch).rglob("*"):
            assert path in (source, dest.parent) or path.is_relative_to(dest)


def test_the_hand_written_bomb_is_a_valid_zip_of_zeros() -> None:
    data = zip_bomb(3 * MiB + 12345, name="z")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        assert archive.read("z") == bytes(3 * MiB + 12345)
    assert len(data) < 10_000


# --- operating-system and version-control litter ---------------------------------------------

LITTER = [
    Item("entry/.gitignore", b"*.pyc\n"),
    Item("entry/src/.DS_Store", b"\x00\x00\x00\x01Bud1"),
    Item("entry/src/._model.py", b"\x00\x05\x16\x07"),
    Item("entry/Thumbs.db", b"\xd0\xcf"),
    Item("entry/src/desktop.ini", b"[.ShellClassInfo]\n"),
    Item("entry/.git/HEAD", b"ref: refs/heads/main\n"),
    Item("entry/.git/objects/ab/cdef", b"x" * 10),
    Item("__MACOSX/entry/._setup.sh", b"\x00\x05\x16\x07"),
]


@pytest.mark.parametrize("build", [build_zip, build_tar])
def test_os_and_vcs_litter_is_left_out_anywhere_and_listed(place, dest, build) -> None:
    kept = Item("entry/.env", b"SEED=1\n")  # a dot file an entry may read stays
    unpacked = unpack_upload(place("e.bin", build([*ENTRY, *LITTER, kept])), dest)
    assert unpacked.root == dest / "entry"
    assert snapshot(dest) == {"entry", *(i.name for i in ENTRY), "entry/src", kept.name}
    assert set(unpacked.ignored) == {
        "entry/.gitignore",
        "entry/src/.DS_Store",
        "entry/src/._model.py",
        "entry/Thumbs.db",
        "entry/src/desktop.ini",
        "entry/.git/",
        "__MACOSX/",
    }


def test_a_folder_entry_leaves_out_its_git_store_without_reading_it(folder, dest) -> None:
    (folder / ".git" / "objects").mkdir(parents=True)
    (folder / ".git" / "objects" / "link").symlink_to("/etc/passwd")  # refused anywhere else
    (folder / "src" / ".gitignore").write_text("*.pyc\n")
    unpacked = unpack_upload(folder, dest)
    assert unpacked.ignored == (".git/", "src/.gitignore")
    assert not (dest / ".git").exists() and not (dest / "src" / ".gitignore").exists()
    assert (dest / "src" / "model.py").is_file()
