"""Reading an entry's image archive: ``docker save``, ``podman save`` or an OCI layout tar.

Nothing of the archive is extracted to disk: its members are looked up by name in a tar read
in place (``image.tar.gz`` is first decompressed, within the image's byte cap, to a scratch
file). ``manifest.json`` (docker-save) or ``index.json`` (OCI layout) names one image; its
config and manifest are small JSON documents, checked against their digests where the format
gives them. The image's identity is its config digest (``sha256:…``, docker's image ID).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from proctor.entries.limits import MiB, human_bytes
from proctor.entries.tarsource import GuardedTarInfo
from proctor.errors import EntryImageError

MAX_JSON_BYTES = 4 * MiB
MAX_ARCHIVE_MEMBERS = 10_000
MAX_LINK_HOPS = 8
OCI_INDEX_TYPES = frozenset({
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class ImageConfig:
    """What the image's config says of how to run it: ``ENV``, ``WORKDIR``, ``USER``, labels."""

    env: dict[str, str] = field(default_factory=dict)
    workdir: str = ""
    user: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The config as stored beside the image."""
        return {"env": self.env, "workdir": self.workdir, "user": self.user, "labels": self.labels}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ImageConfig:
        """Read what :meth:`to_json` wrote."""
        return cls(
            env=dict(data.get("env", {})),
            workdir=str(data.get("workdir", "")),
            user=str(data.get("user", "")),
            labels=dict(data.get("labels", {})),
        )


@dataclass(frozen=True, slots=True)
class ArchivedImage:
    """One image in an archive: its digest, config, layers (member names) and their diff_ids.

    ``base``: the base image the archive names (an OCI ``base.name`` annotation), if any.
    """

    digest: str
    config: ImageConfig
    layers: tuple[str, ...]
    diff_ids: tuple[str, ...]
    base: str | None = None


@contextlib.contextmanager
def open_image_archive(
    archive: Path, scratch: Path, max_bytes: int
) -> Iterator[tuple[tarfile.TarFile, ArchivedImage]]:
    """Open ``archive`` (tar or tar.gz) and describe its one image; ``EntryImageError`` if bad.

    ``scratch``: a folder for the decompressed copy of a ``.tar.gz``.
    """
    name = archive.name
    with archive.open("rb") as head_stream:
        gzipped = head_stream.read(2) == b"\x1f\x8b"
    plain = archive
    if gzipped:
        plain = scratch / "image.tar"
        _gunzip(archive, plain, max_bytes + 64 * MiB, name)
    elif archive.stat().st_size > max_bytes + 64 * MiB:
        raise EntryImageError(
            f"{name} is {human_bytes(archive.stat().st_size)}, over the challenge's "
            f"{human_bytes(max_bytes)} limit for an image: make the image smaller"
        )
    try:
        with tarfile.open(plain, "r:", tarinfo=GuardedTarInfo) as outer:
            _count_members(outer, name)
            yield outer, _describe(outer, name)
    except EntryImageError:
        raise
    except (
        tarfile.TarError,
        EOFError,
        OSError,
        KeyError,
        ValueError,
        TypeError,
        RecursionError,
    ) as err:
        raise EntryImageError(
            f"{name} is not an image archive Proctor can read ({type(err).__name__}: {err}): "
            "save it with `docker save`, `podman save` or as an OCI layout archive"
        ) from err


def _gunzip(source: Path, dest: Path, cap: int, name: str) -> None:
    try:
        with gzip.open(source, "rb") as unzipped, dest.open("wb") as out:
            copied = 0
            while chunk := unzipped.read(MiB):
                copied += len(chunk)
                if copied > cap:
                    raise EntryImageError(
                        f"{name} unpacks to more than {human_bytes(cap)}, over the challenge's "
                        "limit for an image: make the image smaller"
                    )
                out.write(chunk)
    except (OSError, EOFError, gzip.BadGzipFile) as err:
        raise EntryImageError(f"{name} is not a readable gzip file ({err}): save it again") from err


def _count_members(outer: tarfile.TarFile, name: str) -> None:
    """Read every header once (the tar is random access later), refusing header floods."""
    count = 0
    while outer.next() is not None:
        count += 1
        if count > MAX_ARCHIVE_MEMBERS:
            raise EntryImageError(
                f"{name} holds more than {MAX_ARCHIVE_MEMBERS} members: not an image archive"
            )


def read_member(outer: tarfile.TarFile, member: str, label: str) -> IO[bytes]:
    """The data of ``member`` (a link inside the archive is followed within it)."""
    try:
        stream = outer.extractfile(_clean(member))
    except KeyError:
        stream = None
    if stream is None:
        raise EntryImageError(f"the image archive has no {member!r} ({label}): save it again")
    return stream


def member_size(outer: tarfile.TarFile, member: str) -> int:
    """The stored size of ``member`` (its link target's, for a link)."""
    info = outer.getmember(_clean(member))
    for _ in range(MAX_LINK_HOPS):
        if not (info.issym() or info.islnk()):
            return info.size
        target = info.linkname if info.islnk() else _join(info.name, info.linkname)
        info = outer.getmember(_clean(target))
    raise EntryImageError(f"{member!r} is a loop of links in the image archive: save it again")


def _join(name: str, link: str) -> str:
    folder = name.rpartition("/")[0]
    parts: list[str] = []
    for part in f"{folder}/{link}".split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _clean(member: str) -> str:
    return _join("", member)


def _json(outer: tarfile.TarFile, member: str, label: str, digest: str | None = None) -> Any:
    data = read_member(outer, member, label).read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise EntryImageError(f"the image's {label} ({member}) is too large: save it again")
    if digest is not None and hashlib.sha256(data).hexdigest() != digest:
        raise EntryImageError(f"the image's {label} does not match its digest: save it again")
    return json.loads(data)


def _blob(descriptor: dict[str, Any]) -> tuple[str, str]:
    digest = str(descriptor["digest"])
    if not digest.startswith("sha256:"):
        raise EntryImageError(f"unsupported digest {digest!r}: images must use sha256")
    hexdigest = digest.removeprefix("sha256:")
    if len(hexdigest) != 64 or any(c not in "0123456789abcdef" for c in hexdigest):
        raise EntryImageError(f"{digest!r} is not a sha256 digest: save the image again")
    return f"blobs/sha256/{hexdigest}", hexdigest


def _describe(outer: tarfile.TarFile, name: str) -> ArchivedImage:
    names = set(outer.getnames())
    if "manifest.json" in names:
        return _docker(outer, name)
    if "index.json" in names:
        return _oci(outer, name)
    raise EntryImageError(
        f"{name} has neither manifest.json (docker save) nor index.json (OCI layout): save the "
        "image with `docker save -o image.tar IMAGE`"
    )


def _docker(outer: tarfile.TarFile, name: str) -> ArchivedImage:
    images = _json(outer, "manifest.json", "manifest")
    if not isinstance(images, list) or len(images) != 1:
        count = len(images) if isinstance(images, list) else 0
        raise EntryImageError(
            f"{name} holds {count} images: save exactly one (docker save -o image.tar IMAGE)"
        )
    image = images[0]
    config_member = str(image["Config"])
    raw = read_member(outer, config_member, "config").read(MAX_JSON_BYTES + 1)
    digest = hashlib.sha256(raw).hexdigest()
    config = json.loads(raw)
    layers = tuple(str(layer) for layer in image["Layers"])
    return _image(config, digest, layers, base=None)


def _oci(outer: tarfile.TarFile, name: str) -> ArchivedImage:
    index = _json(outer, "index.json", "index")
    manifests = index.get("manifests") or []
    if len(manifests) != 1:
        raise EntryImageError(
            f"{name} names {len(manifests)} images in index.json: save exactly one"
        )
    descriptor = manifests[0]
    member, digest = _blob(descriptor)
    manifest = _json(outer, member, "manifest", digest)
    if descriptor.get("mediaType") in OCI_INDEX_TYPES or "manifests" in manifest:
        chosen = [
            m
            for m in manifest.get("manifests", [])
            if (m.get("platform") or {}).get("architecture") in (None, "amd64")
        ]
        if not chosen:
            raise EntryImageError(f"{name} has no linux/amd64 image: save that one")
        member, digest = _blob(chosen[0])
        manifest = _json(outer, member, "manifest", digest)
    config_member, config_digest = _blob(manifest["config"])
    config = _json(outer, config_member, "config", config_digest)
    layers = tuple(_blob(layer)[0] for layer in manifest.get("layers", []))
    annotations = {**(descriptor.get("annotations") or {}), **(manifest.get("annotations") or {})}
    base = annotations.get("org.opencontainers.image.base.name")
    return _image(config, config_digest, layers, base=str(base) if base else None)


def _image(
    config: dict[str, Any], digest: str, layers: tuple[str, ...], base: str | None
) -> ArchivedImage:
    if config.get("os", "linux") != "linux" or config.get("architecture", "amd64") != "amd64":
        raise EntryImageError(
            f"the image is for {config.get('os')}/{config.get('architecture')}: build it for "
            "linux/amd64 (docker build --platform linux/amd64)"
        )
    diff_ids = tuple(str(d) for d in (config.get("rootfs") or {}).get("diff_ids", []))
    if len(diff_ids) != len(layers):
        raise EntryImageError(
            f"the image's config lists {len(diff_ids)} layers but its manifest {len(layers)}: "
            "save it again"
        )
    run = config.get("config") or {}
    env: dict[str, str] = {}
    for item in run.get("Env") or []:
        key, sep, value = str(item).partition("=")
        if sep and key:
            env[key] = value
    labels = {str(k): str(v) for k, v in (run.get("Labels") or {}).items()}
    return ArchivedImage(
        digest=f"sha256:{digest}",
        config=ImageConfig(
            env=env,
            workdir=str(run.get("WorkingDir") or ""),
            user=str(run.get("User") or ""),
            labels=labels,
        ),
        layers=layers,
        diff_ids=diff_ids,
        base=base,
    )
