"""Copy a folder a run wrote (or an upload) as plain files and folders, within bounds.

What an ingestion program leaves in ``/app/output`` is the participant's to shape: links,
FIFOs, modes that lock the host out, trees of any depth. The copy keeps regular files (mode
0644) and folders (0755) only, never follows a link, and stops at the depth and path length an
upload may have (``entries.names``), so what the scoring program later reads is as tame as an
upload. The folder's regular files may take at most its cap in apparent size (sparse files
count in full), checked before a byte is copied. It runs once no process of the run is left.
"""

from __future__ import annotations

from pathlib import Path

from proctor import trees
from proctor.entries.names import MAX_DEPTH, MAX_PATH_BYTES
from proctor.sandbox.workspace import inode_cap


def copy_plain(source: Path, dest: Path, *, max_bytes: int) -> str | None:
    """Copy ``source``'s content into the folder ``dest``; None, or what could not be copied.

    ``max_bytes``: the cap of the folder the run wrote in. Its regular files' apparent sizes
    (holes count in full: the copy writes them out) must add up to at most ``max_bytes``, and
    it may hold at most as many entries as a workspace of that size: measured before anything
    is copied, so a folder past either cap copies nothing. Links and special files are left
    out silently; a folder deeper than ``MAX_DEPTH`` or a path longer than ``MAX_PATH_BYTES``
    stops the copy with a problem naming it (relative to ``source``), as does a full
    destination. Every step goes through folder descriptors, no link followed.
    """
    entries = inode_cap(max_bytes)
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(0o755)
    try:
        over = trees.past_caps(source, max_bytes=max_bytes, max_entries=entries)
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if over is not None:
        return f"{over}: write less (a sparse file counts at its full size)"
    bounds = trees.PlainCopyBounds(max_bytes, entries, MAX_DEPTH, MAX_PATH_BYTES)
    return trees.copy_plain(source, dest, bounds)


def same_trees(first: Path, second: Path, *, skip: tuple[str, ...] = ()) -> bool:
    """True when two copied folders hold the same names and the same bytes.

    ``skip``: names left out at the top.
    """
    if not (first.is_dir() and second.is_dir()):
        return False
    names = sorted(item.name for item in first.iterdir() if item.name not in skip)
    if names != sorted(item.name for item in second.iterdir() if item.name not in skip):
        return False
    for name in names:
        one, other = first / name, second / name
        if one.is_dir() or other.is_dir():
            if not same_trees(one, other):
                return False
        elif one.read_bytes() != other.read_bytes():
            return False
    return True
