"""Entry images imported from archives: formats, whiteouts, links, reuse by digest, hostile layers.

Every image is made here with ``tarfile`` (see ``image_craft``); no registry, no daemon.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from image_craft import Image, Layer, docker_archive, layer_tar, member, oci_archive

from proctor.environments.entry_images import ImageLimits, find_image, import_archive
from proctor.environments.store import EnvironmentStore
from proctor.errors import EntryImageError
from proctor.pipeline.image_build import build_lock
from proctor.services.local.environments import prune_environments
from proctor.settings import Settings

LIMITS = ImageLimits()


@pytest.fixture
def store(tmp_path: Path) -> EnvironmentStore:
    return EnvironmentStore(tmp_path / "store")


def one_layer(*members: tuple[tarfile.TarInfo, bytes], gzipped: bool = False) -> Image:
    return Image([Layer.of(layer_tar(members), gzipped=gzipped)])


def imported(image: Image, tmp_path: Path, store: EnvironmentStore, **kw: object) -> Path:
    archive = docker_archive(image, tmp_path / "image.tar")
    limits = kw.pop("limits", LIMITS)
    return import_archive(archive, store, limits, pack=False).rootfs  # type: ignore[arg-type]


BASE = [
    member("usr"),
    member("usr/bin"),
    member("usr/bin/tool", b"#!/bin/sh\necho tool\n", mode=0o755),
    member("etc"),
    member("etc/os-release", b"ID=toy\n"),
    member("app"),
    member("app/old.txt", b"old"),
    member("app/keep.txt", b"keep"),
    member("var/cache/junk", b"junk"),
]


def test_layers_apply_in_order_with_whiteouts_and_links(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    upper = [
        member("app/.wh.old.txt", b""),
        member("var/cache/.wh..wh..opq", b""),
        member("var/cache/fresh", b"fresh"),
        member("bin", type=tarfile.SYMTYPE, linkname="usr/bin"),
        member("usr/bin/same", type=tarfile.LNKTYPE, linkname="usr/bin/tool"),
        member("etc/passwd", type=tarfile.SYMTYPE, linkname="/etc/shadow"),
    ]
    layers = [Layer.of(layer_tar(BASE)), Layer.of(layer_tar(upper), gzipped=True)]
    env = ["PATH=/opt/x:/usr/bin", "LANG=C.UTF-8"]
    image = Image(layers, env=env, workdir="/app", user="root")
    archive = docker_archive(image, tmp_path / "image.tar")
    entry = import_archive(archive, store, LIMITS, pack=False)
    root = entry.rootfs
    assert entry.digest == image.digest
    assert not (root / "app/old.txt").exists() and (root / "app/keep.txt").read_text() == "keep"
    assert sorted(os.listdir(root / "var/cache")) == ["fresh"]
    assert os.readlink(root / "bin") == "usr/bin"
    assert (root / "usr/bin/same").stat().st_ino == (root / "usr/bin/tool").stat().st_ino
    # the sandbox binds its own passwd over the image's: a link there becomes a plain file
    assert stat.S_ISREG((root / "etc/passwd").lstat().st_mode)
    assert entry.config.env == {"PATH": "/opt/x:/usr/bin", "LANG": "C.UTF-8"}
    assert (entry.config.workdir, entry.config.user) == ("/app", "root")


def test_oci_and_gzipped_archives_give_the_same_image(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    image = one_layer(*BASE, gzipped=True)
    oci = import_archive(
        oci_archive(image, tmp_path / "oci.tar", base_name="debian:bookworm"),
        store, LIMITS, pack=False,
    )  # fmt: skip
    assert oci.digest == image.digest and oci.base == "debian:bookworm"
    other = EnvironmentStore(tmp_path / "other")
    docker = import_archive(
        docker_archive(image, tmp_path / "image.tar.gz", gzipped=True), other, LIMITS, pack=False
    )
    assert docker.digest == oci.digest
    assert (docker.rootfs / "usr/bin/tool").read_text() == (oci.rootfs / "usr/bin/tool").read_text()


def test_the_same_image_is_reused_from_the_store(tmp_path: Path, store: EnvironmentStore) -> None:
    image = one_layer(*BASE)
    first = import_archive(docker_archive(image, tmp_path / "a.tar"), store, LIMITS, pack=False)
    (first.rootfs / "marker").write_text("first import")
    again = import_archive(docker_archive(image, tmp_path / "b.tar"), store, LIMITS, pack=False)
    assert again.folder == first.folder and (again.rootfs / "marker").is_file()
    assert find_image(store, image.digest) == again


def test_prune_removes_entry_images(tmp_path: Path) -> None:
    settings = Settings(work_root=tmp_path / "work", env_root=tmp_path / "envs")
    store = EnvironmentStore(settings.environments)
    image = one_layer(*BASE)
    stored = import_archive(docker_archive(image, tmp_path / "a.tar"), store, LIMITS, pack=False)
    assert prune_environments(settings, keep=set()) == [stored.folder]
    assert find_image(store, image.digest) is None and not stored.folder.exists()


def test_prune_lists_then_removes_built_entry_images_but_not_a_build_under_way(
    tmp_path: Path,
) -> None:
    settings = Settings(work_root=tmp_path / "work", env_root=tmp_path / "envs")
    builds = settings.environments / "entry-builds"
    done, running = builds / ("a" * 64), "b" * 64
    (done / "image.tar").parent.mkdir(parents=True)
    (done / "image.tar").write_bytes(b"tar")
    (builds / "bases").mkdir()
    (builds / f"{done.name}.lock").touch()
    partial = builds / f"{running}.partial-x1"
    partial.mkdir()
    with build_lock(builds, running):
        listed = prune_environments(settings, keep=set(), dry_run=True)
        assert listed == [done, builds / f"{done.name}.lock"]
        assert done.is_dir()  # a dry run removes nothing
        assert prune_environments(settings, keep=set()) == listed
    assert not done.exists() and partial.is_dir() and (builds / "bases").is_dir()
    assert prune_environments(settings, keep=set()) == [
        builds / "bases",
        builds / f"{running}.lock",
        partial,
    ]
    assert list(builds.iterdir()) == []


def test_modes_are_normalised_and_capabilities_dropped(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    suid = member("usr/bin/su", b"\x7fELF", mode=0o4755)
    sgid = member("usr/bin/wall", b"\x7fELF", mode=0o2755)
    private = member("root/.secret", b"x", mode=0o600)
    capped = member("usr/bin/ping", b"\x7fELF", mode=0o755)
    capped[0].pax_headers = {"SCHILY.xattr.security.capability": "\x01\x00\x00\x02 \x00"}
    root = imported(one_layer(*BASE, suid, sgid, private, capped), tmp_path, store)
    for name in ("usr/bin/su", "usr/bin/wall", "usr/bin/ping"):
        assert stat.S_IMODE((root / name).stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "root/.secret").stat().st_mode) == 0o644
    assert os.listxattr(root / "usr/bin/ping") == []


def test_packages_are_read_back_without_running_the_image(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    status = (
        b"Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\n\n"
        b"Package: gone\nStatus: deinstall ok config-files\nVersion: 1\n\n"
        b"Package: bash\nStatus: install ok installed\nVersion: 5.2.15-2\n"
    )
    meta = b"Metadata-Version: 2.1\nName: numpy\nVersion: 1.26.4\n\nlong description\n"
    site = "usr/local/lib/python3.10/site-packages"
    image = one_layer(
        *BASE,
        member("var/lib/dpkg/status", status),
        member(f"{site}/numpy-1.26.4.dist-info/METADATA", meta),
    )
    archive = docker_archive(image, tmp_path / "image.tar")
    entry = import_archive(archive, store, LIMITS, pack=False)
    assert entry.packages == {"bash": "5.2.15-2", "libc6": "2.36-9"}
    assert entry.python == {"numpy": "1.26.4"}


def test_a_package_database_linked_out_of_the_root_reads_nothing_of_the_host(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    host = tmp_path / "host-status"
    host.write_text("Package: host-secret\nStatus: install ok installed\nVersion: 1\n")
    link = member("var/lib/dpkg/status", type=tarfile.SYMTYPE, linkname=str(host))
    entry = import_archive(
        docker_archive(one_layer(*BASE, link), tmp_path / "i.tar"), store, LIMITS, pack=False
    )
    assert entry.packages == {}


# --- the hostile suite: each is refused, or contained below the image's root -------------


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([member("../escape", b"x")], r"'\.\.' component"),
        ([member("usr/../../escape", b"x")], r"'\.\.' component"),
        ([member("usr/x", type=tarfile.LNKTYPE, linkname="../../etc/passwd")], r"'\.\.'"),
        ([member("usr/x", type=tarfile.LNKTYPE, linkname="/etc/shadow")], r"not a file of the"),
        ([member("dev/null", type=tarfile.CHRTYPE, devmajor=1, devminor=3)], "character device"),
        ([member("dev/sda", type=tarfile.BLKTYPE, devmajor=8, devminor=0)], "block device"),
        ([member("run/fifo", type=tarfile.FIFOTYPE)], "FIFO"),
        ([member("usr/.wh..", b"")], "whiteout"),
        ([member(".wh.", b"")], "whiteout"),
    ],
)
def test_hostile_members_are_refused(
    tmp_path: Path, store: EnvironmentStore, members: list[tuple[tarfile.TarInfo, bytes]],
    message: str,
) -> None:  # fmt: skip
    with pytest.raises(EntryImageError, match=message):
        imported(one_layer(*BASE, *members), tmp_path, store)
    assert not (tmp_path / "escape").exists()
    assert list((store.root / "entry-images").iterdir()) == []  # nothing half-imported is kept


def test_links_out_of_the_root_are_kept_inside_it(tmp_path: Path, store: EnvironmentStore) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    first = [
        *BASE,
        member("escape", type=tarfile.SYMTYPE, linkname=str(outside)),
        member("up", type=tarfile.SYMTYPE, linkname="../../../../../../.."),
    ]
    second = [member("escape/planted", b"through the link"), member("up/tmp/x", b"y")]
    image = Image([Layer.of(layer_tar(first)), Layer.of(layer_tar(second))])
    root = imported(image, tmp_path, store)
    assert list(outside.iterdir()) == []
    assert (root / str(outside).lstrip("/") / "planted").read_text() == "through the link"
    assert (root / "tmp/x").read_text() == "y"
    assert os.readlink(root / "escape") == str(outside)


@pytest.mark.parametrize("folder", ["usr", "etc", "opt"])
def test_a_bound_folder_linked_to_the_host_becomes_a_plain_folder(
    tmp_path: Path, store: EnvironmentStore, folder: str
) -> None:
    host = tmp_path / "host-folder"
    host.mkdir()
    (host / "secret").write_text("host")
    layers = [
        Layer.of(layer_tar([m for m in BASE if not m[0].name.startswith(folder)])),
        Layer.of(layer_tar([
            member(f".wh.{folder}", b""),
            member(folder, type=tarfile.SYMTYPE, linkname=str(host)),
        ])),
    ]  # fmt: skip
    root = imported(Image(layers), tmp_path, store)
    assert (root / folder).is_dir() and not (root / folder).is_symlink()
    assert not (root / folder / "secret").exists()


def test_a_whiteout_of_the_root_only_empties_lower_layers(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    sibling = tmp_path / "sibling.txt"
    sibling.write_text("host file")
    upper = [member(".wh..wh..opq", b""), member("usr"), member("usr/new", b"n")]
    image = Image([Layer.of(layer_tar(BASE)), Layer.of(layer_tar(upper))])
    root = imported(image, tmp_path, store)
    assert sorted(os.listdir(root)) == ["etc", "usr"]  # etc: made for the sandbox's binds
    assert os.listdir(root / "usr") == ["new"]
    assert sibling.read_text() == "host file"


def gzip_bomb(size: int) -> bytes:
    """A gzip layer holding one file of ``size`` zero bytes, from concatenated gzip members."""
    info = tarfile.TarInfo("usr/bomb")
    info.size = size
    chunk = gzip.compress(bytes(1 << 20), compresslevel=9, mtime=0)
    parts = [gzip.compress(info.tobuf(format=tarfile.PAX_FORMAT), mtime=0)]
    parts += [chunk] * (size >> 20)
    parts.append(gzip.compress(bytes(1024), mtime=0))
    return b"".join(parts)


def test_a_gzip_bomb_layer_is_refused(tmp_path: Path, store: EnvironmentStore) -> None:
    bomb = gzip_bomb(2 << 30)
    assert len(bomb) < 4 << 20
    image = Image([Layer.of(layer_tar(BASE)), Layer(bomb, "sha256:" + "0" * 64)])
    with pytest.raises(EntryImageError, match="decompression bomb"):
        imported(image, tmp_path, store)


def test_too_many_tiny_files_are_refused(tmp_path: Path, store: EnvironmentStore) -> None:
    tiny = [member(f"usr/many/{i:06d}", b"") for i in range(100_000)]
    with pytest.raises(EntryImageError, match="more than 100000 files"):
        imported(one_layer(*BASE, *tiny), tmp_path, store)


def test_a_20_gb_file_is_refused_from_its_header(tmp_path: Path, store: EnvironmentStore) -> None:
    info = tarfile.TarInfo("usr/huge")
    info.size = 20 << 30
    header = info.tobuf(format=tarfile.PAX_FORMAT)
    layer = Layer(gzip.compress(header + bytes(1 << 20), mtime=0), "sha256:" + "0" * 64)
    with pytest.raises(EntryImageError, match=r"over its 4\.0 GiB limit"):
        imported(Image([Layer.of(layer_tar(BASE)), layer]), tmp_path, store)


def test_a_sparse_file_is_refused(tmp_path: Path, store: EnvironmentStore) -> None:
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as out:
        out.truncate(20 << 30)
    raw = tmp_path / "layer.tar"
    done = os.system(f"tar --sparse -cf {raw} -C {tmp_path} sparse")
    assert done == 0
    image = Image([Layer.of(layer_tar(BASE)), Layer.of(raw.read_bytes())])
    with pytest.raises(EntryImageError, match="sparse"):
        imported(image, tmp_path, store)


def test_layers_must_match_their_diff_ids(tmp_path: Path, store: EnvironmentStore) -> None:
    image = one_layer(*BASE)
    image.extra_diff_ids = ["sha256:" + "1" * 64]
    with pytest.raises(EntryImageError, match="does not match the diff_id"):
        imported(image, tmp_path, store)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a tar at all" * 64, "not an image archive"),
        (b"", "not an image archive"),
    ],
)
def test_what_is_not_an_image_archive_is_refused(
    tmp_path: Path, store: EnvironmentStore, content: bytes, message: str
) -> None:
    archive = tmp_path / "image.tar"
    archive.write_bytes(content)
    with pytest.raises(EntryImageError, match=message):
        import_archive(archive, store, LIMITS, pack=False)


def test_a_zstd_layer_is_refused_with_the_fix(tmp_path: Path, store: EnvironmentStore) -> None:
    image = Image([Layer(b"\x28\xb5\x2f\xfd" + bytes(100), "sha256:" + "0" * 64)])
    with pytest.raises(EntryImageError, match="zstd"):
        imported(image, tmp_path, store)


def test_a_loop_of_links_in_the_archive_is_refused(tmp_path: Path, store: EnvironmentStore) -> None:
    archive = tmp_path / "image.tar"
    with tarfile.open(archive, "w") as tar:
        for name, target in (("a/layer.tar", "../b/layer.tar"), ("b/layer.tar", "../a/layer.tar")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        manifest = b'[{"Config": "c.json", "Layers": ["a/layer.tar"]}]'
        config = b'{"rootfs": {"diff_ids": ["sha256:00"]}}'
        for name, data in (("manifest.json", manifest), ("c.json", config)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(EntryImageError):
        import_archive(archive, store, LIMITS, pack=False)


def test_images_of_one_run_may_be_imported_at_once(tmp_path: Path, store: EnvironmentStore) -> None:
    image = one_layer(*BASE, *(member(f"usr/f{i}", bytes(5000)) for i in range(300)))
    archive = docker_archive(image, tmp_path / "image.tar")
    with ThreadPoolExecutor(4) as pool:
        found = list(
            pool.map(lambda _: import_archive(archive, store, LIMITS, pack=False), range(4))
        )
    assert {entry.folder for entry in found} == {found[0].folder}
    assert len(os.listdir(found[0].rootfs / "usr")) == 301  # bin and 300 files
    assert [p.name for p in (store.root / "entry-images").iterdir()] == [found[0].folder.name]


def test_a_packed_image_keeps_no_second_copy_of_its_tree(
    tmp_path: Path, store: EnvironmentStore
) -> None:
    status = b"Package: toy\nStatus: install ok installed\nVersion: 1.0\n"
    image = one_layer(*BASE, member("var/lib/dpkg/status", status))
    archive = docker_archive(image, tmp_path / "image.tar")
    packed = import_archive(archive, store, LIMITS, keep_tree=False)
    assert sorted(os.listdir(packed.folder)) == ["image.erofs", "image.json"]
    assert packed.packages == {"toy": "1.0"}  # read from the tree before it went
    assert find_image(store, packed.digest) == packed


def test_the_tree_stays_where_no_image_is_mounted(tmp_path: Path) -> None:
    archive = docker_archive(one_layer(*BASE), tmp_path / "image.tar")
    unpacked = import_archive(archive, EnvironmentStore(tmp_path / "a"), LIMITS, pack=False)
    assert sorted(os.listdir(unpacked.folder)) == ["image.json", "rootfs"]
    both = import_archive(archive, EnvironmentStore(tmp_path / "b"), LIMITS, keep_tree=True)
    assert sorted(os.listdir(both.folder)) == ["image.erofs", "image.json", "rootfs"]
    assert (both.rootfs / "usr/bin/tool").is_file()
