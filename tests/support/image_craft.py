"""Image archives made in the test itself: layers from tar members, then `docker save` or OCI.

No registry and no daemon: a layer is a tar written with ``tarfile`` (COPY-equivalent), an
image is a config plus its layers, and an archive is what ``docker save`` (``manifest.json``)
or an OCI layout (``index.json``, ``blobs/sha256``) holds.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.environments.oci import export_oci
from proctor.environments.store import BuiltEnvironment


@dataclass
class Layer:
    """One layer's bytes as stored (``blob``) and its uncompressed digest (``diff_id``)."""

    blob: bytes
    diff_id: str

    @classmethod
    def of(cls, tar: bytes, *, gzipped: bool = False) -> Layer:
        """A layer from an uncompressed tar, stored gzipped when asked."""
        diff_id = "sha256:" + hashlib.sha256(tar).hexdigest()
        return cls(gzip.compress(tar, mtime=0) if gzipped else tar, diff_id)


def member(name: str, data: bytes | None = None, **fields: Any) -> tuple[tarfile.TarInfo, bytes]:
    """A tar member: a file with ``data``, or whatever ``fields`` (type, linkname...) make it."""
    info = tarfile.TarInfo(name)
    info.mode = fields.pop("mode", 0o755 if data is None else 0o644)
    if data is None and "type" not in fields:
        info.type = tarfile.DIRTYPE
    for key, value in fields.items():
        setattr(info, key, value)
    info.size = len(data) if data is not None else fields.get("size", 0)
    return info, data or b""


def layer_tar(members: Iterable[tuple[tarfile.TarInfo, bytes]], *, pax: bool = True) -> bytes:
    """An uncompressed layer tar of ``members`` (in order)."""
    out = io.BytesIO()
    with tarfile.open(
        fileobj=out, mode="w", format=tarfile.PAX_FORMAT if pax else tarfile.GNU_FORMAT
    ) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return out.getvalue()


@dataclass
class Image:
    """An image: its layers and how to run it."""

    layers: list[Layer]
    env: list[str] = field(default_factory=lambda: ["PATH=/usr/local/bin:/usr/bin:/bin"])
    workdir: str = ""
    user: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    extra_diff_ids: list[str] | None = None

    def config(self) -> bytes:
        """The image config (docker's and OCI's are the same document)."""
        diff_ids = self.extra_diff_ids or [layer.diff_id for layer in self.layers]
        return json.dumps({
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": self.env, "WorkingDir": self.workdir, "User": self.user,
                       "Labels": self.labels},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }, sort_keys=True).encode()  # fmt: skip

    @property
    def digest(self) -> str:
        """The config digest, the image's identity."""
        return "sha256:" + hashlib.sha256(self.config()).hexdigest()


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def docker_archive(image: Image, path: Path, *, gzipped: bool = False) -> Path:
    """Write ``image`` as ``docker save`` does (``manifest.json``, ``ID/layer.tar``)."""
    raw = io.BytesIO()
    config = image.config()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    with tarfile.open(fileobj=raw, mode="w") as tar:
        names = []
        for index, layer in enumerate(image.layers):
            name = f"{index:064x}/layer.tar"
            _add(tar, name, layer.blob)
            names.append(name)
        _add(tar, config_name, config)
        manifest = [{"Config": config_name, "RepoTags": ["entry:latest"], "Layers": names}]
        _add(tar, "manifest.json", json.dumps(manifest).encode())
    data = raw.getvalue()
    path.write_bytes(gzip.compress(data, compresslevel=1) if gzipped else data)
    return path


def oci_archive(image: Image, path: Path, *, base_name: str | None = None) -> Path:
    """Write ``image`` as an OCI layout archive (``index.json``, ``blobs/sha256``)."""
    config = image.config()
    layers = []
    blobs: dict[str, bytes] = {}
    for layer in image.layers:
        digest = hashlib.sha256(layer.blob).hexdigest()
        blobs[digest] = layer.blob
        gz = layer.blob[:2] == b"\x1f\x8b"
        kind = "tar+gzip" if gz else "tar"
        layers.append({"mediaType": f"application/vnd.oci.image.layer.v1.{kind}",
                       "digest": f"sha256:{digest}", "size": len(layer.blob)})  # fmt: skip
    config_digest = hashlib.sha256(config).hexdigest()
    blobs[config_digest] = config
    annotations = {"org.opencontainers.image.base.name": base_name} if base_name else {}
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": f"sha256:{config_digest}", "size": len(config)},
        "layers": layers,
        "annotations": annotations,
    }).encode()  # fmt: skip
    manifest_digest = hashlib.sha256(manifest).hexdigest()
    blobs[manifest_digest] = manifest
    index = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json",
         "digest": f"sha256:{manifest_digest}", "size": len(manifest)}]}).encode()  # fmt: skip
    with tarfile.open(path, "w") as tar:
        _add(tar, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add(tar, "index.json", index)
        for digest, data in blobs.items():
            _add(tar, f"blobs/sha256/{digest}", data)
    return path


def base_of(built: BuiltEnvironment, scratch: Path) -> Image:
    """A declared environment as a base image (its exported OCI layer and labels)."""
    archive = scratch / "base.tar"
    export_oci(built, archive)
    with tarfile.open(archive) as tar:
        index = json.load(tar.extractfile("index.json"))  # type: ignore[arg-type]
        digest = index["manifests"][0]["digest"].removeprefix("sha256:")
        manifest = json.load(tar.extractfile(f"blobs/sha256/{digest}"))  # type: ignore[arg-type]
        config = json.load(
            tar.extractfile(  # type: ignore[arg-type]
                "blobs/sha256/" + manifest["config"]["digest"].removeprefix("sha256:")
            )
        )
        layer_digest = manifest["layers"][0]["digest"].removeprefix("sha256:")
        blob = tar.extractfile(f"blobs/sha256/{layer_digest}").read()  # type: ignore[union-attr]
    archive.unlink()
    layer = Layer(blob, config["rootfs"]["diff_ids"][0])
    return Image([layer], env=config["config"]["Env"], labels=config["config"]["Labels"])


SLIM_PATHS = (
    "bin",
    "lib",
    "lib64",
    "usr/bin/sh",
    "usr/bin/dash",
    "usr/bin/cut",
    "usr/bin/cat",
    "usr/lib64/ld-linux-x86-64.so.2",
    "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "usr/lib/x86_64-linux-gnu/libc.so.6",
    "var/lib/dpkg/status",
)
"""What a slim image takes of a declared environment: a shell, ``cut``, libc, dpkg's status."""
SLIM_METADATA = ("usr/lib/python3/dist-packages", "usr/local/lib/python3*/dist-packages")


def slim_image(built: BuiltEnvironment, *, env: Iterable[str] = ()) -> Image:
    """A small image cut from ``built``'s tree, megabytes instead of hundreds.

    It runs ``sh`` scripts with ``cut`` and ``cat``, and lists the environment's packages:
    its dpkg status and every Python distribution's ``METADATA`` (without their code). Its
    label names the environment, so its base reads ``proctor/NAME``.
    """
    root = built.rootfs
    paths = [*SLIM_PATHS]
    for pattern in SLIM_METADATA:
        paths += sorted(
            str(p.relative_to(root)) for p in root.glob(f"{pattern}/*.dist-info/METADATA")
        )
    members: dict[str, tuple[tarfile.TarInfo, bytes]] = {}
    for path in paths:
        parts = Path(path).parts
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            members.setdefault(folder, member(folder))
        source = root / path
        if source.is_symlink():
            members[path] = member(path, type=tarfile.SYMTYPE, linkname=str(source.readlink()),
                                   mode=0o777)  # fmt: skip
        else:
            members[path] = member(path, source.read_bytes(), mode=source.stat().st_mode & 0o755)
    layer = Layer.of(layer_tar(members.values()))
    labels = {"org.proctor.environment.name": built.manifest.name}
    return Image([layer], env=["PATH=/usr/bin:/bin", *env], labels=labels)
