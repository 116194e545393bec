"""Zip bombs at import: the bundle's zips are unpacked within the entry unpacker's limits.

The bytes really written are counted (a header may lie), one budget for the bundle zip and
every zip inside it; past a limit the import is refused naming the member, and DEST is left
empty. ``--max-bytes`` and ``--max-ratio`` raise the limits for an organizer who needs more.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from bundle_fixtures import make_v2_bundle

from proctor.errors import ConfigError
from proctor.services.local.bundle_import import import_challenge

PROCTOR = Path(sys.executable).parent / "proctor"
MiB = 1024 * 1024


def _zip_folder(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(folder.rglob("*")):
            zipped.write(path, path.relative_to(folder).as_posix())
    return archive


def _with_reference_member(bundle: Path, name: str, data: bytes) -> None:
    """Add ``name`` holding ``data`` to the bundle's zipped reference of task Beta."""
    with zipfile.ZipFile(bundle / "reference_beta.zip", "a", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr(name, data)


def test_a_zipped_bundle_expanding_past_the_ratio_is_refused_naming_the_member(
    tmp_path: Path,
) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    (bundle / "reference_alpha/blanks.bin").write_bytes(bytes(64 * MiB))
    archive = _zip_folder(bundle, tmp_path / "bundle.zip")
    assert archive.stat().st_size < 2 * MiB
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(archive, dest)
    assert "reference_alpha/blanks.bin" in str(refused.value)
    assert "--max-ratio" in str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_a_nested_zip_bomb_in_a_bundle_folder_is_refused(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    _with_reference_member(bundle, "blanks.bin", bytes(64 * MiB))
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(bundle, dest)
    assert "blanks.bin" in str(refused.value) and "reference_beta.zip" in str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_the_budget_covers_the_bundle_zip_and_the_zips_inside_it_together(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    _with_reference_member(bundle, "noise.bin", os.urandom(700 * 1024))
    (bundle / "reference_alpha/noise.bin").write_bytes(os.urandom(700 * 1024))
    archive = _zip_folder(bundle, tmp_path / "bundle.zip")
    import_challenge(archive, tmp_path / "roomy", max_bytes=4 * MiB)
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(archive, dest, max_bytes=2 * MiB)
    assert "noise.bin" in str(refused.value) and "--max-bytes" in str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_the_cli_raises_the_limits_with_max_bytes_and_max_ratio(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    _with_reference_member(bundle, "blanks.bin", bytes(3 * MiB))
    refused = subprocess.run(
        [str(PROCTOR), "challenge", "import", str(bundle), str(tmp_path / "a"),
         "--max-bytes", "2M"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "blanks.bin" in refused.stderr
    done = subprocess.run(
        [str(PROCTOR), "challenge", "import", str(bundle), str(tmp_path / "b"),
         "--max-bytes", "1G", "--max-ratio", "10000"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    helps = subprocess.run(
        [str(PROCTOR), "challenge", "import", "--help"],
        capture_output=True, text=True, timeout=120, check=False,
        env=dict(os.environ, COLUMNS="200"),
    )  # fmt: skip
    assert "--max-bytes" in helps.stdout and "--max-ratio" in helps.stdout
