"""Installing a challenge folder with symbolic links: `challenge add`, POST /api/v1/challenges.

The server copies the folder it is named; a link inside it that leaves it (to
``/proc/self/environ``: the server's own environment, on a public page) is refused naming the
link and its target, and nothing is installed; a link that stays inside is copied as a
regular file or folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from proctor.errors import ConfigError
from proctor.services.local.authoring import new_challenge
from proctor.services.platform.accounts import add_user, authenticate
from proctor.services.platform.installs import install, installed_names
from proctor.services.platform.resources import Platform, open_platform
from proctor.settings import ServiceSettings

PROCTOR = Path(sys.executable).parent / "proctor"
CANARY = "SERVER-CANARY-51c2"


def _challenge(folder: Path, name: str = "linked") -> Path:
    """A new records challenge showing ``pages/overview.md`` as its overview page."""
    new_challenge(folder, "records", name=name)
    (folder / "pages").mkdir()
    (folder / "pages/overview.md").write_text("# Overview\n")
    yaml_file = folder / "challenge.yaml"
    yaml_file.write_text(yaml_file.read_text() + "pages: {overview: pages/overview.md}\n")
    return folder


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[tuple[Platform, str]]:
    settings = ServiceSettings(
        data=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'proctor.sqlite3'}"
    )
    opened = open_platform(settings)
    token = add_user(opened, "olga", organizer=True, team=None).token
    yield opened, token
    Platform.close(opened)


def _relink(path: Path, target: str) -> None:
    path.unlink()
    path.symlink_to(target)


REFUSED: dict[str, tuple[str, Callable[[Path], str]]] = {
    "page to /proc": ("pages/overview.md", lambda outside: "/proc/self/environ"),
    "reference, relative ..": ("data/reference/h01.txt", lambda o: "../../../other/secret.txt"),
    "scoring program, absolute": ("scoring/score.py", str),
    "dangling": ("data/public/p01.txt", lambda outside: "nowhere.txt"),
    "loop": ("data/hidden/h01.txt", lambda outside: "h01.txt"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_install_refuses_a_link_leaving_the_folder(
    tmp_path: Path, platform: tuple[Platform, str], case: str
) -> None:
    (tmp_path / "other").mkdir()
    secret = tmp_path / "other/secret.txt"
    secret.write_text(CANARY)
    folder = _challenge(tmp_path / "linked")
    where, target = REFUSED[case]
    shown = target(secret)
    _relink(folder / where, shown)
    opened, token = platform
    with pytest.raises(ConfigError) as refused:
        install(opened, authenticate(opened, token), str(folder))
    assert where in str(refused.value) and shown in str(refused.value), str(refused.value)
    assert installed_names(opened) == []


def test_install_copies_a_link_inside_as_a_regular_file(
    tmp_path: Path, platform: tuple[Platform, str]
) -> None:
    folder = _challenge(tmp_path / "linked")
    (folder / "docs").mkdir()
    (folder / "docs/overview.md").write_text("# Inside\n")
    _relink(folder / "pages/overview.md", "../docs/overview.md")
    (folder / "scoring/again").symlink_to("../data/public")
    opened, token = platform
    done = install(opened, authenticate(opened, token), str(folder))
    copies = list((tmp_path / "data/challenges/linked").glob("*/linked"))
    assert done.version == 1 and len(copies) == 1
    assert [path for path in copies[0].rglob("*") if path.is_symlink()] == []
    assert (copies[0] / "pages/overview.md").read_text() == "# Inside\n"
    assert (copies[0] / "scoring/again/p01.txt").is_file()


def _proctor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PROCTOR, *args], env=env, capture_output=True, text=True,
                          timeout=280, check=False)  # fmt: skip


@pytest.mark.slow
def test_the_server_refuses_a_page_linked_to_its_own_environment(shared_dir: Path) -> None:
    env = dict(os.environ, PROCTOR_DATA=str(shared_dir / "data"), PROCTOR_SECRET_CANARY=CANARY)
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    added = _proctor("user", "add", "olga", "--organizer", "--json", env=env)
    assert added.returncode == 0, added.stderr
    token = json.loads(added.stdout)["token"]
    folder = _challenge(shared_dir / "linked")
    _relink(folder / "pages/overview.md", "/proc/self/environ")
    server = subprocess.Popen(
        [PROCTOR, "serve", "--port", "0", "--workers", "1", "--json"],
        env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["url"]
        answer = httpx.post(
            f"{url}/api/v1/challenges",
            json={"source": str(folder)},
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        assert answer.status_code == 422, answer.text
        message = answer.json()["error"]["message"]
        assert "pages/overview.md" in message and "/proc/self/environ" in message
        client = dict(env, PROCTOR_SERVER=url, PROCTOR_TOKEN=token)
        done = _proctor("challenge", "add", str(folder), env=client)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "pages/overview.md" in done.stderr and "/proc/self/environ" in done.stderr
        listed = httpx.get(f"{url}/api/v1/challenges", timeout=60).json()
        assert listed["challenges"] == []
        page = httpx.get(f"{url}/challenges/linked", timeout=60)
        assert CANARY not in page.text
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stdout is not None:
            server.stdout.close()
