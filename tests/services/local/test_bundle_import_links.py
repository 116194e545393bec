"""Symbolic links in a bundle folder: refused when they leave it, copied as files when inside.

A bundle folder is often a git checkout, which stores links as they are. Nothing outside the
bundle's folder may reach a page, a kit, a program, the data or the imported copy: a link
leaving the folder (or pointing to nothing, or looping) refuses the import, naming the link and
its target, and leaves DEST empty; a link that stays inside is copied as a regular file or
folder. The source path itself may be a link: the organizer chose it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from bundle_fixtures import make_v2_bundle
from evalai_challenge import make_evalai_challenge

from proctor.errors import ConfigError
from proctor.services.local.bundle_import import import_challenge

PROCTOR = Path(sys.executable).parent / "proctor"
CANARY = "LINK-CANARY-7f3a"


def _outside(tmp_path: Path) -> Path:
    """Another challenge's folder beside the bundle, with a secret file and folder."""
    other = tmp_path / "other-challenge"
    (other / "reference").mkdir(parents=True)
    (other / "reference" / "truth.txt").write_text(f"{CANARY}\n")
    (other / "secret.md").write_text(f"# {CANARY}\n")
    return other


def _replace(path: Path, target: str) -> None:
    """Make ``path`` (a file or folder of the bundle) a symbolic link to ``target``."""
    if path.is_dir() and not path.is_symlink():
        for item in sorted(path.rglob("*"), reverse=True):
            item.rmdir() if item.is_dir() else item.unlink()
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


REFUSED: dict[str, tuple[str, Callable[[Path, Path], str]]] = {
    "page to /proc": ("pages/overview.md", lambda b, o: "/proc/self/environ"),
    "page, relative ..": ("pages/overview.md", lambda b, o: "../../other-challenge/secret.md"),
    "data folder, relative ..": ("reference_alpha", lambda b, o: "../other-challenge/reference"),
    "data file, absolute": ("reference_alpha/truth.txt", lambda b, o: str(o / "secret.md")),
    "program file": ("scoring_program/score.py", lambda b, o: str(o / "secret.md")),
    "nested zip": ("reference_beta.zip", lambda b, o: str(o / "other.zip")),
    "competition.yaml": ("competition.yaml", lambda b, o: str(o / "competition.yaml")),
    "dangling": ("reference_alpha/truth.txt", lambda b, o: "missing.txt"),
    "loop to an ancestor": ("reference_alpha/again", lambda b, o: ".."),
    "loop to the top": ("pages/all", lambda b, o: str(b)),
    "links to each other": ("reference_alpha/truth.txt", lambda b, o: "z.txt"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_link_leaving_the_bundle_or_broken_is_refused_naming_it(
    tmp_path: Path, case: str
) -> None:
    other = _outside(tmp_path)
    (other / "competition.yaml").write_text("version: 2\n")
    (other / "other.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    bundle = make_v2_bundle(tmp_path / "bundle")
    where, target = REFUSED[case]
    shown = target(bundle, other)
    _replace(bundle / where, shown)
    if case == "links to each other":
        (bundle / "reference_alpha/z.txt").symlink_to("truth.txt")
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(bundle, dest)
    message = str(refused.value)
    assert where in message and shown in message, message
    assert not dest.exists() or not any(dest.iterdir())


def test_links_that_stay_inside_are_copied_as_regular_files_and_folders(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    (bundle / "docs").mkdir()
    (bundle / "docs/overview.md").write_text("# Overview\nInside.\n")
    _replace(bundle / "pages/overview.md", "../docs/overview.md")
    (bundle / "data/alpha").mkdir(parents=True)
    (bundle / "data/alpha/truth.txt").write_text((bundle / "reference_alpha/truth.txt").read_text())
    _replace(bundle / "reference_alpha", "data/alpha")
    (bundle / "scoring_program/score_copy.py").symlink_to("score.py")
    linked_source = tmp_path / "chosen"
    linked_source.symlink_to(bundle)
    dest = tmp_path / "dest"
    import_challenge(linked_source, dest)
    links = [path for path in dest.rglob("*") if path.is_symlink()]
    assert links == []
    assert (dest / "pages/overview.md").read_text() == "# Overview\nInside.\n"
    truths = list(dest.rglob("truth.txt"))
    assert truths and all(path.is_file() for path in truths)
    copies = list(dest.rglob("score_copy.py"))
    assert copies and copies[0].read_text() == (bundle / "scoring_program/score.py").read_text()


@pytest.mark.parametrize("where", ["evaluation_script/splits.py", "templates/description.html"])
def test_an_evalai_folder_link_to_proc_is_refused(tmp_path: Path, where: str) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    _replace(source / where, "/proc/self/environ")
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(source, dest, "host")
    assert where in str(refused.value) and "/proc/self/environ" in str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_the_cli_refuses_a_page_linked_to_its_environment_with_status_2(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    _replace(bundle / "pages/overview.md", "/proc/self/environ")
    dest = tmp_path / "dest"
    done = subprocess.run(
        [str(PROCTOR), "challenge", "import", str(bundle), str(dest)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=dict(os.environ, PROCTOR_TOKEN=CANARY),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pages/overview.md" in done.stderr and "/proc/self/environ" in done.stderr
    assert CANARY not in done.stdout + done.stderr
    assert not dest.exists() or not any(dest.iterdir())


@pytest.mark.parametrize(
    ("key", "line"),
    [
        ("test_annotation_file", "    test_annotation_file: annotations/dev.json"),
        ("evaluation_script", "evaluation_script: evaluation_script.zip"),
    ],
)
@pytest.mark.parametrize("outside", ["absolute", "relative"])
def test_an_evalai_path_naming_a_file_outside_the_folder_is_refused(
    tmp_path: Path, key: str, line: str, outside: str
) -> None:
    other = _outside(tmp_path)
    secret = other / ("secret.json" if key == "test_annotation_file" else "script.zip")
    if key == "test_annotation_file":
        secret.write_text('{"1": "' + CANARY + '"}')
    else:
        script = make_evalai_challenge(tmp_path / "donor") / "evaluation_script"
        with zipfile.ZipFile(secret, "w") as zipped:
            for path in script.iterdir():
                zipped.write(path, path.name)
    source = make_evalai_challenge(tmp_path / "source")
    if key == "evaluation_script":
        for path in sorted((source / "evaluation_script").iterdir()):
            path.unlink()
        (source / "evaluation_script").rmdir()
    named = str(secret) if outside == "absolute" else f"../other-challenge/{secret.name}"
    config = source / "challenge_config.yaml"
    text = config.read_bytes().decode()
    assert line in text
    config.write_bytes(text.replace(line, line.split(":", maxsplit=1)[0] + ": " + named).encode())
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(source, dest, "host")
    assert key in str(refused.value) and named in str(refused.value), str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_a_fifo_in_the_bundle_is_refused_naming_it(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    os.mkfifo(bundle / "reference_alpha/pipe")
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(bundle, dest)
    assert "reference_alpha/pipe" in str(refused.value) and "FIFO" in str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_links_repeating_a_folder_exponentially_are_capped(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    level = bundle / "reference_alpha/levels"
    for _ in range(12):
        (level / "next").mkdir(parents=True)
        (level / "a").symlink_to("next")
        (level / "b").symlink_to("next")
        level = level / "next"
    (level / "leaf.txt").write_text("x" * 1000)
    dest = tmp_path / "dest"
    with pytest.raises(ConfigError) as refused:
        import_challenge(bundle, dest, max_bytes=1 << 20)
    assert "links bring more than" in str(refused.value), str(refused.value)
    assert not dest.exists() or not any(dest.iterdir())


def test_a_setuid_bit_is_not_copied(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle")
    (bundle / "scoring_program/score.py").chmod(0o4755)
    dest = tmp_path / "dest"
    import_challenge(bundle, dest)
    modes = {path.stat().st_mode & 0o7777 for path in dest.rglob("score.py")}
    assert modes == {0o755}
