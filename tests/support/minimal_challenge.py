"""The smallest valid challenge.yaml (a records challenge of one task), and a writer for it."""

from __future__ import annotations

from pathlib import Path

import yaml

MINIMAL = {
    "name": "toy",
    "title": "Toy challenge",
    "protocol": {"kind": "records"},
    "tasks": [
        {
            "name": "main",
            "public_inputs": "public",
            "hidden_inputs": "hidden",
            "hidden_references": "refs",
            "scorer": "physionet2018",
        }
    ],
    "phases": [{"name": "final", "tasks": ["main"]}],
}


def write(folder: Path, data: object) -> Path:
    """Write ``data`` as ``folder``/challenge.yaml and return its path."""
    path = folder / "challenge.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
