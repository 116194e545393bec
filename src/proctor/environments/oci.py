"""An environment as an OCI image archive, for replicas outside Proctor (podman/docker load).

``export_oci`` writes one layer: the environment's canonical tar (gzip), so the layer's
``diff_id`` is the environment's ``digest``; labels carry its name, declaration digest and
suite, and the image holds its own ``environment.lock``. ``import_oci`` reads such an archive
(no root or mmdebstrap needed), checks every blob against its digest and the layer against the
``diff_id``, unpacks it into the store and packs its image.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.environments.build import LOCK_INSIDE, pack_image
from proctor.environments.debian import installed_packages
from proctor.environments.digests import HashingWriter, canonical_tar
from proctor.environments.lockfile import read_lock
from proctor.environments.mounts import remove_tree
from proctor.environments.store import (
    IMAGE,
    IMPORTED,
    LOCK,
    ROOTFS,
    BuiltEnvironment,
    EnvironmentStore,
    Manifest,
    write_manifest,
)
from proctor.errors import InputFileError

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
LABEL = "org.proctor.environment"
PATH = "/usr/local/bin:/usr/bin:/bin"


def _blob(data: bytes) -> tuple[str, bytes]:
    return hashlib.sha256(data).hexdigest(), data


def export_oci(built: BuiltEnvironment, archive: Path) -> str:
    """Write ``built`` as an OCI image archive at ``archive``; returns the manifest digest."""
    with tempfile.TemporaryDirectory(prefix="proctor-oci-", dir=archive.parent) as scratch:
        layer_path = Path(scratch) / "layer.tar.gz"
        layer_digest, layer_size = _write_layer(built, layer_path)
        blobs = _image_blobs(built.manifest, layer_digest, layer_size)
        config_digest, config = blobs.config
        image_digest, image_manifest = blobs.manifest
        partial = Path(scratch) / archive.name  # own name: concurrent exports never share it
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as out:
            _add_bytes(out, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
            _add_bytes(out, "index.json", blobs.index)
            _add_bytes(out, f"blobs/sha256/{config_digest}", config)
            _add_bytes(out, f"blobs/sha256/{image_digest}", image_manifest)
            out.add(layer_path, arcname=f"blobs/sha256/{layer_digest}")
        partial.replace(archive)
    return image_digest


def _write_layer(built: BuiltEnvironment, path: Path) -> tuple[str, int]:
    """Write the tree as one gzip layer; returns its (sha256, bytes).

    The uncompressed tar's digest must be the environment's: a tree changed on disk since
    its build is refused.
    """
    with path.open("wb") as raw:
        hashed = HashingWriter(raw)
        with gzip.GzipFile(fileobj=hashed, mode="wb", compresslevel=1, mtime=0) as zipped:
            diff_id, _ = canonical_tar(built.rootfs, zipped)  # type: ignore[arg-type]
    if diff_id != built.manifest.digest:
        raise InputFileError(
            f"{built.rootfs}: the tree no longer matches its digest (changed on disk?); "
            "rebuild the environment"
        )
    return hashed.sha256.hexdigest(), hashed.size


@dataclass(frozen=True, slots=True)
class _ImageBlobs:
    """The JSON documents of an image: config and manifest as (digest, bytes), the index."""

    config: tuple[str, bytes]
    manifest: tuple[str, bytes]
    index: bytes


def _image_blobs(manifest: Manifest, layer_digest: str, layer_size: int) -> _ImageBlobs:
    """The config (labels, variables, diff_id), the image manifest and the index of one layer."""
    env = [f"PATH={PATH}", *(f"{k}={v}" for k, v in sorted(manifest.variables.items()))]
    labels = {
        f"{LABEL}.name": manifest.name,
        f"{LABEL}.digest": manifest.digest,
        f"{LABEL}.declaration-digest": manifest.declaration_digest,
        f"{LABEL}.suite": manifest.suite,
    }
    config_digest, config = _blob(json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": env, "Cmd": ["/bin/sh"], "Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{manifest.digest}"]},
        "history": [{"created_by": f"proctor env build ({manifest.name})"}],
    }, sort_keys=True).encode())  # fmt: skip
    image_digest, image_manifest = _blob(json.dumps({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "digest": f"sha256:{config_digest}",
                   "size": len(config)},
        "layers": [{"mediaType": LAYER_TYPE, "digest": f"sha256:{layer_digest}",
                    "size": layer_size}],
        "annotations": {f"{LABEL}.digest": manifest.digest},
    }, sort_keys=True).encode())  # fmt: skip
    index = json.dumps({
        "schemaVersion": 2,
        "manifests": [{"mediaType": MANIFEST_TYPE, "digest": f"sha256:{image_digest}",
                       "size": len(image_manifest),
                       "annotations": {"org.opencontainers.image.ref.name": manifest.name}}],
    }, sort_keys=True).encode()  # fmt: skip
    return _ImageBlobs((config_digest, config), (image_digest, image_manifest), index)


def _add_bytes(out: tarfile.TarFile, name: str, data: bytes) -> None:
    member = tarfile.TarInfo(name)
    member.size = len(data)
    member.mode = 0o644
    out.addfile(member, io.BytesIO(data))


def _read_json(archive: tarfile.TarFile, name: str, what: str, path: Path) -> Any:
    try:
        member = archive.extractfile(name)
    except KeyError:
        member = None
    if member is None:
        raise InputFileError(f"{path}: no {name} ({what}); is this an OCI image archive?")
    data = member.read()
    if (
        name.startswith("blobs/sha256/")
        and hashlib.sha256(data).hexdigest() != name.rsplit("/", maxsplit=1)[-1]
    ):
        raise InputFileError(f"{path}: {what} does not match its digest: the file is damaged")
    return json.loads(data)


def _blob_name(descriptor: dict[str, Any]) -> str:
    digest = str(descriptor["digest"])
    if not digest.startswith("sha256:"):
        raise InputFileError(f"unsupported digest {digest!r}: expected sha256")
    return f"blobs/sha256/{digest.removeprefix('sha256:')}"


def import_oci(
    archive_path: Path, store: EnvironmentStore, *, expect: str | None = None
) -> BuiltEnvironment:
    """Load an archive written by :func:`export_oci` into ``store``; checks every digest.

    A malformed archive or a digest that does not match is an ``InputFileError``.

    ``expect``: the published digest the image must have (a prefix is enough).
    """
    if not archive_path.is_file():
        raise InputFileError(f"{archive_path}: no such file")
    try:
        with tarfile.open(archive_path, "r:") as archive:
            return _import(archive, archive_path, store, expect)
    except (tarfile.TarError, EOFError, OSError) as err:
        raise InputFileError(f"{archive_path}: not an OCI image archive ({err})") from err
    except (KeyError, IndexError, TypeError, ValueError) as err:
        raise InputFileError(
            f"{archive_path}: not an environment image written by `proctor env export` "
            f"({type(err).__name__}: {err})"
        ) from err


def _import(
    archive: tarfile.TarFile, archive_path: Path, store: EnvironmentStore, expect: str | None
) -> BuiltEnvironment:
    index = _read_json(archive, "index.json", "the image index", archive_path)
    image = _read_json(archive, _blob_name(index["manifests"][0]), "the manifest", archive_path)
    config = _read_json(archive, _blob_name(image["config"]), "the config", archive_path)
    labels = config.get("config", {}).get("Labels") or {}
    diff_id = str(config["rootfs"]["diff_ids"][0]).removeprefix("sha256:")
    key = labels.get(f"{LABEL}.declaration-digest")
    if not key:
        raise InputFileError(f"{archive_path}: not a Proctor environment (no {LABEL} labels)")
    if expect is not None and not diff_id.startswith(expect):
        raise InputFileError(f"{archive_path}: its digest is {diff_id}, not the published {expect}")
    found = store.find(key)
    if found is not None and found.manifest.digest == diff_id:
        return found
    partial = store.partial(key)
    try:
        built = _unpack(archive, image, config, diff_id=diff_id, partial=partial,
                        path=archive_path)  # fmt: skip
    except BaseException:
        remove_tree(partial)
        raise
    write_manifest(partial, built)
    return store.commit(partial, key)


class _TreeFilter:
    """The ``tar`` filter's path checks (nothing outside ``dest``), keeping every mode bit.

    Only folders, regular files and symbolic links are accepted (an environment's canonical
    tar holds nothing else: a hard link could write through to a host file), and no path may
    come twice (a second member must never write through the first). Setuid programs keep
    their modes, so the tree reproduces its digest; inside the sandbox they give no privilege.
    """

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
        if not (member.isreg() or member.isdir() or member.issym()):
            raise InputFileError(
                f"{member.name!r} is not a file, folder or symbolic link: not an environment "
                "image written by `proctor env export`"
            )
        name = os.path.normpath(member.name)
        if name in self.seen:
            raise InputFileError(f"{member.name!r} comes twice in the layer: refused")
        self.seen.add(name)
        checked = tarfile.tar_filter(member, dest)
        return checked.replace(mode=member.mode, deep=False)


def _unpack(
    archive: tarfile.TarFile,
    image: dict[str, Any],
    config: dict[str, Any],
    *,
    diff_id: str,
    partial: Path,
    path: Path,
) -> Manifest:
    """Unpack the layer into ``partial``, pack its image and describe it as the store does."""
    labels: dict[str, str] = config.get("config", {}).get("Labels") or {}
    env = config.get("config", {}).get("Env") or []
    rootfs = partial / ROOTFS
    size = _extract_layer(archive, image, diff_id=diff_id, rootfs=rootfs, path=path)
    lock_file = rootfs / LOCK_INSIDE.lstrip("/")
    wheels = read_lock(lock_file).wheels if lock_file.is_file() else {}
    if lock_file.is_file():
        shutil.copy2(lock_file, partial / LOCK)
    pack_image(rootfs, partial / IMAGE)
    return Manifest(
        name=labels.get(f"{LABEL}.name", "imported"),
        digest=diff_id,
        declaration_digest=labels[f"{LABEL}.declaration-digest"],
        suite=labels.get(f"{LABEL}.suite", ""),
        packages=installed_packages(rootfs),
        wheels=wheels,
        variables={
            key: value
            for key, _, value in (str(item).partition("=") for item in env)
            if key != "PATH"
        },
        tree_bytes=size,
        image_bytes=(partial / IMAGE).stat().st_size,
        source=IMPORTED,
    )


def _extract_layer(
    archive: tarfile.TarFile, image: dict[str, Any], *, diff_id: str, rootfs: Path, path: Path
) -> int:
    """Extract the image's layer at ``rootfs`` after checking it against its ``diff_id``.

    Returns the canonical tar's size; the unpacked tree must reproduce the digest too.
    """
    layer = _blob_name(image["layers"][0])
    stream = archive.extractfile(layer)
    if stream is None:
        raise InputFileError(f"{path}: the layer {layer} is missing")
    rootfs.mkdir()
    with tempfile.TemporaryFile(dir=rootfs.parent) as plain:
        hashed = HashingWriter(plain)
        with gzip.GzipFile(fileobj=stream) as unzipped:
            shutil.copyfileobj(unzipped, hashed, 1 << 20)
        if hashed.sha256.hexdigest() != diff_id:
            raise InputFileError(
                f"{path}: the layer does not match its diff_id: the file is damaged"
            )
        plain.seek(0)
        with tarfile.open(fileobj=plain, mode="r:") as tree:
            tree.extractall(rootfs, filter=_TreeFilter())  # noqa: S202 - filtered
    digest, size = canonical_tar(rootfs)
    if digest != diff_id:
        raise InputFileError(f"{path}: the unpacked tree does not reproduce {diff_id}")
    return size
