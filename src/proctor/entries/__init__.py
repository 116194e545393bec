"""Uploaded entries: safe unpacking of archives and folders, and manifest checks.

``unpack_entry`` turns an upload into a folder without ever writing outside it;
``check_manifest`` and ``entry_flags`` read what the unpacked entry holds.
"""

from proctor.entries.limits import ArchiveLimits
from proctor.entries.manifest import EntryFlags, Manifest, check_manifest, entry_flags
from proctor.entries.unpack import UnpackedEntry, unpack_entry, unpack_upload, unwrapped_note

__all__ = [
    "ArchiveLimits",
    "EntryFlags",
    "Manifest",
    "UnpackedEntry",
    "check_manifest",
    "entry_flags",
    "unpack_entry",
    "unpack_upload",
    "unwrapped_note",
]
