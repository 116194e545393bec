"""Entry images: an entry's own root filesystem, imported from an image archive into the store.

``import_archive`` reads a ``docker save``, ``podman save`` or OCI layout archive (see
``image_archive``), applies its layers as untrusted input (see ``image_layers``) into a fresh
folder of the store, packs the tree as an erofs image (mounted read-only, privately, by every
run of the entry as a declared environment's is) and records what it holds. Images are kept
by config digest under ``STORE/entry-images/sha256-HEX/``, so the same image submitted again
is not unpacked again::

    image.json      digest, base, ENV/WORKDIR/USER, Debian packages, Python distributions
    image.erofs     the packed tree
    rootfs/         the tree, kept only where no erofs image is mounted (see below)

The installed packages are read back from the tree (``var/lib/dpkg/status`` and every
``*.dist-info/METADATA`` of the usual site folders) at import, without running anything of
the image and without following a link out of it; nothing reads the tree afterwards. So once
the erofs image is written, the tree is removed: a run as root mounts the image, never the
tree. The tree is kept (beside the image) only by an unprivileged import, whose sandbox cannot
mount an image and binds the tree instead, and (alone) by an import asked not to pack.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tarfile
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.entries import fsafe
from proctor.entries.limits import GiB
from proctor.environments.build import pack_image
from proctor.environments.image_archive import (
    ArchivedImage,
    ImageConfig,
    member_size,
    open_image_archive,
    read_member,
)
from proctor.environments.image_layers import (
    LayerBudget,
    apply_layer,
    open_inside,
    read_inside,
    remove_entry,
)
from proctor.environments.mounts import remove_tree
from proctor.environments.store import EnvironmentStore
from proctor.errors import EntryImageError
from proctor.host import pid_alive
from proctor.spec.environment import EntryImages

FOLDER = "entry-images"
RECORD = "image.json"
ROOTFS = "rootfs"
IMAGE = "image.erofs"
PARTIAL = ".partial-"
ARCHIVE_NAMES = ("image.tar", "image.tar.gz")
"""The names an entry's image archive may have at the root of its upload."""

MAX_STATUS_BYTES = 64 * 1024**2
MAX_METADATA_BYTES = 256 * 1024
SITE_FOLDERS = (
    "usr/lib/python3/dist-packages",
    "usr/lib/python3*/site-packages",
    "usr/lib/python3*/dist-packages",
    "usr/local/lib/python3*/site-packages",
    "usr/local/lib/python3*/dist-packages",
    "opt/conda/lib/python3*/site-packages",
)
"""Where an image's Python distributions are looked for (``*`` one level of python3.X)."""


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What one entry image may cost: bytes of file data and members, over all its layers."""

    max_bytes: int = 4 * GiB
    max_files: int = 100_000
    max_ratio: float = 200.0

    @classmethod
    def of(cls, spec: EntryImages) -> ImageLimits:
        """The limits a challenge's ``entry_images`` block sets."""
        return cls(max_bytes=spec.max_bytes, max_files=spec.max_files)


@dataclass(frozen=True, slots=True)
class EntryImage:
    """An entry image in the store: its digest, where it lies, how to run it, what it holds."""

    digest: str
    folder: Path
    config: ImageConfig
    base: str | None = None
    packages: dict[str, str] = field(default_factory=dict)
    python: dict[str, str] = field(default_factory=dict)
    tree_bytes: int = 0
    files: int = 0

    @property
    def rootfs(self) -> Path:
        """The unpacked tree (absent once packed as root: see :attr:`image`)."""
        return self.folder / ROOTFS

    @property
    def image(self) -> Path:
        """The packed tree (erofs)."""
        return self.folder / IMAGE

    def to_json(self) -> dict[str, Any]:
        """The record written as ``image.json`` (and kept as the run's artifact)."""
        return {
            "digest": self.digest,
            "base": self.base,
            "config": self.config.to_json(),
            "packages": self.packages,
            "python": self.python,
            "tree_bytes": self.tree_bytes,
            "files": self.files,
        }

    @classmethod
    def from_json(cls, folder: Path, data: dict[str, Any]) -> EntryImage:
        """Read a record written by :meth:`to_json`."""
        return cls(
            digest=str(data["digest"]),
            folder=folder,
            config=ImageConfig.from_json(data.get("config", {})),
            base=data.get("base"),
            packages=dict(data.get("packages", {})),
            python=dict(data.get("python", {})),
            tree_bytes=int(data.get("tree_bytes", 0)),
            files=int(data.get("files", 0)),
        )


def archive_of(entry_root: Path) -> Path | None:
    """The image archive at the root of an entry (``image.tar`` or ``image.tar.gz``), if any."""
    for name in ARCHIVE_NAMES:
        candidate = entry_root / name
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


def find_image(store: EnvironmentStore, digest: str) -> EntryImage | None:
    """The stored entry image of ``digest`` (``sha256:…``), or None."""
    folder = _images(store) / _folder_name(digest)
    record = folder / RECORD
    if not record.is_file():
        return None
    return EntryImage.from_json(folder, json.loads(record.read_text(encoding="utf-8")))


def import_archive(
    archive: Path,
    store: EnvironmentStore,
    limits: ImageLimits,
    *,
    base: str | None = None,
    pack: bool = True,
    keep_tree: bool | None = None,
) -> EntryImage:
    """Import the image archive ``archive`` into ``store``; the stored image when already there.

    ``archive``: a ``docker save`` / ``podman save`` tar, an OCI layout tar, or either gzipped.
    ``base``: the base the caller knows the image was built from (a Dockerfile's ``FROM``);
    else the archive's own annotation or Proctor label names it. ``pack``: write the erofs
    image (mounted as root; without it the tree is kept and bound). ``keep_tree``: keep the
    tree beside the image; by default only when this process is not root (an unprivileged
    sandbox binds the tree: it cannot mount the image). Raises ``EntryImageError`` (the
    entry's failure) for an unsafe, malformed or oversized image; ``PlatformError`` when the
    host cannot write.
    """
    if keep_tree is None:
        keep_tree = os.geteuid() != 0
    images = _images(store)
    images.mkdir(parents=True, exist_ok=True)
    images.chmod(0o755)
    _remove_leftovers(images)
    with (
        tempfile.TemporaryDirectory(prefix="proctor-image-", dir=images) as scratch,
        open_image_archive(archive, Path(scratch), limits.max_bytes) as (outer, found),
    ):
        known = find_image(store, found.digest)
        if known is not None:
            return known
        owner = f"{os.getpid()}-{threading.get_ident()}"  # jobs of one run import at once
        partial = images / f"{_folder_name(found.digest)}{PARTIAL}{owner}"
        remove_tree(partial)
        partial.mkdir(mode=0o755)
        try:
            budget = LayerBudget(limits.max_bytes, limits.max_files, limits.max_ratio)
            _unpack(outer, found, partial / ROOTFS, budget, archive)
            imported = EntryImage(
                digest=found.digest,
                folder=partial,
                config=found.config,
                base=base or found.base or _labelled_base(found.config),
                packages=debian_packages(partial / ROOTFS),
                python=python_distributions(partial / ROOTFS),
                tree_bytes=budget.written,
                files=budget.members,
            )
            if pack:
                pack_image(partial / ROOTFS, partial / IMAGE)
                if not keep_tree:  # read above, mounted from the image from now on
                    remove_tree(partial / ROOTFS)
            (partial / RECORD).write_text(
                json.dumps(imported.to_json(), indent=2, sort_keys=True) + "\n"
            )
        except BaseException:
            remove_tree(partial)
            raise
    return _commit(store, partial, found.digest)


def _images(store: EnvironmentStore) -> Path:
    return store.root / FOLDER


def _folder_name(digest: str) -> str:
    hexdigest = digest.removeprefix("sha256:")
    if not re.fullmatch(r"[0-9a-f]{64}", hexdigest):
        raise EntryImageError(f"{digest!r} is not a sha256 digest")
    return f"sha256-{hexdigest}"


def _labelled_base(config: ImageConfig) -> str | None:
    """``proctor/NAME`` when the image derives from an exported declared environment."""
    name = config.labels.get("org.proctor.environment.name")
    return f"proctor/{name}" if name else None


def _unpack(
    outer: tarfile.TarFile,
    found: ArchivedImage,
    rootfs: Path,
    budget: LayerBudget,
    archive: Path,
) -> None:
    with fsafe.fresh_dest(rootfs) as root_fd:
        for number, (member, diff_id) in enumerate(
            zip(found.layers, found.diff_ids, strict=True), 1
        ):
            label = f"layer {number} of {archive.name}"
            packed = member_size(outer, member)
            with read_member(outer, member, label) as blob:
                digest = apply_layer(root_fd, blob, packed, budget, label)
            if f"sha256:{digest}" != diff_id:
                raise EntryImageError(
                    f"{label} does not match the diff_id its config names: the archive is "
                    "damaged or forged; save the image again"
                )
        _sandbox_ready(root_fd)


def _sandbox_ready(root_fd: int) -> None:
    """Make the folders and files the sandbox binds, or binds over, real: a link is replaced.

    ``usr``, ``etc`` and ``opt`` are bound by their host path (bwrap would resolve a link
    there on the host, showing a host folder); ``etc/passwd``, ``group`` and ``hosts`` are
    bound over.
    """
    for folder in ("usr", "etc"):
        _real_folder(root_fd, folder)
    try:
        opt = os.stat("opt", dir_fd=root_fd, follow_symlinks=False)
    except FileNotFoundError:
        opt = None
    if opt is not None and not stat.S_ISDIR(opt.st_mode):
        _real_folder(root_fd, "opt")  # a link there would be resolved on the host by bwrap
    etc = fsafe.open_dir(root_fd, ("etc",), create=False)
    try:
        for name in ("passwd", "group", "hosts"):
            try:
                info = os.stat(name, dir_fd=etc, follow_symlinks=False)
            except FileNotFoundError:
                info = None
            if info is not None and stat.S_ISREG(info.st_mode):
                continue
            remove_entry(etc, name)
            fsafe.write_file(etc, (name,), [], executable=False)
    finally:
        os.close(etc)


def _real_folder(root_fd: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=root_fd)
        info = None
    if info is None:
        fsafe.make_dir(root_fd, (name,))


def _commit(store: EnvironmentStore, partial: Path, digest: str) -> EntryImage:
    final = _images(store) / _folder_name(digest)
    try:
        os.rename(partial, final)
    except OSError:
        remove_tree(partial)  # a concurrent import of the same image finished first
    found = find_image(store, digest)
    if found is None:
        raise EntryImageError(f"the entry image {digest} was not stored")
    return found


def _remove_leftovers(images: Path) -> None:
    for entry in images.iterdir():
        owner = entry.name.rpartition(PARTIAL)[2].partition("-")[0]
        if PARTIAL in entry.name and owner.isdigit() and not pid_alive(int(owner)):
            remove_tree(entry)


def list_images(store: EnvironmentStore) -> list[EntryImage]:
    """Every entry image in the store."""
    images = _images(store)
    if not images.is_dir():
        return []
    found = []
    for entry in sorted(images.iterdir()):
        if PARTIAL not in entry.name and (entry / RECORD).is_file():
            found.append(EntryImage.from_json(entry, json.loads((entry / RECORD).read_text())))
    return found


def remove_image(image: EntryImage) -> None:
    """Delete one stored entry image (renamed away first, so it never looks half-gone)."""
    doomed = image.folder.with_name(f"{image.folder.name}{PARTIAL}0")
    os.rename(image.folder, doomed)
    remove_tree(doomed)


def debian_packages(rootfs: Path) -> dict[str, str]:
    """Package → version of every installed Debian package (``dpkg-query -W``), from the tree.

    Read from ``var/lib/dpkg/status`` inside the root; a link there never leads out of it.
    """
    fd = os.open(rootfs, fsafe.DIR_FLAGS)
    try:
        data = read_inside(fd, "var/lib/dpkg/status", MAX_STATUS_BYTES)
    finally:
        os.close(fd)
    if data is None:
        return {}
    packages: dict[str, str] = {}
    for stanza in data.decode("utf-8", errors="replace").split("\n\n"):
        fields = dict(
            (key.strip(), value.strip())
            for key, sep, value in (line.partition(":") for line in stanza.splitlines())
            if sep and not key.startswith(" ")
        )
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            packages[fields["Package"]] = fields.get("Version", "")
    return dict(sorted(packages.items()))


def python_distributions(rootfs: Path) -> dict[str, str]:
    """Name → version of every Python distribution (``pip list``), from ``*.dist-info``."""
    fd = os.open(rootfs, fsafe.DIR_FLAGS)
    found: dict[str, str] = {}
    try:
        for folder in _site_folders(fd):
            for name in sorted(_listing(fd, folder)):
                if not name.endswith(".dist-info"):
                    continue
                data = read_inside(fd, f"{folder}/{name}/METADATA", MAX_METADATA_BYTES)
                if data is None:
                    continue
                meta = _metadata(data)
                if "Name" in meta:
                    found.setdefault(meta["Name"], meta.get("Version", ""))
    finally:
        os.close(fd)
    return dict(sorted(found.items(), key=lambda item: item[0].lower()))


def _site_folders(root_fd: int) -> list[str]:
    folders: list[str] = []
    for pattern in SITE_FOLDERS:
        head, star, tail = pattern.partition("*")
        if not star:
            folders.append(pattern)
            continue
        parent, _, prefix = head.rpartition("/")
        for name in sorted(_listing(root_fd, parent)):
            if name.startswith(prefix):
                folders.append(f"{parent}/{name}{tail}")
    return folders


def _listing(root_fd: int, folder: str) -> list[str]:
    try:
        fd = open_inside(root_fd, tuple(p for p in folder.split("/") if p), create=False)
    except OSError:
        return []
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def _metadata(data: bytes) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version"):
            fields.setdefault(key, value.strip())
    return fields
