"""An entry's ``Dockerfile`` built into an image, without Docker, inside the job's sandbox.

``build_image`` reads the Dockerfile (``environments.dockerfile``), refuses a ``FROM`` the
challenge does not offer, then builds each stage on a copy of its base tree in a capped tmpfs
workspace of the job's session. Every ``RUN`` (and the ``mkdir``/``cp`` behind ``WORKDIR`` and
``COPY``) is a run of that session on the writable tree (``RunSpec.root_tree``): the slot uid,
no network, no capabilities, the build's memory, process and time caps. The final stage's
changes become one layer over its base's layer, written with the image's config as an OCI
image archive (``environments.built_layers``). Images are kept in ``store`` by a key of the
context's digest, the Dockerfile's name and the bases' digests: the same context on the same
bases is a cache hit, with no sandbox run at all.

At prep, ``pipeline.entry_build`` calls :func:`build_image`; see ``docs/environments.md``
("Dockerfile entries"). Builds of one key take turns on its lock (:func:`build_lock`).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import posixpath
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.environments.build_pip import MOUNT as PIP_MOUNT
from proctor.environments.build_pip import host_pip_wheel, write_pip_tools
from proctor.environments.built_layers import (
    Layer,
    LayerTooLargeError,
    diff_layer,
    file_sha256,
    tree_bytes,
    write_oci_archive,
)
from proctor.environments.digests import canonical_tar
from proctor.environments.dockerfile import (
    MAX_BYTES,
    Dockerfile,
    Instruction,
    Stage,
    arg_default,
    check_bases,
    expand,
    ignored,
    image_name,
    parse_dockerfile,
    read_dockerignore,
)
from proctor.environments.entry_wheels import (
    REQUIREMENTS,
    download_entry_wheels,
    read_requirements,
)
from proctor.environments.store import BuiltEnvironment
from proctor.environments.wheels import Target
from proctor.errors import (
    ConfigError,
    EntryRequirementsError,
    ImageBuildError,
    JobCancelledError,
    PlatformError,
)
from proctor.sandbox.base import GiB, KiB, Limits, MiB, Mount, Outcome, RunSpec, SandboxSession
from proctor.spec.environment import ParticipantWheels
from proctor.wording import plural

DOCKERFILE = "Dockerfile"
FORMAT = 1
"""Bumped when the way images are built changes, so old images are not taken for new ones."""
ARCHIVE, LOG, RECORD = "image.tar", "build.log", "image.json"
PARTIAL, LOCK = ".partial-", ".lock"
"""A build under way is ``KEY.partial-XXXX`` (renamed to ``KEY`` when done), locked by
``KEY.lock``."""
LOCK_POLL_S = 0.5
COPY_MOUNT = "/.proctor-copy"
WHEELS_MOUNT = "/.proctor-wheels"
SKIPPED = (COPY_MOUNT.lstrip("/"), WHEELS_MOUNT.lstrip("/"), PIP_MOUNT.lstrip("/"))
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULT_SHELL = ("/bin/sh", "-c")
PIP_ENV = {
    "PIP_NO_INDEX": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_BREAK_SYSTEM_PACKAGES": "1",
}
"""pip in a ``RUN`` reads only the wheelhouse (there is no network), and installs into a
Debian base's ``/usr/local`` as it would into the ``python`` images' (no PEP 668 refusal).
These are the steps' variables only, not the image's."""
HOST_TOOL_S = 600
StepSink = Callable[[int, int, str], None]
"""Told of a build's steps: (steps ended, steps in all, one line), as
``ProgressListener.stage_step`` is: ``STEP 3/5: RUN …`` as each step starts, then the image."""
STEP_TEXT = 400
"""A step's line (in the log and its progress) is cut at this many characters."""
COPY_SCRIPT = r"""set -eu
dest=$1; todir=$2; shift 2
if [ "$todir" = 1 ]; then mkdir -p -- "$dest"; else mkdir -p -- "$(dirname -- "$dest")"; fi
for src do
  if [ -d "$src" ] && [ ! -L "$src" ]; then
    mkdir -p -- "$dest"
    cp -R -P --preserve=mode,timestamps -T -- "$src" "$dest"
  elif [ "$todir" = 1 ]; then
    cp -P --preserve=mode,timestamps -- "$src" "$dest/"
  else
    cp -P --preserve=mode,timestamps -T -- "$src" "$dest"
  fi
done
"""


@dataclass(frozen=True, slots=True)
class BuildLimits:
    """The caps of one build: wall seconds over all its steps, memory, disk, processes, log.

    ``disk_bytes`` is what the build may add to its base trees; the trees live in a tmpfs,
    so pages a step writes count against ``memory_bytes`` as well.
    """

    wall_s: float = 900.0
    memory_bytes: int = 4 * GiB
    disk_bytes: int = 4 * GiB
    processes: int = 512
    log_bytes: int = 512 * KiB
    cpus: float | None = None
    """The cores the steps may keep busy (a cgroup CPU quota; None: no cap)."""


@dataclass(frozen=True, slots=True)
class BaseImage:
    """A base a ``FROM`` may name: its root tree, its layer's sha256 and its variables.

    ``label`` says what it is in the report (``proctor/NAME``, ``NAME (imported)``).
    """

    root: Path
    digest: str
    env: Mapping[str, str] = field(default_factory=dict)
    label: str = ""


@dataclass(frozen=True, slots=True)
class BuildResult:
    """A built image: its archive, its build log, its manifest digest, and where it came from.

    ``key``: the store key (context and base digests); ``cached``: no step ran this time.
    """

    archive: Path
    log: Path
    digest: str
    key: str
    base: str
    base_digest: str
    cached: bool
    config: Mapping[str, Any]


def environment_base(built: BuiltEnvironment, name: str | None = None) -> BaseImage:
    """A declared environment as a base (its tree, digest and variables).

    ``name``: the environment's name in the challenge (default: its manifest's).
    """
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", **built.manifest.variables}
    label = f"proctor/{name or built.manifest.name}"
    return BaseImage(built.rootfs, built.manifest.digest, env, label)


def offered_bases(
    environments: Mapping[str, BuiltEnvironment],
    aliases: Mapping[str, str] = {},
    imported: Mapping[str, BaseImage] = {},
) -> dict[str, BaseImage]:
    """The bases of a challenge: ``proctor/NAME`` per environment, imports, and aliases.

    ``aliases`` maps a public name (``python:3.10.1-buster``) to an environment's name; one
    naming no environment is a ``ConfigError``.
    """
    bases = {
        f"proctor/{name}": environment_base(built, name) for name, built in environments.items()
    }
    bases.update(imported)
    for public, name in aliases.items():
        if name not in environments:
            known = ", ".join(sorted(environments)) or "none"
            raise ConfigError(
                f"entry_images.bases: {public!r} names the environment {name!r}, which is not "
                f"declared; use one of: {known}"
            )
        base = environment_base(environments[name], name)
        bases[public] = BaseImage(base.root, base.digest, base.env, f"{public} → proctor/{name}")
    return bases


def entry_wheelhouse(
    entry: Path,
    base: BuiltEnvironment,
    allowed: ParticipantWheels | None,
    folder: Path,
) -> Path | None:
    """The wheels of the entry's ``requirements.txt``, fetched by the host into ``folder``.

    None without a ``requirements.txt``; an ``EntryRequirementsError`` where the challenge
    does not allow participant wheels, or the file is refused. Resolved for ``base``'s
    Python and platform, its own pinned wheels as constraints (as participant wheels are).
    """
    requirements = entry / REQUIREMENTS
    if not requirements.is_file():
        return None
    if allowed is None or not allowed.allow:
        raise EntryRequirementsError(
            f"this challenge does not install packages from {REQUIREMENTS}: build on a base "
            "that holds them, or remove the file"
        )
    downloads = folder / "wheelhouse"
    download_entry_wheels(
        read_requirements(requirements, allowed),
        downloads,
        work=folder / "resolve",
        target=Target.for_suite(base.manifest.suite),
        pinned=dict(base.manifest.wheels),
        limits=allowed,
    )
    downloads.chmod(0o755)
    return downloads


def prep_entry_image(
    entry: Path,
    bases: Mapping[str, BaseImage],
    limits: BuildLimits,
    *,
    store: Path,
    session: SandboxSession,
    work: Path,
    wheelhouse: Path | None = None,
) -> BuildResult | None:
    """The prep stage's build: None when ``entry`` has no ``Dockerfile`` at its root.

    Else :func:`build_image` of the entry folder as the context; its ``ImageBuildError`` is
    the entry's failure, with the build log (``err.log``) as prep's diagnostics.
    """
    if not (entry / DOCKERFILE).is_file():
        return None
    return build_image(
        entry, bases, limits, store=store, session=session, work=work, wheelhouse=wheelhouse
    )


def final_base(context: Path, offered: Collection[str], dockerfile: str = DOCKERFILE) -> str:
    """The offered base (canonical name) the final stage of ``context``'s Dockerfile builds on.

    Raises ``ImageBuildError`` as :func:`build_image` does for a ``FROM`` not in ``offered``.
    """
    parsed = parse_dockerfile(_read_dockerfile(context / dockerfile))
    return _root_base(check_bases(parsed, list(offered)), len(parsed.stages) - 1)


def build_image(
    context: Path,
    bases: Mapping[str, BaseImage],
    limits: BuildLimits,
    *,
    store: Path,
    session: SandboxSession,
    work: Path,
    dockerfile: str = DOCKERFILE,
    wheelhouse: Path | None = None,
    on_step: StepSink | None = None,
) -> BuildResult:
    """Build ``context``'s Dockerfile on ``bases`` (FROM name → base) into ``store``.

    ``work``: a new folder for the build's capped workspace (removed afterwards), reachable
    by the session's slot. ``wheelhouse``: wheels the host resolved, shown read-only to every
    ``RUN`` with ``PIP_NO_INDEX`` and ``PIP_FIND_LINKS`` set, so ``pip install -r
    requirements.txt`` works without network. An entry's fault is an ``ImageBuildError``.
    ``on_step``: told of each step as it starts, then of the image (a cache hit: only that).
    """
    parsed = parse_dockerfile(_read_dockerfile(context / dockerfile))
    offered = {image_name(name): base for name, base in bases.items()}
    stage_bases = check_bases(parsed, list(bases))
    root_names = [_root_base(stage_bases, index) for index in range(len(parsed.stages))]
    pip = host_pip_wheel()
    digests = [offered[name].digest for name in root_names]
    key = _key(context, dockerfile, digests, wheelhouse, pip)
    plan = _Plan(parsed, stage_bases, root_names, offered, context, wheelhouse, key, pip)
    folder = store / key
    steps = _steps(parsed)
    if (folder / RECORD).is_file():
        return _told(_result(folder, cached=True), steps, on_step)
    store.mkdir(parents=True, exist_ok=True)

    def waiting() -> None:
        if on_step is not None:
            on_step(0, steps, "waiting for another job's build of the same files")

    with build_lock(store, key, session, on_wait=waiting):
        if (folder / RECORD).is_file():  # built by the job that held the lock before us
            return _told(_result(folder, cached=True), steps, on_step)
        partial = Path(tempfile.mkdtemp(prefix=f"{key}{PARTIAL}", dir=store))
        try:
            _build(plan, limits, session, work, partial, on_step=on_step)
            try:
                partial.rename(folder)
            except OSError:  # a store shared where flock does not reach: another host's image
                if not (folder / RECORD).is_file():
                    raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return _told(_result(folder, cached=False), steps, on_step)


def _steps(parsed: Dockerfile) -> int:
    """How many steps a build of ``parsed`` counts: each stage's ``FROM`` and instructions."""
    return sum(1 + len(stage.instructions) for stage in parsed.stages)


def _told(result: BuildResult, steps: int, on_step: StepSink | None) -> BuildResult:
    """``result``, once ``on_step`` is told the image is ready (built now, or before)."""
    if on_step is not None:
        how = "reused (the same files were built before)" if result.cached else "built"
        on_step(steps, steps, f"image {result.digest[:19]} {how}")
    return result


@contextlib.contextmanager
def build_lock(
    store: Path,
    key: str,
    session: SandboxSession | None = None,
    *,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold the exclusive lock of building ``key`` in ``store`` (``KEY.lock``, an ``flock``).

    Jobs of one submission (threads or processes) building the same context wait here for
    the first, then find its image. The wait polls ``session``'s cancel, every
    ``LOCK_POLL_S`` seconds: a cancelled job stops waiting (``JobCancelledError``).
    ``on_wait`` is called once when the lock is held by another (the wait begins).
    """
    with (store / f"{key}{LOCK}").open("a") as handle:
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if on_wait is not None and not told:
                    on_wait()
                    told = True
                if session is not None and session.cancelled:
                    raise JobCancelledError("the build was cancelled") from None
                time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def stored_builds(store: Path) -> list[Path]:
    """What a prune of the build ``store`` removes: built images, base layers, leftovers.

    A key whose build holds its lock is left alone (and so are the base layers, while any
    build is under way).
    """
    if not store.is_dir():
        return []
    busy = {path.name.removesuffix(LOCK) for path in store.glob(f"*{LOCK}")}
    busy = {key for key in busy if is_locked(store, key)}
    found = []
    for path in sorted(store.iterdir()):
        key = path.name.partition(".")[0]  # KEY, KEY.lock, KEY.partial-XXXX
        if key in busy or (busy and path.name == "bases"):  # a build under way reads its base
            continue
        found.append(path)
    return found


def is_locked(store: Path, key: str) -> bool:
    """Whether a build of ``key`` holds its lock in ``store`` now (a prune leaves it alone)."""
    lock = store / f"{key}{LOCK}"
    if not lock.is_file():
        return False
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _read_dockerfile(path: Path) -> str:
    if path.is_symlink() or not path.is_file():
        raise ImageBuildError(f"{path.name} is missing or not a plain file at the entry's root")
    if path.stat().st_size > MAX_BYTES:
        raise ImageBuildError(f"{path.name} is over {MAX_BYTES} bytes; keep it short")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ImageBuildError(f"{path.name} is not UTF-8 text") from None


def _root_base(stage_bases: list[str | int], index: int) -> str:
    """The offered base a stage's chain of ``FROM`` lines ends at."""
    found = stage_bases[index]
    while isinstance(found, int):
        found = stage_bases[found]
    return found


def _key(
    context: Path,
    dockerfile: str,
    base_digests: list[str],
    wheelhouse: Path | None,
    pip: Path | None,
) -> str:
    """The store key of a build: what it reads, so the same inputs find the same image.

    The context's canonical digest, the Dockerfile's name, the bases, the wheelhouse's wheels
    and the pip offered to the steps.
    """
    context_digest, _ = canonical_tar(context)
    wheels = sorted(
        (p.name, file_sha256(p))
        for p in (wheelhouse.iterdir() if wheelhouse else ())
        if p.is_file()
    )
    document = {"format": FORMAT, "context": context_digest, "dockerfile": dockerfile,
                "bases": base_digests, "wheels": wheels}  # fmt: skip
    if pip is not None:
        document["pip"] = pip.name
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def _result(folder: Path, *, cached: bool) -> BuildResult:
    record = json.loads((folder / RECORD).read_text())
    return BuildResult(
        archive=folder / ARCHIVE,
        log=folder / LOG,
        digest=record["digest"],
        key=folder.name,
        base=record["base"],
        base_digest=record["base_digest"],
        cached=cached,
        config=record["config"],
    )


class _Log:
    """The build log, capped at ``limit`` bytes (what is past the cap is dropped, said once)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.cut = False

    def add(self, text: str) -> None:
        if not text:
            return
        if not text.endswith("\n"):
            text += "\n"
        room = self.limit - self.size
        if room <= 0:
            self.cut = True
            return
        self.parts.append(text[:room])
        self.size += min(len(text), room)
        self.cut = self.cut or len(text) > room

    def text(self) -> str:
        return "".join(self.parts) + ("[the log was cut at its size cap]\n" if self.cut else "")


@dataclass
class _State:
    """A stage's build state: variables, working folder, user, command, shell, labels."""

    env: dict[str, str]
    args: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    user: str = ""
    cmd: list[str] | None = None
    entrypoint: list[str] | None = None
    shell: tuple[str, ...] = DEFAULT_SHELL
    labels: dict[str, str] = field(default_factory=dict)

    def values(self) -> dict[str, str]:
        """What ``$NAME`` expands to: the ARGs, then the ENV over them."""
        return {**self.args, **self.env}

    def config(self) -> dict[str, Any]:
        """The OCI config's ``config`` part."""
        found: dict[str, Any] = {"Env": [f"{k}={v}" for k, v in self.env.items()]}
        found["WorkingDir"] = self.workdir
        if self.user:
            found["User"] = self.user
        if self.cmd is not None:
            found["Cmd"] = self.cmd
        if self.entrypoint is not None:
            found["Entrypoint"] = self.entrypoint
        if self.labels:
            found["Labels"] = dict(self.labels)
        return found


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a build starts from: the parsed file, each stage's base, the context, its key."""

    parsed: Dockerfile
    stage_bases: list[str | int]
    root_names: list[str]
    offered: Mapping[str, BaseImage]
    context: Path
    wheelhouse: Path | None
    key: str
    pip: Path | None = None


class _Builder:
    """One build: the workspace, the clock, the log, each stage's tree and state.

    The clock counts the steps' own runs (not the host copying base trees), as ``wall_s``.
    """

    def __init__(
        self,
        plan: _Plan,
        session: SandboxSession,
        limits: BuildLimits,
        space: Path,
        on_step: StepSink | None = None,
    ) -> None:
        self.plan = plan
        self.on_step = on_step
        self.session = session
        self.limits = limits
        self.space = space
        self.staged = space / "context"
        self.log = _Log(limits.log_bytes)
        self.used_s = 0.0
        owner = os.stat(space)
        self.owner = (owner.st_uid, owner.st_gid)
        self.trees: list[Path] = []
        self.states: list[_State] = []
        self.step = 0
        self.steps = _steps(plan.parsed)
        self.pip_tools = write_pip_tools(plan.pip, space / "pip") if plan.pip else None

    def next_step(self, text: str) -> None:
        """Start the next step: its ``STEP k/n: …`` line in the log, and told ``on_step``."""
        self.step += 1
        line = f"STEP {self.step}/{self.steps}: {text}"[:STEP_TEXT]
        self.log.add(line)
        if self.on_step is not None:
            self.on_step(self.step - 1, self.steps, line.splitlines()[0])

    def fail(self, message: str) -> ImageBuildError:
        """The entry's failure, with the log so far and the reason (past the log's cap too)."""
        return ImageBuildError(message, log=f"{self.log.text()}error: {message}\n")

    def copy_tree(self, source: Path, target: Path) -> None:
        """A copy of ``source`` at ``target`` that the slot owns (host side, as root)."""
        self._host(["cp", "-a", "--", f"{source}/.", str(target)], f"copying {source}")
        if os.geteuid() == 0:
            uid, gid = self.owner
            self._host(["chown", "-R", "-h", f"{uid}:{gid}", "--", str(target)], "re-owning")

    def _host(self, argv: list[str], what: str) -> None:
        tool = shutil.which(argv[0])
        if tool is None:
            raise PlatformError(f"`{argv[0]}` is not installed on the host")
        done = subprocess.run(  # noqa: S603 - a fixed tool on host-made paths
            [tool, *argv[1:]], capture_output=True, text=True, timeout=HOST_TOOL_S, check=False
        )
        if done.returncode != 0:
            detail = done.stderr.strip()[-400:]
            if "No space left" in detail:
                raise self.fail(f"{what}: the build's disk cap is full")
            raise PlatformError(f"{what} failed on the host: {detail}")

    def run(
        self, argv: list[str], state: _State, tree: Path, mounts: list[Mount], cwd: str = ""
    ) -> Outcome:
        """Run ``argv`` on ``tree`` in the session, with what is left of the build's time."""
        left = self.limits.wall_s - self.used_s
        if left <= 0:
            return Outcome(exit_status=None, timed_out=True)
        env = {"HOME": "/root", "PATH": DEFAULT_PATH, **state.values(), **PIP_ENV}
        if self.plan.wheelhouse is not None:
            mounts = [*mounts, Mount(self.plan.wheelhouse, WHEELS_MOUNT)]
            env["PIP_FIND_LINKS"] = WHEELS_MOUNT
        if self.pip_tools is not None:  # last on PATH: a base's own pip comes first
            mounts = [*mounts, Mount(self.pip_tools, PIP_MOUNT)]
            env["PATH"] = f"{env['PATH']}:{PIP_MOUNT}/bin"
        limits = Limits(
            wall_s=left,
            memory_bytes=self.limits.memory_bytes,
            processes=self.limits.processes,
            file_size_bytes=self.limits.disk_bytes,
            open_files=1024,
            log_bytes=self.limits.log_bytes,
            cpus=self.limits.cpus,
        )
        spec = RunSpec(argv, mounts=mounts, limits=limits, env=env, cwd=cwd or state.workdir,
                       root_tree=tree)  # fmt: skip
        outcome = self.session.run(spec)
        self.used_s += outcome.wall_s
        self.log.add(outcome.stdout)
        self.log.add(outcome.stderr)
        return outcome

    def check(self, outcome: Outcome, instruction: Instruction) -> None:
        """Raise the step's failure, if it failed, as the entry's (a cancel as a cancel)."""
        if outcome.succeeded:
            return
        if self.session.cancelled:
            raise JobCancelledError("the build was cancelled")
        if outcome.timed_out:
            raise self.fail(
                f"{instruction.where()}: the build ran past its time limit of "
                f"{self.limits.wall_s:g} s"
            )
        if outcome.memory_exceeded:
            raise self.fail(
                f"{instruction.where()}: the build exceeded its memory limit of "
                f"{self.limits.memory_bytes} bytes (files it writes count too)"
            )
        raise self.fail(f"{instruction.where()} {outcome.describe()}")


def _build(
    plan: _Plan,
    limits: BuildLimits,
    session: SandboxSession,
    work: Path,
    partial: Path,
    *,
    on_step: StepSink | None = None,
) -> None:
    """Build every stage in a workspace, then write the final image into ``partial``."""
    roots = [plan.offered[name] for name in plan.root_names]
    size = tree_bytes(plan.context) + limits.disk_bytes + 64 * MiB
    size += sum(tree_bytes(base.root) for base in roots)
    with session.workspace(work, size_bytes=size) as space:
        builder = _Builder(plan, session, limits, space, on_step)
        builder.log.add(
            f"building {plural(len(plan.parsed.stages), 'stage')}, {plural(builder.steps, 'step')}"
        )
        builder.copy_tree(plan.context, _fresh(builder.staged))
        left_out = _apply_dockerignore(builder.staged)
        if left_out:
            builder.log.add(f".dockerignore: {plural(left_out, 'path')} left out of the context")
        for index, stage in enumerate(plan.parsed.stages):
            _stage(builder, index, stage)
        base = roots[-1]
        layers = _layers(builder, base, builder.trees[-1], store=partial.parent, into=partial)
        config = builder.states[-1].config()
        config.setdefault("Labels", {})["org.proctor.image.base"] = base.label
        ref = f"entry:{plan.key[:12]}"
        digest = write_oci_archive(partial / ARCHIVE, layers, config, ref=ref)
        layers[-1].path.unlink()
        builder.log.add(f"image {digest} ({len(layers)} layers)")
        (partial / LOG).write_text(builder.log.text(), encoding="utf-8")
    record = {"digest": digest, "base": base.label or plan.root_names[-1],
              "base_digest": base.digest, "config": config}  # fmt: skip
    (partial / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True))


def _apply_dockerignore(staged: Path) -> int:
    """Remove from the build's copy of the context what its ``.dockerignore`` names.

    Files first, then folders left empty, so a ``!`` rule keeps a file inside an ignored
    folder (and the folders above it). Links are removed as links, never followed.
    """
    rules_file = staged / ".dockerignore"
    if rules_file.is_symlink() or not rules_file.is_file():
        return 0
    if rules_file.stat().st_size > MAX_BYTES:
        raise ImageBuildError(f".dockerignore is over {MAX_BYTES} bytes; keep it short")
    rules = read_dockerignore(rules_file.read_text(encoding="utf-8", errors="replace"))
    removed = 0
    for folder, folders, files in os.walk(staged, topdown=False):
        here = Path(folder)
        prefix = here.relative_to(staged).as_posix()
        for name in [*files, *folders]:
            path = here / name
            if not ignored(rules, name if prefix == "." else f"{prefix}/{name}"):
                continue
            if path.is_symlink() or not path.is_dir():
                path.unlink()
            elif not any(path.iterdir()):
                path.rmdir()
            else:
                continue
            removed += 1
    return removed


def _fresh(path: Path) -> Path:
    path.mkdir()
    return path


def _stage(builder: _Builder, index: int, stage: Stage) -> None:
    """Build one stage: copy its base tree, then run its instructions in order."""
    builder.next_step(f"FROM {stage.base}")
    tree = _fresh(builder.space / f"stage-{index}")
    source = builder.plan.stage_bases[index]
    if isinstance(source, int):
        builder.copy_tree(builder.trees[source], tree)
        earlier = builder.states[source]
        state = _State(dict(earlier.env), workdir=earlier.workdir, user=earlier.user,
                       cmd=earlier.cmd, entrypoint=earlier.entrypoint, shell=earlier.shell,
                       labels=dict(earlier.labels))  # fmt: skip
    else:
        base = builder.plan.offered[source]
        builder.copy_tree(base.root, tree)
        state = _State({"PATH": DEFAULT_PATH, **base.env})
    builder.trees.append(tree)
    builder.states.append(state)
    for instruction in stage.instructions:
        builder.next_step(f"{instruction.keyword} {instruction.args}")
        handler = HANDLERS.get(instruction.keyword, _ignored)
        handler(builder, instruction, state, tree)


def _run(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    argv = list(instruction.exec_form or (*state.shell, instruction.args))
    builder.check(builder.run(argv, state, tree, []), instruction)


def _workdir(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    asked = expand(instruction.args, state.values())
    target = posixpath.normpath(posixpath.join(state.workdir, asked))
    if target.split("/")[1:2] in (["proc"], ["dev"], ["etc"]) or target.startswith("//"):
        raise builder.fail(f"{instruction.where()}: {target} cannot be the working folder")
    if target != "/":
        made = builder.run(["mkdir", "-p", "--", target], state, tree, [], cwd="/")
        builder.check(made, instruction)
    state.workdir = target


def _env(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    state.env.update(_pairs(instruction, state.values(), legacy=True))


def _arg(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    name, default = arg_default(instruction, state.values())
    global_args = builder.plan.parsed.global_args
    state.args[name] = default if default is not None else global_args.get(name, "")


def _label(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    state.labels.update(_pairs(instruction, state.values(), legacy=False))


def _user(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    state.user = expand(instruction.args, state.values()).strip()
    builder.log.add("note: RUN steps run as root of the build; USER applies when it runs")


def _command(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    command = list(instruction.exec_form or (*state.shell, instruction.args))
    if instruction.keyword == "CMD":
        state.cmd = command
    else:
        state.entrypoint = command


def _shell(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    if not instruction.exec_form:
        raise builder.fail(f'{instruction.where()}: write SHELL as JSON, ["/bin/sh", "-c"]')
    state.shell = instruction.exec_form


def _ignored(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    builder.log.add(f"note: {instruction.keyword} is recorded by Docker only; Proctor ignores it")


def _pairs(instruction: Instruction, values: Mapping[str, str], *, legacy: bool) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of ENV or LABEL (ENV's old ``KEY VALUE`` form too)."""
    try:
        words = shlex.split(instruction.args)
    except ValueError as err:
        raise ImageBuildError(f"{instruction.where()}: {err}") from None
    if legacy and words and "=" not in words[0]:
        name, _, value = instruction.args.strip().partition(" ")
        return {name: expand(value.strip(), values)}
    found: dict[str, str] = {}
    for word in words:
        name, has_value, value = word.partition("=")
        if not has_value or not name:
            raise ImageBuildError(f"{instruction.where()}: {word!r} is not KEY=VALUE")
        found[name] = expand(value, {**values, **found})
    return found


def _copy(builder: _Builder, instruction: Instruction, state: _State, tree: Path) -> None:
    """COPY/ADD: sources from the context (or ``--from`` a stage), copied in the sandbox."""
    words = list(instruction.exec_form or expand(instruction.args, state.values()).split())
    if len(words) < 2:
        raise builder.fail(f"{instruction.where()}: write {instruction.keyword} SOURCE... DEST")
    *sources, dest = words
    origin = builder.staged
    if "from" in instruction.flags:
        origin = _origin(builder, instruction)
    if instruction.keyword == "ADD":
        for source in sources:
            if "://" in source or source.startswith("git@"):
                raise builder.fail(
                    f"{instruction.where()}: builds have no network; put {source} in the "
                    "entry and COPY it"
                )
    matches = [m for source in sources for m in _matches(builder, instruction, origin, source)]
    target = posixpath.normpath(posixpath.join(state.workdir, dest))
    to_dir = dest.endswith("/") or len(matches) > 1 or dest in (".", "./")
    argv = ["/bin/sh", "-c", COPY_SCRIPT, "copy", target, "1" if to_dir else "0"]
    argv += [posixpath.join(COPY_MOUNT, m) if m != "." else COPY_MOUNT for m in matches]
    # The build's own files (its copy of the context, an earlier stage) are bound as they are:
    # a read-only mount would be packed into an image first (sandbox.views), losing mtimes.
    ours = origin == builder.staged or origin in builder.trees
    outcome = builder.run(argv, state, tree, [Mount(origin, COPY_MOUNT, writable=ours)])
    builder.check(outcome, instruction)


def _origin(builder: _Builder, instruction: Instruction) -> Path:
    name, offered = instruction.flags["from"], builder.plan.offered
    earlier = builder.plan.parsed.stage_index(name, len(builder.trees) - 1)
    if earlier is not None:
        return builder.trees[earlier]
    if image_name(name) in offered:
        return offered[image_name(name)].root
    raise builder.fail(
        f"{instruction.where()}: --from={name} names no earlier stage and no offered base"
    )


def _matches(builder: _Builder, instruction: Instruction, origin: Path, source: str) -> list[str]:
    """The paths (relative to ``origin``) a COPY source names; none may lead outside it."""
    relative = posixpath.normpath("/" + source).lstrip("/") or "."
    if relative == ".":
        return ["."]
    found = sorted(glob.glob(relative, root_dir=origin, include_hidden=True))
    if not found:
        raise builder.fail(f"{instruction.where()}: {source} matches nothing in the build context")
    top = os.path.realpath(origin)
    for match in found:
        parent = os.path.realpath(os.path.join(origin, os.path.dirname(match)))
        if parent != top and not parent.startswith(top + os.sep):
            raise builder.fail(
                f"{instruction.where()}: {source} leads through a link out of the build context"
            )
    return found


def _layers(
    builder: _Builder, base: BaseImage, tree: Path, *, store: Path, into: Path
) -> list[Layer]:
    """The base's layer (kept once per base in ``store/bases``) and the build's own layer."""
    bases = store / "bases"
    bases.mkdir(exist_ok=True)
    base_layer = bases / f"{base.digest}.tar"
    if not base_layer.is_file():
        handle, name = tempfile.mkstemp(prefix=f"{base.digest}.tar.partial-", dir=bases)
        partial = Path(name)
        with os.fdopen(handle, "wb") as sink:
            digest, _ = canonical_tar(base.root, sink)
        if digest != base.digest:
            partial.unlink()
            raise PlatformError(f"the base {base.label} no longer matches its digest: rebuild it")
        partial.replace(base_layer)
    own = into / "layer.tar"
    try:
        with own.open("wb") as sink:
            summary = diff_layer(
                base.root, tree, sink, skip=SKIPPED, max_bytes=builder.limits.disk_bytes
            )
    except LayerTooLargeError as err:
        raise builder.fail(f"{err} (disk_bytes; sparse files count at their full size)") from None
    for path in summary.skipped:
        builder.log.add(f"note: {path} is not a file, folder or link; left out of the image")
    builder.log.add(f"layer: {summary.entries} entries, {summary.whiteouts} removals, "
                    f"{summary.size} bytes")  # fmt: skip
    layers = [Layer(base_layer, base.digest, f"FROM {base.label}")]
    layer = Layer(own, summary.digest, "proctor image build")
    with contextlib.suppress(OSError):
        own.chmod(0o644)
    return [*layers, layer]


_Handler = Callable[[_Builder, Instruction, _State, Path], None]
HANDLERS: dict[str, _Handler] = {
    "RUN": _run, "COPY": _copy, "ADD": _copy, "WORKDIR": _workdir, "ENV": _env, "ARG": _arg,
    "LABEL": _label, "USER": _user, "CMD": _command, "ENTRYPOINT": _command, "SHELL": _shell,
}  # fmt: skip
"""What each instruction does; the others (EXPOSE, VOLUME, ...) are noted and ignored."""
