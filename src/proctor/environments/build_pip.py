"""The ``pip`` a Dockerfile's ``RUN`` finds where its base has none: the host's pip wheel.

Declared environments hold their Python libraries as wheels Proctor installed, without pip,
yet an entry's Dockerfile says ``RUN pip install -r requirements.txt`` (PhysioNet's fixed
lines). The build offers the pip wheel bundled with the host's Python (``ensurepip``'s, else
Debian's ``python3-pip-whl``), run in place as pip's own bootstrap does
(``python3 pip.whl/pip``), through ``pip`` and ``pip3`` at the end of the steps' ``PATH``:
a base's own pip comes first. It is a mount of the build only, never part of the image, and it
reads only the wheelhouse (``PIP_NO_INDEX``): what is installed already is "satisfied", the
rest must come from the host-resolved wheels.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

MOUNT = "/.proctor-pip"
WHEEL = "pip.whl"
DEBIAN_WHEELS = Path("/usr/share/python-wheels")
SHIM = f'#!/bin/sh\nexec python3 {MOUNT}/{WHEEL}/pip "$@"\n'


def host_pip_wheel() -> Path | None:
    """The pip wheel bundled on the host (ensurepip's, else Debian's); None without."""
    found = importlib.util.find_spec("ensurepip")
    folders = [DEBIAN_WHEELS]
    if found is not None and found.origin is not None:
        folders.insert(0, Path(found.origin).parent / "_bundled")
    for folder in folders:
        wheels = sorted(folder.glob("pip-*-py3-none-any.whl")) if folder.is_dir() else []
        if wheels:
            return wheels[-1]
    return None


def write_pip_tools(wheel: Path, folder: Path) -> Path:
    """``folder`` with a copy of ``wheel`` and ``bin/pip``, ``bin/pip3`` running it (0755).

    Mount it at :data:`MOUNT`; put ``MOUNT/bin`` last on the steps' ``PATH``.
    """
    (folder / "bin").mkdir(parents=True)
    shutil.copyfile(wheel, folder / WHEEL)
    (folder / WHEEL).chmod(0o644)
    for name in ("pip", "pip3"):
        (folder / "bin" / name).write_text(SHIM)
        (folder / "bin" / name).chmod(0o755)
    for path in (folder, folder / "bin"):
        path.chmod(0o755)
    return folder
