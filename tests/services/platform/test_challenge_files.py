"""A challenge's Files: listed with size and sha256, streamed with Range and ETag, built once,
for the allowed only, never a path outside the published files (issue 26, item 4)."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from kit_audit import secret_digests
from service_seed import Seeded, seed, served

from proctor.errors import ConfigError, PlatformError
from proctor.resolve import load_challenge
from proctor.services.local.authoring import new_challenge
from proctor.services.platform import files, installs, registration_admin, registrations
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.client import Client
from proctor.services.platform.file_downloads import fetch, fetch_kit


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[Seeded]:
    found = seed(tmp_path)
    yield found
    found.platform.close()


@pytest.fixture
def client(seeded: Seeded) -> Iterator[httpx.Client]:
    with served(seeded.app) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http


def _predictions(folder: Path, **top: object) -> Path:
    """A ``challenge new --protocol predictions`` challenge run on the host, with ``top`` keys."""
    new_challenge(folder, "predictions", name=folder.name)
    path = folder / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    data.pop("environment")
    data.update(top)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _install(seeded: Seeded, folder: Path) -> None:
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(folder))


def _listing(client: httpx.Client, seeded: Seeded, name: str, user: str = "bob") -> list[dict]:
    answer = client.get(f"/api/v1/challenges/{name}/files", headers=seeded.headers(user))
    assert answer.status_code == 200, answer.text
    return list(answer.json()["files"])


def test_the_files_are_listed_with_their_size_and_sha256_and_download_as_listed(
    seeded: Seeded, client: httpx.Client, tmp_path: Path
) -> None:
    folder = _predictions(tmp_path / "org" / "fc", files=[{"path": "KIT.md", "title": "Rules"}])
    _install(seeded, folder)
    rows = _listing(client, seeded, "fc")
    assert {(row["kind"], row["phase"]) for row in rows} == {
        ("kit", None), ("data", "final"), ("other", None)
    }  # fmt: skip
    for row in rows:
        body = client.get(row["url"], headers=seeded.headers("bob"))
        assert body.status_code == 200
        assert len(body.content) == row["size"]
        assert hashlib.sha256(body.content).hexdigest() == row["sha256"]
        assert body.headers["etag"] == f'"{row["sha256"]}"'
        assert "attachment" in body.headers["content-disposition"]
    kit = next(row for row in rows if row["kind"] == "kit")
    content = client.get(kit["url"], headers=seeded.headers("bob")).content
    with tarfile.open(fileobj=io.BytesIO(content)) as archive:
        names = archive.getnames()
        archive.extractall(tmp_path / "downloaded-kit", filter="data")  # audited (kit_audit)
    assert {"README.md", "challenge/challenge.yaml", "entry/test/values/predictions.csv"} <= set(
        names
    )
    assert not any("test-reference" in name for name in names)
    data = next(row for row in rows if row["kind"] == "data")
    content = client.get(data["url"], headers=seeded.headers("bob")).content
    with tarfile.open(fileobj=io.BytesIO(content)) as archive:
        assert sorted(archive.getnames()) == [
            "data", "data/dev", "data/dev/values", "data/dev/values/inputs.csv",
            "data/dev/values/labels.csv", "data/test", "data/test/values",
            "data/test/values/inputs.csv",
        ]  # fmt: skip


def test_a_download_honours_range_if_range_and_if_none_match(
    seeded: Seeded, client: httpx.Client
) -> None:
    kit = next(row for row in _listing(client, seeded, "toy") if row["kind"] == "kit")
    whole = client.get(kit["url"], headers=seeded.headers("bob")).content
    headers = seeded.headers("bob")
    part = client.get(kit["url"], headers={**headers, "Range": "bytes=10-109"})
    assert part.status_code == 206 and part.content == whole[10:110]
    assert part.headers["content-range"] == f"bytes 10-109/{len(whole)}"
    tail = client.get(kit["url"], headers={**headers, "Range": f"bytes={len(whole) - 5}-"})
    assert tail.status_code == 206 and tail.content == whole[-5:]
    etag = f'"{kit["sha256"]}"'
    resumed = client.get(kit["url"], headers={**headers, "Range": "bytes=5-", "If-Range": etag})
    assert resumed.status_code == 206 and resumed.content == whole[5:]
    changed = client.get(kit["url"], headers={**headers, "Range": "bytes=5-", "If-Range": '"x"'})
    assert changed.status_code == 200 and changed.content == whole
    same = client.get(kit["url"], headers={**headers, "If-None-Match": etag})
    assert same.status_code == 304 and same.content == b""
    beyond = client.get(kit["url"], headers={**headers, "Range": f"bytes={len(whole) + 9}-"})
    assert beyond.status_code == 416


def test_the_files_are_built_once_per_version(
    seeded: Seeded, client: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    real = files.write_kit

    def counted(ref: str, dest: Path) -> list[Path]:
        built.append(ref)
        return real(ref, dest)

    monkeypatch.setattr(files, "write_kit", counted)
    folder = _predictions(tmp_path / "org" / "once")
    _install(seeded, folder)
    first = _listing(client, seeded, "once")
    assert _listing(client, seeded, "once", user="alice") == first
    kit = next(row for row in first if row["kind"] == "kit")
    assert client.get(kit["url"], headers=seeded.headers("bob")).status_code == 200
    assert len(built) == 1
    cache = seeded.platform.settings.data / "files" / "once"
    assert [p.name[:3] for p in cache.iterdir()] == ["v1-"]
    shutil.rmtree(cache)  # built again: the same bytes
    assert _listing(client, seeded, "once") == first and len(built) == 2
    (folder / "KIT.md").write_text("# once: a new kit\n")
    _install(seeded, folder)
    second = _listing(client, seeded, "once")
    assert len(built) == 3 and sorted(p.name[:3] for p in cache.iterdir()) == ["v1-", "v2-"]
    new_kit = next(row for row in second if row["kind"] == "kit")
    assert new_kit["sha256"] != kit["sha256"]


def test_files_are_for_signed_in_people_unless_the_challenge_makes_them_public(
    seeded: Seeded, client: httpx.Client, tmp_path: Path
) -> None:
    kit = next(row for row in _listing(client, seeded, "toy") if row["kind"] == "kit")
    assert client.get("/api/v1/challenges/toy/files").status_code == 404
    assert client.get(kit["url"]).status_code == 404
    assert client.get(kit["url"], headers=seeded.headers("olga")).status_code == 200
    bad = {"Authorization": "Bearer not-a-token"}
    assert client.get(kit["url"], headers=bad).status_code in (401, 404)
    _install(seeded, _predictions(tmp_path / "org" / "open", files_public=True))
    rows = client.get("/api/v1/challenges/open/files")
    assert rows.status_code == 200
    assert all(client.get(row["url"]).status_code == 200 for row in rows.json()["files"])
    assert client.get("/api/v1/challenges/nothing-here/files").status_code == 404


@pytest.mark.parametrize(
    "name",
    [
        "..%2F..%2Fproctor.sqlite3",
        "%2e%2e%2fproctor.sqlite3",
        "..%252Fproctor.sqlite3",
        "index.json",
        "toy-kit.tar.gz%2F..%2Findex.json",
        "%2Fetc%2Fpasswd",
        "..",
        "toy-kit.tar.gz%00",
    ],
)
def test_a_file_route_serves_no_path_outside_the_published_files(
    seeded: Seeded, client: httpx.Client, name: str
) -> None:
    assert any(row["name"] == "toy-kit.tar.gz" for row in _listing(client, seeded, "toy"))
    answer = client.get(f"/api/v1/challenges/toy/files/{name}", headers=seeded.headers("olga"))
    assert answer.status_code == 404, (name, answer.status_code)
    page = client.get(f"/challenges/toy/files/{name}", headers=seeded.headers("olga"))
    # the client resolves "files/.." to the challenge's page: no file either way
    assert page.status_code == 404 or (name == ".." and "content-disposition" not in page.headers)
    raw = client.get(f"/api/v1/challenges/toy/files/../../{name}", headers=seeded.headers("olga"))
    assert raw.status_code == 404


def test_an_extra_file_that_is_a_link_out_of_the_challenge_is_refused(tmp_path: Path) -> None:
    folder = _predictions(tmp_path / "org" / "linked", files=[{"path": "rules.txt"}])
    os.symlink("/etc/passwd", folder / "rules.txt")
    with pytest.raises(ConfigError) as refused:
        load_challenge(folder)
    assert refused.value.location == "files[0].path"


def test_an_extra_file_in_the_hidden_data_is_refused(tmp_path: Path) -> None:
    folder = _predictions(
        tmp_path / "org" / "hiddenfile", files=[{"path": "data/test-reference/values/labels.csv"}]
    )
    with pytest.raises(ConfigError) as refused:
        load_challenge(folder)
    assert "hidden data" in refused.value.message


def test_no_listed_file_holds_a_byte_of_hidden_data(
    seeded: Seeded, client: httpx.Client, tmp_path: Path
) -> None:
    """Every file of both challenges, archives unpacked: no file is a hidden file's bytes."""
    _install(seeded, _predictions(tmp_path / "org" / "fc", files=[{"path": "KIT.md"}]))
    for name in ("toy", "fc"):
        secret = secret_digests(installs.current(seeded.platform, name)[1])
        assert secret  # the check can fail: there is hidden data to find
        found = []
        for row in _listing(client, seeded, name):
            body = client.get(row["url"], headers=seeded.headers("bob")).content
            found.append((row["name"], hashlib.sha256(body).hexdigest()))
            if row["name"].endswith(".tar.gz"):
                with tarfile.open(fileobj=io.BytesIO(body)) as archive:
                    for member in archive.getmembers():
                        stream = archive.extractfile(member)
                        if stream is not None and member.size:
                            digest = hashlib.sha256(stream.read()).hexdigest()
                            found.append((f"{row['name']}:{member.name}", digest))
        leaks = [(where, secret[digest]) for where, digest in found if digest in secret]
        assert not leaks, leaks


def test_the_cli_client_resumes_a_partial_download_and_refuses_a_wrong_sha256(
    seeded: Seeded, client: httpx.Client, tmp_path: Path
) -> None:
    api = Client(str(client.base_url), seeded.tokens["bob"], keep_alive=False)
    try:
        kit = next(row for row in api.files("toy").files if row.kind == "kit")
        whole = client.get(kit.url, headers=seeded.headers("bob")).content
        partial = tmp_path / "kit.tar.gz"
        partial.write_bytes(whole[: len(whole) // 2])
        assert fetch(api, kit, partial).path.read_bytes() == whole  # resumed with Range
        dest = tmp_path / "unpacked"
        assert fetch_kit(api, "toy", dest).file.sha256 == kit.sha256
        assert (dest / "challenge" / "challenge.yaml").is_file()
        assert not list(tmp_path.glob(".*.part"))
        bob = authenticate(seeded.platform, seeded.tokens["bob"])
        _, cached = files.open_file(seeded.platform, bob, "toy", kit.name)
        cached.write_bytes(bytes(len(whole)))  # the server's copy damaged, its size kept
        with pytest.raises(PlatformError, match="does not match its listed sha256"):
            fetch_kit(api, "toy", tmp_path / "again")
        assert not list(tmp_path.glob(".*.part")) and not (tmp_path / "again").exists()
    finally:
        api.close()


def test_extra_files_never_take_a_name_already_listed(
    seeded: Seeded, client: httpx.Client, tmp_path: Path
) -> None:
    folder = tmp_path / "org" / "names"
    (folder / "more").mkdir(parents=True, exist_ok=True)
    new_challenge(folder / "c", "predictions", name="names")
    for name in ("index.json", "names-kit.tar.gz"):
        (folder / "c" / name).write_text("organizer's own\n")
        (folder / "c" / "more").mkdir(exist_ok=True)
        (folder / "c" / "more" / name).write_text("another\n")
    extras = [
        {"path": path}
        for path in ("index.json", "more/index.json", "names-kit.tar.gz", "more/names-kit.tar.gz")
    ]
    data = yaml.safe_load((folder / "c" / "challenge.yaml").read_text())
    data.pop("environment")
    data["files"] = extras
    (folder / "c" / "challenge.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    _install(seeded, folder / "c")
    rows = _listing(client, seeded, "names")
    names = [row["name"] for row in rows]
    assert len(names) == len(set(names)) == 6 and "index.json" not in names
    for row in rows:
        body = client.get(row["url"], headers=seeded.headers("bob")).content
        assert hashlib.sha256(body).hexdigest() == row["sha256"]


def test_files_wait_for_an_approved_registration(
    seeded: Seeded, client: httpx.Client, tmp_path: Path
) -> None:
    _install(seeded, _predictions(tmp_path / "org" / "gated", registration={"mode": "approval"}))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    bob = authenticate(seeded.platform, seeded.tokens["bob"])
    rows = _listing(client, seeded, "gated", user="olga")  # organizers always may
    url = next(row["url"] for row in rows if row["kind"] == "kit")
    for user in ("bob", "alice"):
        assert client.get(url, headers=seeded.headers(user)).status_code == 404
        listed = client.get("/api/v1/challenges/gated/files", headers=seeded.headers(user))
        assert listed.status_code == 404
    registrations.register(seeded.platform, bob, "gated", None)
    assert client.get(url, headers=seeded.headers("bob")).status_code == 404  # pending
    registration_admin.decide(seeded.platform, olga, "gated", "bob", "approve")
    assert client.get(url, headers=seeded.headers("bob")).status_code == 200
    assert client.get(url, headers=seeded.headers("alice")).status_code == 404
