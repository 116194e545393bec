"""The participant-wheels layer of a job: the entry's ``requirements.txt``, installed by the host.

Runs before prep's setup script, host side. Where the challenge's environment does not allow
participant wheels, an entry shipping a ``requirements.txt`` is refused with a message saying
so; where it does, the wheels go into a layer of the run folder that every run of the job sees
read-only at ``/wheels`` (first on ``PYTHONPATH``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.environments.entry_wheels import (
    LAYER_TARGET,
    REQUIREMENTS,
    EntryWheel,
    install_entry_wheels,
    read_requirements,
)
from proctor.environments.wheels import Target
from proctor.errors import EntryRequirementsError
from proctor.sandbox.base import Mount
from proctor.spec.environment import ParticipantWheels


@dataclass(frozen=True, slots=True)
class EntryLayer:
    """The installed wheels and how runs see them."""

    wheels: tuple[EntryWheel, ...]
    mount: Mount | None

    @property
    def variables(self) -> dict[str, str]:
        """``PYTHONPATH`` naming the layer, when there is one."""
        return {"PYTHONPATH": LAYER_TARGET} if self.mount is not None else {}


NO_LAYER = EntryLayer((), None)


def entry_layer(
    entry_root: Path,
    layer: Path,
    *,
    allowed: ParticipantWheels | None,
    suite: str | None,
    pinned: dict[str, tuple[str, str]],
) -> EntryLayer:
    """Install the entry's requirements into ``layer`` (``EntryRequirementsError`` if refused).

    ``allowed`` is None when the job runs on the host (no environment declared).
    """
    requirements = entry_root / REQUIREMENTS
    if not requirements.is_file():
        return NO_LAYER
    if allowed is None or suite is None or not allowed.allow:
        raise EntryRequirementsError(
            f"this challenge does not install packages from {REQUIREMENTS}: its environment "
            "already holds what entries may use (see the kit); remove the file or vendor pure "
            "Python code into your entry"
        )
    asked = read_requirements(requirements, allowed)
    layer.mkdir(parents=True, exist_ok=True)
    layer.chmod(0o755)
    wheels = install_entry_wheels(
        asked, layer, target=Target.for_suite(suite), pinned=pinned, limits=allowed
    )
    if not wheels:
        return EntryLayer((), None)
    (layer.parent / f"{layer.name}.lock").write_text(
        "".join(f"{w.name}=={w.version} --hash=sha256:{w.sha256}\n" for w in wheels)
    )
    return EntryLayer(tuple(wheels), Mount(layer, LAYER_TARGET))
