"""An entry's Dockerfile built without Docker: real bwrap, the reference environment as base.

Each build copies the base tree into a capped tmpfs, runs the steps in the job's sandbox
session on it and writes an OCI archive; nothing comes from a registry.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import SLOT_BASE

from proctor.environments.store import BuiltEnvironment
from proctor.errors import ConfigError, EntryRequirementsError, ImageBuildError
from proctor.pipeline.image_build import (
    BaseImage,
    BuildLimits,
    BuildResult,
    build_image,
    entry_wheelhouse,
    offered_bases,
    prep_entry_image,
)
from proctor.sandbox.base import MiB
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from proctor.spec.environment import ParticipantWheels

pytestmark = [pytest.mark.sandbox, pytest.mark.environment, pytest.mark.slow]
LIMITS = BuildLimits(wall_s=120, memory_bytes=1024 * MiB, disk_bytes=128 * MiB, processes=64)
ALIAS = "python:3.10.1-buster"


@pytest.fixture(scope="module")
def image_store() -> Iterator[Path]:
    """One store for the module: the base's layer is written once, not per test."""
    folder = Path(tempfile.mkdtemp(prefix="proctor-images-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def bases(reference_env: BuiltEnvironment) -> dict[str, BaseImage]:
    return offered_bases({"reference": reference_env}, {ALIAS: "reference"})


def _context(folder: Path, dockerfile: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Dockerfile").write_text(dockerfile)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _build(
    context: Path,
    bases: dict[str, BaseImage],
    store: Path,
    shared_dir: Path,
    limits: BuildLimits = LIMITS,
) -> BuildResult:
    sandbox = BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE))
    with sandbox.session() as session:
        return build_image(
            context, bases, limits, store=store, session=session, work=shared_dir / "build"
        )


def _failure(
    context: Path, bases: dict[str, BaseImage], store: Path, shared_dir: Path, limits: BuildLimits
) -> ImageBuildError:
    with pytest.raises(ImageBuildError) as caught:
        _build(context, bases, store, shared_dir, limits)
    assert not (shared_dir / "build").exists()  # the workspace went with the build
    return caught.value


def _image(archive: Path) -> tuple[dict[str, Any], list[dict[str, bytes | str]]]:
    """The config of the archive's image and, per layer, its members (name → bytes or link)."""
    with tarfile.open(archive) as tar:

        def blob(digest: str) -> Any:
            found = tar.extractfile(f"blobs/sha256/{digest.removeprefix('sha256:')}")
            assert found is not None
            return found

        index = json.load(tar.extractfile("index.json"))  # type: ignore[arg-type]
        manifest = json.load(blob(index["manifests"][0]["digest"]))
        config = json.load(blob(manifest["config"]["digest"]))
        layers = []
        for descriptor in manifest["layers"][1:]:  # the base's layer is the environment's
            with tarfile.open(fileobj=blob(descriptor["digest"])) as layer:
                layers.append({
                    m.name: (layer.extractfile(m).read() if m.isreg() else m.linkname)  # type: ignore[union-attr]
                    for m in layer.getmembers()
                })  # fmt: skip
        return config, layers


def test_copy_and_run_build_an_image_archive_on_an_aliased_base(
    bases: dict[str, BaseImage],
    reference_env: BuiltEnvironment,
    image_store: Path,
    shared_dir: Path,
) -> None:
    context = _context(
        shared_dir / "entry",
        f"FROM {ALIAS}\n"
        "RUN mkdir /challenge\n"
        "COPY ./ /challenge\n"
        "WORKDIR /challenge\n"
        "ENV MODEL_DIR=/challenge/model\n"
        'RUN mkdir -p $MODEL_DIR && python3 -c "print(6 * 7)" > $MODEL_DIR/answer '
        "&& rm -rf /usr/share/doc && ln -s /etc/shadow /challenge/leak && ln -s / /challenge/up "
        "&& mkfifo /challenge/fifo\n"
        'CMD ["python3", "run_model.py"]\n',
        {"team_code.py": "def train_model():\n    pass\n", "sub/notes.txt": "n",
         ".dockerignore": "# as Docker reads it\ndata\n!data/keep.txt\n**/*.pyc\n",
         "data/big.bin": "x" * 1000, "data/keep.txt": "k", "sub/cache.pyc": "c"},
    )  # fmt: skip
    built = _build(context, bases, image_store, shared_dir)
    assert not built.cached
    assert built.base_digest == reference_env.manifest.digest
    assert built.base == f"{ALIAS} → proctor/reference"
    config, (layer,) = _image(built.archive)
    assert config["rootfs"]["diff_ids"][0] == f"sha256:{reference_env.manifest.digest}"
    assert config["config"]["WorkingDir"] == "/challenge"
    assert config["config"]["Cmd"] == ["python3", "run_model.py"]
    assert "MODEL_DIR=/challenge/model" in config["config"]["Env"]
    assert layer["challenge/team_code.py"] == b"def train_model():\n    pass\n"
    assert layer["challenge/sub/notes.txt"] == b"n"
    assert layer["challenge/data/keep.txt"] == b"k"
    assert "challenge/data/big.bin" not in layer and "challenge/sub/cache.pyc" not in layer
    assert layer["challenge/model/answer"] == b"42\n"
    assert "usr/share/.wh.doc" in layer
    # links a step planted are kept as links, never followed by the host; a FIFO is left out
    assert (layer["challenge/leak"], layer["challenge/up"]) == ("/etc/shadow", "/")
    assert "challenge/fifo" not in layer
    # skopeo (a system package Proctor already needs) reads the archive as an OCI image
    shown = subprocess.run(
        ["skopeo", "inspect", "--config", f"oci-archive:{built.archive}"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert json.loads(shown.stdout)["rootfs"] == config["rootfs"]
    log = built.log.read_text()
    assert "STEP 1/7: FROM python:3.10.1-buster" in log and "RUN mkdir /challenge" in log
    assert "challenge/fifo is not a file, folder or link" in log


def test_a_second_build_of_the_same_context_is_a_cache_hit(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry", "FROM proctor/reference\nCOPY a.txt /a.txt\n", {"a.txt": "one"}
    )
    first = _build(context, bases, image_store, shared_dir)
    second = _build(context, bases, image_store, shared_dir)
    assert not first.cached and second.cached
    assert (second.digest, second.archive) == (first.digest, first.archive)
    (context / "a.txt").write_text("two")
    changed = _build(context, bases, image_store, shared_dir)
    assert not changed.cached and changed.digest != first.digest


def test_jobs_building_the_same_context_at_once_build_it_once(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry", "FROM proctor/reference\nRUN sleep 1 && echo once > /once\n"
    )
    sandbox = BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE))

    def build(job: int) -> BuildResult:
        with sandbox.session() as session:
            return build_image(context, bases, LIMITS, store=image_store, session=session,
                               work=shared_dir / f"build-{job}")  # fmt: skip

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(build, (1, 2))
    assert sorted((first.cached, second.cached)) == [False, True]  # one waited for the other
    assert first.digest == second.digest and first.archive == second.archive


def test_a_later_stage_copies_from_an_earlier_one(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry",
        "ARG PY=3.10.1-buster\n"
        "FROM proctor/reference AS build\n"
        "RUN mkdir /out && echo compiled > /out/tool && echo scratch > /scratch\n"
        "FROM python:${PY}\n"
        "COPY --from=build /out/tool /usr/local/bin/tool\n",
    )
    built = _build(context, bases, image_store, shared_dir)
    _, (layer,) = _image(built.archive)
    assert layer["usr/local/bin/tool"] == b"compiled\n"
    assert "scratch" not in layer


def test_a_base_the_challenge_does_not_offer_fails_with_the_list(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(shared_dir / "entry", "FROM python:3.12\nRUN true\n")
    error = _failure(context, bases, image_store, shared_dir, LIMITS)
    assert "FROM python:3.12 is not a base this challenge offers" in str(error)
    assert "proctor/reference" in str(error) and ALIAS in str(error)


def test_the_host_postgresql_is_unreachable_during_the_build(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    with socket.create_connection(("127.0.0.1", 5432), timeout=5):
        pass  # the service is there on the host
    probe = (
        "import socket, sys, urllib.request\n"
        "for host, port in [('127.0.0.1', 5432), ('127.0.0.1', 6379), ('1.1.1.1', 80)]:\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=3).close()\n"
        "        print('REACHED', host, port); sys.exit(0)\n"
        "    except OSError as err:\n"
        "        print('refused', host, port, err)\n"
        "for path in ['/usr/bin/mmdebstrap', '/var/lib/proctor', '/work']:\n"
        "    if __import__('os').path.exists(path):\n"
        "        print('HOST FILE', path)\n"
        "sys.exit(3)\n"
    )
    context = _context(
        shared_dir / "entry",
        "FROM proctor/reference\nCOPY probe.py /probe.py\nRUN python3 /probe.py\n",
        {"probe.py": probe},
    )
    error = _failure(context, bases, image_store, shared_dir, LIMITS)
    assert "line 3 (RUN) exited with status 3" in str(error)
    assert "REACHED" not in error.log and "refused 127.0.0.1 5432" in error.log
    assert "HOST FILE" not in error.log and Path("/usr/bin/mmdebstrap").exists()


def test_a_fork_bomb_is_contained_as_the_entrys_failure(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry", "FROM proctor/reference\nRUN b() { b | b & }; b; sleep 600\n"
    )
    limits = BuildLimits(wall_s=10, memory_bytes=512 * MiB, disk_bytes=64 * MiB, processes=32)
    error = _failure(context, bases, image_store, shared_dir, limits)
    assert "line 2 (RUN): the build ran past its time limit of 10 s" in str(error)
    # the slot is usable at once: every process of the bomb went with the step
    again = _context(shared_dir / "again", "FROM proctor/reference\nRUN echo after > /after\n")
    assert _build(again, bases, image_store, shared_dir).log.read_text()


def test_a_build_that_fills_its_disk_fails(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry",
        "FROM proctor/reference\n"
        "RUN for i in $(seq 1 200); do head -c 16777216 /dev/zero > /fill$i || exit 4; done\n",
    )
    limits = BuildLimits(wall_s=120, memory_bytes=4096 * MiB, disk_bytes=64 * MiB, processes=32)
    error = _failure(context, bases, image_store, shared_dir, limits)
    assert "exited with status 4" in str(error)
    assert "No space left on device" in error.log


def test_sparse_files_past_the_disk_cap_fail_before_the_layer_is_written(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry",
        "FROM proctor/reference\n"
        "RUN for i in $(seq 1 40); do truncate -s 60M /sparse$i || exit 4; done; du -sk /sparse1\n",
    )
    limits = BuildLimits(wall_s=60, memory_bytes=512 * MiB, disk_bytes=64 * MiB, processes=32)
    error = _failure(context, bases, image_store, shared_dir, limits)
    assert "over the cap of 67108864" in str(error) and "sparse" in str(error)
    assert not list(image_store.glob("*.partial-*"))


def test_a_build_past_its_memory_is_stopped(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(
        shared_dir / "entry",
        'FROM proctor/reference\nRUN python3 -c "b = bytearray(1 << 30); print(len(b))"\n',
    )
    limits = BuildLimits(wall_s=60, memory_bytes=256 * MiB, disk_bytes=64 * MiB, processes=32)
    error = _failure(context, bases, image_store, shared_dir, limits)
    assert "line 2 (RUN)" in str(error)
    assert "memory limit" in str(error) or "MemoryError" in error.log


def test_a_build_past_its_time_is_stopped(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(shared_dir / "entry", "FROM proctor/reference\nRUN sleep 600\n")
    limits = BuildLimits(wall_s=3, memory_bytes=512 * MiB, disk_bytes=64 * MiB, processes=32)
    error = _failure(context, bases, image_store, shared_dir, limits)
    assert "line 2 (RUN): the build ran past its time limit of 3 s" in str(error)


def test_a_copy_through_a_link_out_of_the_context_is_refused(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    context = _context(shared_dir / "entry", "FROM proctor/reference\nCOPY out/passwd /x\n")
    (context / "out").symlink_to("/etc")
    error = _failure(context, bases, image_store, shared_dir, LIMITS)
    assert "leads through a link out of the build context" in str(error)


def test_an_entry_without_a_dockerfile_builds_nothing(
    bases: dict[str, BaseImage], image_store: Path, shared_dir: Path
) -> None:
    entry = shared_dir / "entry"
    entry.mkdir()
    (entry / "team_code.py").write_text("")
    sandbox = BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE))
    with sandbox.session() as session:
        found = prep_entry_image(
            entry, bases, LIMITS, store=image_store, session=session, work=shared_dir / "b"
        )
    assert found is None


def test_requirements_reach_the_build_as_a_wheelhouse_the_host_fetched(
    bases: dict[str, BaseImage],
    reference_env: BuiltEnvironment,
    image_store: Path,
    shared_dir: Path,
) -> None:
    install = (
        "import glob, os, zipfile; assert os.environ['PIP_NO_INDEX'] == '1'; "
        "assert os.environ['PIP_BREAK_SYSTEM_PACKAGES'] == '1'; "
        "[zipfile.ZipFile(w).extractall('/usr/local/lib/python3.11/dist-packages') "
        "for w in glob.glob(os.environ['PIP_FIND_LINKS'] + '/*.whl')]"
    )
    context = _context(
        shared_dir / "entry",
        "FROM proctor/reference\n"
        f'RUN python3 -c "{install}"\n'
        'RUN python3 -c "import tabulate; print(tabulate.__version__)"\n',
        {"requirements.txt": "tabulate==0.9.0\n"},
    )
    with pytest.raises(EntryRequirementsError, match="does not install packages"):
        entry_wheelhouse(context, reference_env, None, shared_dir / "wheels")
    allowed = ParticipantWheels(allow=True)
    wheelhouse = entry_wheelhouse(context, reference_env, allowed, shared_dir / "wheels")
    assert wheelhouse is not None
    sandbox = BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE))
    with sandbox.session() as session:
        built = prep_entry_image(
            context, bases, LIMITS, store=image_store, session=session,
            work=shared_dir / "build", wheelhouse=wheelhouse,
        )  # fmt: skip
    assert built is not None
    _, (layer,) = _image(built.archive)
    assert "usr/local/lib/python3.11/dist-packages/tabulate/__init__.py" in layer
    assert not any(name.startswith(".proctor") for name in layer)
    assert "0.9.0" in built.log.read_text()
    config, _ = _image(built.archive)
    assert not any(item.startswith("PIP_") for item in config["config"]["Env"])


def test_an_alias_must_name_a_declared_environment(reference_env: BuiltEnvironment) -> None:
    with pytest.raises(ConfigError, match=r"'python:3\.12' names the environment 'py312'"):
        offered_bases({"reference": reference_env}, {"python:3.12": "py312"})
    offered = offered_bases({"reference": reference_env}, {ALIAS: "reference"})
    assert sorted(offered) == ["proctor/reference", ALIAS]
    assert offered[ALIAS].digest == offered["proctor/reference"].digest
