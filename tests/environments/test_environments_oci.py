"""The reference environment as an OCI image archive: skopeo reads it, its layer is the tree."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from proctor.environments.oci import import_oci
from proctor.environments.store import BuiltEnvironment, EnvironmentStore
from proctor.errors import InputFileError

pytestmark = [pytest.mark.environment, pytest.mark.slow]


@pytest.fixture(scope="module")
def exported(reference_exported: Path) -> Path:
    return reference_exported  # the session's archive (shared with tests/pipeline)


def tree_listing(root: Path) -> dict[str, str]:
    """Path → kind and content hash (or link target) of every file, folder and link."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            info = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                found[rel] = "link:" + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                found[rel] = "file:" + hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = "dir"
    return found


def test_skopeo_accepts_the_export(exported: Path, reference_env: BuiltEnvironment) -> None:
    skopeo = shutil.which("skopeo")
    assert skopeo is not None, "skopeo is installed by `make system`"
    done = subprocess.run(
        [skopeo, "inspect", f"oci-archive:{exported}"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["Os"] == "linux" and info["Architecture"] == "amd64"
    labels = info["Labels"]
    assert labels["org.proctor.environment.digest"] == reference_env.manifest.digest
    assert len(info["Layers"]) == 1


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
def test_the_layer_unpacks_to_the_same_tree(
    exported: Path, reference_env: BuiltEnvironment, tmp_path: Path
) -> None:
    with tarfile.open(exported) as archive:
        index = json.load(archive.extractfile("index.json"))  # type: ignore[arg-type]
        digest = index["manifests"][0]["digest"].removeprefix("sha256:")
        manifest = json.load(archive.extractfile(f"blobs/sha256/{digest}"))  # type: ignore[arg-type]
        layer = manifest["layers"][0]["digest"].removeprefix("sha256:")
        blob = archive.extractfile(f"blobs/sha256/{layer}")
        assert blob is not None
        with (
            gzip.GzipFile(fileobj=blob) as unzipped,
            tarfile.open(fileobj=unzipped, mode="r|") as tree,
        ):
            tree.extractall(tmp_path / "unpacked", filter="fully_trusted")
    expected = tree_listing(reference_env.rootfs)
    found = tree_listing(tmp_path / "unpacked")
    assert found.keys() == expected.keys()
    assert found == expected


def test_an_import_checks_digests_and_lands_in_the_store(
    exported: Path, reference_env: BuiltEnvironment, tmp_path: Path
) -> None:
    store = EnvironmentStore(tmp_path / "store")
    with pytest.raises(InputFileError, match="not the published"):
        import_oci(exported, store, expect="0" * 12)
    built = import_oci(exported, store, expect=reference_env.manifest.digest[:12])
    assert built.manifest.digest == reference_env.manifest.digest
    assert built.manifest.declaration_digest == reference_env.manifest.declaration_digest
    assert built.manifest.packages == reference_env.manifest.packages
    assert built.manifest.source == "import"
    assert built.image.is_file()


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
def test_a_damaged_archive_is_refused_and_leaves_nothing(exported: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.tar"
    with tarfile.open(exported) as source, tarfile.open(damaged, "w") as out:
        for member in source.getmembers():
            data = source.extractfile(member)
            if member.name == "index.json":
                out.addfile(member, data)
                continue
            content = data.read() if data is not None else b""
            if member.size > 10_000_000:  # the layer: flip one byte in the middle
                middle = len(content) // 2
                content = content[:middle] + bytes([content[middle] ^ 1]) + content[middle + 1 :]
            member.size = len(content)
            import io

            out.addfile(member, io.BytesIO(content))
    store = EnvironmentStore(tmp_path / "store")
    with pytest.raises(InputFileError, match="damaged"):
        import_oci(damaged, store)
    assert store.all() == []
    assert [p for p in store.root.iterdir()] == []


def test_a_file_that_is_not_an_image_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.tar"
    bogus.write_bytes(b"not a tar at all" * 100)
    with pytest.raises(InputFileError, match="not an OCI image archive"):
        import_oci(bogus, EnvironmentStore(tmp_path / "store"))
