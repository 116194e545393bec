"""Packing an entry folder into a ``.tar.gz`` to upload it, as ``proctor run`` reads a folder.

The folder's contents go at the archive's top (the folder's own name is not kept), so the
server unpacks what ``proctor run FOLDER`` would have read. Nothing is followed or refused
here: a link is packed as a link and the server's unpacker refuses it, naming it, exactly as
it refuses one in an archive the participant made. Owners are not recorded.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path


def pack_folder(folder: Path, dest: Path) -> Path:
    """Write ``folder``'s files and sub-folders into the gzipped tar ``dest``; return ``dest``.

    Raises ``ValueError`` when ``dest`` would lie inside ``folder`` (it would pack itself).
    """
    if dest.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"cannot pack the folder {folder} into {dest}, which lies inside it")
    with tarfile.open(dest, "w:gz") as tar:
        for name in sorted(os.listdir(folder)):
            tar.add(folder / name, arcname=name, filter=_anonymous)
    return dest


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """The member without its owner's ids and names."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
