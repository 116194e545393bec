"""`proctor env prune`: a dry run lists what would go; a prune removes built entry images."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from proctor.cli.main import build_app


def test_a_dry_run_lists_built_entry_images_and_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_ENV_ROOT", str(tmp_path / "envs"))
    built = tmp_path / "envs" / "entry-builds" / ("c" * 64)
    built.mkdir(parents=True)
    (built / "image.tar").write_bytes(b"tar")
    app = build_app()
    dry = CliRunner().invoke(app, ["env", "prune", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert f"would remove {built}" in dry.output and "1 to remove" in dry.output
    assert built.is_dir()
    done = CliRunner().invoke(app, ["env", "prune"])
    assert done.exit_code == 0, done.output
    assert f"removed {built}" in done.output and "1 removed" in done.output
    assert not built.exists()
