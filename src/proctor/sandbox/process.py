"""The ``process`` backend: no isolation at all, for trusted code only (organizers' own tools).

It refuses to run unless ``Settings.allow_unsandboxed`` is set. Commands run as the caller, with
the same rlimits, cgroup limits (where writable), wall clock and bounded output as the bwrap
backend, but they see the whole host. Mounts cannot be applied without namespaces, so each
mount's ``target`` prefix is replaced by its ``source`` in ``argv``, ``cwd`` and the values of
``env``; the command must therefore use the paths it is given rather than fixed ones. Processes
that leave the process group (``setsid``) escape the wall clock unless a cgroup is available.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from proctor.errors import SandboxUnavailableError, UsageError
from proctor.sandbox.base import Mount, Outcome, RunSpec, plain_workspace
from proctor.sandbox.cgroups import CgroupHost
from proctor.sandbox.launch import limits_prefix, run_cgroup
from proctor.sandbox.runs import RunGroup
from proctor.sandbox.session import SessionSandbox
from proctor.sandbox.slots import claim_slot
from proctor.sandbox.supervise import ClockPipe, supervise
from proctor.settings import Settings

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def _translate(value: str, mounts: Sequence[Mount]) -> str:
    """Replace the longest mount target that prefixes ``value`` by its host source."""
    for mount in sorted(mounts, key=lambda m: len(m.target), reverse=True):
        target = mount.target.rstrip("/")
        if value == target or value.startswith(target + "/"):
            return str(mount.source) + value[len(target) :]
    return value


class ProcessSandbox(SessionSandbox):
    """Runs commands directly on the host under rlimits and a wall clock; trusted code only."""

    name = "process"

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings
        self.cgroups = CgroupHost(settings.cgroup_root)

    def check(self) -> None:
        """Refuse unless the operator explicitly allowed unsandboxed runs."""
        if not self.settings.allow_unsandboxed:
            raise SandboxUnavailableError(
                "the process backend runs code without isolation and is disabled; set "
                "PROCTOR_ALLOW_UNSANDBOXED=1 only if every entry is trusted, or use "
                "PROCTOR_SANDBOX=bwrap"
            )

    def hold_slot(self) -> contextlib.AbstractContextManager[int]:
        """A free slot of this host (a lock in ``settings.slot_locks``)."""
        return claim_slot(self.settings.slot_locks)

    def run_in_group(
        self, runs: RunGroup, spec: RunSpec, *, slot: int, root_dir: Path | None = None
    ) -> Outcome:
        """Run ``spec`` on the host (paths translated through its mounts) as part of ``runs``.

        ``slot`` is ignored: every run is the caller's own uid.
        """
        self.check()
        if not spec.argv:
            raise UsageError("argv must name a command to run")
        if spec.root_tree is not None:
            raise UsageError("a run on a root tree (an image build) needs PROCTOR_SANDBOX=bwrap")
        mounts, limits = spec.mounts, spec.limits
        # trusted code only, on the host: the caller's mounts override these defaults
        scratch = "/tmp"  # noqa: S108
        full_env = {"PATH": DEFAULT_PATH, "HOME": scratch, "TMPDIR": scratch, **spec.env}
        full_env = {key: _translate(value, mounts) for key, value in full_env.items()}
        with (
            run_cgroup(self.cgroups, limits, enabled=self.settings.is_root, slot=slot) as cgroup,
            ClockPipe.open(limits) as clock,
        ):
            argv = [_translate(a, mounts) for a in spec.argv]
            launcher = [*limits_prefix(limits, cgroup), *argv]
            return supervise(
                launcher,
                limits=limits,
                cgroup=cgroup,
                env={**full_env, **(clock.env() if clock is not None else {})},
                cwd=_translate(spec.cwd, mounts),
                pass_fds=(clock.write_fd,) if clock is not None else (),
                runs=runs,
                clock=clock,
            )

    def workspace(
        self, path: Path, *, size_bytes: int, slot: int
    ) -> contextlib.AbstractContextManager[Path]:
        """A plain, uncapped folder (no isolation means no per-run filesystem either)."""
        return plain_workspace(path)
