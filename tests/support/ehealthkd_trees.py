"""eHealth-KD submission and gold trees written for tests: the official folder layout."""

from __future__ import annotations

from pathlib import Path

FOLDERS = {1: "scenario1-main", 2: "scenario2-taskA", 3: "scenario3-taskB"}


def write_scenarios(root: Path, a_text: str, b_text: str, *, stem: str, sentences: str) -> None:
    """The three scenario folders under ``root``: the sentences file and both outputs each."""
    for number, folder in FOLDERS.items():
        target = root / folder
        target.mkdir(parents=True)
        (target / f"{stem}_scenario{number}.txt").write_text(sentences, encoding="utf-8")
        (target / f"output_a_scenario{number}.txt").write_text(a_text, encoding="utf-8")
        (target / f"output_b_scenario{number}.txt").write_text(b_text, encoding="utf-8")
