"""Nothing hidden is ever in a kit: every kit a test builds is checked, byte for byte.

After each test, the folders its fixtures gave it (``tmp_path``, ``shared_dir``, ...) are
searched for starting kits (a ``challenge/challenge.yaml`` written by ``kit_replica``) and for
the challenges they came from (every other ``challenge.yaml`` there, and the bundled challenge
a kit names). Every file of every kit is compared with every hidden file of those challenges
(``kit_replica.hidden_paths``): a kit holding the bytes of one fails the test, naming both,
unless the challenge publishes the same bytes as inputs too.
Kits built by ``proctor kit`` in a subprocess are found the same way. Empty files are skipped.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.challenges import bundled_names, bundled_root, folder_name
from proctor.errors import ProctorError
from proctor.resolve import load_challenge
from proctor.services.local.kit_replica import HEADER, REPLICA_FOLDER, hidden_paths
from proctor.spec import Challenge

REPLICA_MARK = HEADER.splitlines()[0].split("{")[0]
KITS_CHECKED: list[Path] = []
"""Every kit checked in this session (a test asserts the audit ran on the kits it built)."""


def _digests(folder: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(folder.rglob("*") if folder.is_dir() else [folder]):
        if path.is_file() and not path.is_symlink() and path.stat().st_size:
            yield hashlib.sha256(path.read_bytes()).hexdigest(), path


MAX_DEPTH = 8
"""How deep below a test's folder the audit looks for a challenge.yaml (kits are shallow;
a test of deep trees makes thousands of levels, which a recursive walk cannot go through)."""


def _challenge_files(root: Path) -> Iterator[Path]:
    """Every ``challenge.yaml`` under ``root`` at most ``MAX_DEPTH`` levels down (no links)."""
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == "challenge.yaml" and entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
            elif depth < MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), depth + 1))


def _is_replica(yaml: Path) -> bool:
    with yaml.open(encoding="utf-8", errors="replace") as stream:
        return stream.readline().startswith(REPLICA_MARK)


def _folders_of(challenge: Challenge) -> tuple[list[Path], list[Path]]:
    """The challenge's hidden folders, and the folders it publishes (its public inputs; hidden
    inputs a protocol hands out): bytes found in both are public (eHealth-KD's references
    hold the test texts)."""
    hidden = hidden_paths(challenge)
    inputs = [t.public_inputs for t in challenge.tasks] + [
        t.hidden_inputs for t in challenge.tasks if t.hidden_inputs is not None
    ]
    return hidden, [folder for folder in inputs if folder.resolve() not in hidden]


def secret_digests(challenge: Challenge) -> dict[str, Path]:
    """The sha256 of each hidden file of ``challenge`` that it does not publish as well."""
    hidden, published = _folders_of(challenge)
    public = {digest for folder in published for digest, _ in _digests(folder)}
    return {d: path for folder in hidden for d, path in _digests(folder) if d not in public}


def _of(yaml: Path) -> tuple[list[Path], list[Path]]:
    try:
        return _folders_of(load_challenge(yaml.parent))
    except (ProctorError, ValueError, OSError):
        return [], []  # a broken challenge a test made on purpose builds no kit


def audit(roots: list[Path]) -> list[str]:
    """Kit files under ``roots`` holding a hidden file's bytes (empty when none does)."""
    kits, hidden, published = [], [], []
    for root in roots:
        for yaml in _challenge_files(root):
            found: tuple[list[Path], list[Path]] = ([], [])
            if _is_replica(yaml):
                if yaml.parent.name == REPLICA_FOLDER:
                    kits.append(yaml.parent.parent)
                    name = yaml.read_text(encoding="utf-8").split("name: ", 1)[-1].split()[0]
                    if name in bundled_names():
                        bundled = load_challenge(bundled_root() / folder_name(name))
                        found = _folders_of(bundled)
            else:
                found = _of(yaml)
            hidden += found[0]
            published += found[1]
    if not kits:
        return []
    public = {digest for folder in published for digest, _ in _digests(folder)}
    secret = {
        digest: path
        for folder in hidden
        for digest, path in _digests(folder)
        if digest not in public
    }
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
