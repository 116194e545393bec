"""The kit's README says what a records entry ships, from the challenge's own protocol block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from toy_challenge import make_challenge

from proctor.services.local.catalog import write_kit


def _challenge(root: Path, **protocol: Any) -> Path:
    folder = make_challenge(root)
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["protocol"].update(protocol)
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


def _readme(challenge: Path, kit: Path) -> str:
    write_kit(str(challenge), kit)
    return " ".join((kit / "README.md").read_text().split())


def test_the_kit_readme_names_the_answers_that_follow_the_output(tmp_path: Path) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast")
    text = _readme(challenge, tmp_path / "kit")
    assert "## What your entry ships" in text
    assert "where it writes `RECORD.forecast`" in text
    assert "compares its output with `answers/RECORD.forecast`" in text
    assert "within 0.001" in text


def test_the_kit_readme_says_no_answers_are_shipped_with_answers_none(tmp_path: Path) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast", answers="none")
    text = _readme(challenge, tmp_path / "kit")
    assert "the entry ships no answers" in text
    assert "answers/" not in text


def test_an_organizers_kit_md_gets_the_entry_section_too(tmp_path: Path) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast")
    (challenge / "KIT.md").write_text("# Our kit\n\nRead the rules.\n")
    text = _readme(challenge, tmp_path / "kit")
    assert text.startswith("# Our kit Read the rules.")
    assert "`answers/RECORD.forecast`" in text
