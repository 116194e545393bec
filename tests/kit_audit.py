"""Nothing hidden is ever in a kit: every kit a test builds is checked, byte for byte.

After each test, the folders its fixtures gave it (``tmp_path``, ``shared_dir``, ...) are
searched for starting kits (a ``challenge/challenge.yaml`` written by ``kit_replica``) and for
the challenges they came from (every other ``challenge.yaml`` there, and the bundled challenge
a kit names). Every file of every kit is compared with every hidden file of those challenges
(``kit_replica.hidden_paths``): a kit holding the bytes of one fails the test, naming both.
Kits built by ``proctor kit`` in a subprocess are found the same way. Empty files are skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.challenges import bundled_names, bundled_root, folder_name
from proctor.errors import ProctorError
from proctor.protocols.resolve import load_challenge
from proctor.services.local.kit_replica import HEADER, REPLICA_FOLDER, hidden_paths

REPLICA_MARK = HEADER.splitlines()[0].split("{")[0]
KITS_CHECKED: list[Path] = []
"""Every kit checked in this session (a test asserts the audit ran on the kits it built)."""


def _digests(folder: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(folder.rglob("*") if folder.is_dir() else [folder]):
        if path.is_file() and not path.is_symlink() and path.stat().st_size:
            yield hashlib.sha256(path.read_bytes()).hexdigest(), path


def _is_replica(yaml: Path) -> bool:
    with yaml.open(encoding="utf-8", errors="replace") as stream:
        return stream.readline().startswith(REPLICA_MARK)


def _hidden_of(yaml: Path) -> list[Path]:
    try:
        return hidden_paths(load_challenge(yaml.parent))
    except (ProctorError, ValueError, OSError):
        return []  # a broken challenge a test made on purpose builds no kit


def audit(roots: list[Path]) -> list[str]:
    """Kit files under ``roots`` holding a hidden file's bytes (empty when none does)."""
    kits, hidden = [], []
    for root in roots:
        for yaml in root.rglob("challenge.yaml"):
            if _is_replica(yaml):
                if yaml.parent.name == REPLICA_FOLDER:
                    kits.append(yaml.parent.parent)
                    name = yaml.read_text(encoding="utf-8").split("name: ", 1)[-1].split()[0]
                    if name in bundled_names():
                        hidden += hidden_paths(load_challenge(bundled_root() / folder_name(name)))
            else:
                hidden += _hidden_of(yaml)
    if not kits:
        return []
    secret = {digest: path for folder in hidden for digest, path in _digests(folder)}
    KITS_CHECKED.extend(kits)
    return [
        f"{path} holds the bytes of hidden file {secret[digest]}"
        for kit in kits
        for digest, path in _digests(kit)
        if digest in secret
    ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After the test's body (before its folders are removed), audit the kits it built."""
    result = yield
    funcargs = getattr(item, "funcargs", {})
    roots = [value for value in funcargs.values() if isinstance(value, Path) and value.is_dir()]
    roots += [
        value.root for value in funcargs.values() if isinstance(getattr(value, "root", None), Path)
    ]
    leaks = audit(roots)
    if leaks:
        pytest.fail("a starting kit holds hidden data:\n" + "\n".join(leaks), pytrace=False)
    return result
