"""The HTTP client of the REST API (``/api/v1``), for the CLI: one method per route.

Errors come back as the service raised them: the server's ``{"error": {"kind", "message"}}``
is turned into the exception type ``kind`` names; a server that cannot be reached is
``ServerUnreachableError``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from proctor.entries.pack import pack_folder
from proctor.errors import (
    ArchiveError,
    AuthenticationError,
    ConfigError,
    EntryError,
    ForbiddenError,
    NotFoundError,
    PlatformError,
    ProctorError,
    RefusedError,
    ServerUnreachableError,
    UsageError,
)
from proctor.store.artifacts import ArtifactTooLargeError

ERROR_KINDS: Mapping[str, type[ProctorError]] = {
    "too_large": ArtifactTooLargeError,
    "config": ConfigError,
    "usage": UsageError,
    "unauthenticated": AuthenticationError,
    "not_found": NotFoundError,
    "forbidden": ForbiddenError,
    "refused": RefusedError,
    "archive": ArchiveError,
    "entry": EntryError,
    "platform": PlatformError,
}
"""Error kinds on the wire and the exception each stands for (most specific first)."""


class Client:
    """Talks to the Proctor server at ``server`` with API ``token`` (Bearer).

    ``keep_alive`` False closes each connection after its request (a command's few requests).
    """

    def __init__(
        self, server: str, token: str | None, *, timeout: float = 60.0, keep_alive: bool = True
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.server = server.rstrip("/")
        limits = httpx.Limits() if keep_alive else httpx.Limits(max_keepalive_connections=0)
        self._http = httpx.Client(
            base_url=f"{self.server}/api/v1", headers=headers, timeout=timeout, limits=limits
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _call(self, method: str, path: str, *, as_text: bool = False, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as err:
            raise ServerUnreachableError(
                f"cannot reach the Proctor server at {self.server} ({err}): start it with "
                "`proctor serve`, or pass --server / set PROCTOR_SERVER"
            ) from None
        if response.is_success:
            return response.text if as_text else response.json()
        raise _error_of(response)

    def install(self, source: str) -> dict[str, Any]:
        """Install challenge ``source`` (a folder on the server, or a bundled name)."""
        path = Path(source)
        if path.is_file():
            with path.open("rb") as stream:
                return dict(
                    self._call("POST", "/challenges/archive", files={"bundle": (path.name, stream)})
                )
        return dict(self._call("POST", "/challenges", json={"source": source}))

    def submit(self, entry: Path, challenge: str, phase: str | None) -> dict[str, Any]:
        """Upload ``entry`` to ``challenge``'s ``phase``: an archive, or a folder.

        A folder is packed into a ``.tar.gz`` in a temporary folder first (its files at the
        archive's top, as ``proctor run FOLDER`` reads it) and streamed from there.
        """
        if not entry.exists():
            raise UsageError(f"entry {entry} does not exist: pass an archive or a folder")
        if not entry.is_dir():
            return self._upload(entry, entry.name, challenge, phase)
        with tempfile.TemporaryDirectory(prefix="proctor-upload-") as scratch:
            name = f"{entry.resolve().name or 'entry'}.tar.gz"
            packed = pack_folder(entry, Path(scratch) / name)
            return self._upload(packed, name, challenge, phase)

    def _upload(self, path: Path, name: str, challenge: str, phase: str | None) -> dict[str, Any]:
        """Stream the archive at ``path`` as the multipart upload ``name``."""
        data = {"phase": phase} if phase else {}
        with path.open("rb") as stream:
            return dict(
                self._call(
                    "POST",
                    f"/challenges/{challenge}/submissions",
                    data=data,
                    files={"entry": (name, stream)},
                )
            )

    def status(self, submission: str) -> dict[str, Any]:
        """The submission's status (and report when finished)."""
        return dict(self._call("GET", f"/submissions/{submission}"))

    def action(self, submission: str, action: str, body: dict[str, Any] | None = None) -> Any:
        """``cancel``, ``publish`` or ``final`` on the submission."""
        return self._call("POST", f"/submissions/{submission}/{action}", json=body or {})

    def invite(self, team: str | None) -> dict[str, Any]:
        """A one-use code to join ``team`` (a participant's own team when None)."""
        return dict(self._call("POST", "/teams/invites", json={"team": team}))

    def join(self, code: str) -> dict[str, Any]:
        """Join the team invitation ``code`` names."""
        return dict(self._call("POST", "/teams/join", json={"code": code}))

    def tokens(self, user: str | None) -> dict[str, Any]:
        """The tokens of ``user`` (the caller's own when None)."""
        return dict(self._call("GET", "/tokens", params={"user": user} if user else {}))

    def revoke_tokens(self, user: str | None) -> dict[str, Any]:
        """Revoke every token of ``user`` (the caller's own when None)."""
        return dict(self._call("POST", "/tokens/revoke", json={"user": user}))

    def flagged(self) -> dict[str, Any]:
        """The submissions flagged as infrastructure failures (organizers)."""
        return dict(self._call("GET", "/flagged"))

    def leaderboard(self, challenge: str, phase: str | None, board: str) -> dict[str, Any]:
        """A board of the challenge's phase."""
        params = {"phase": phase} if phase else {}
        return dict(
            self._call("GET", f"/challenges/{challenge}/leaderboards/{board}", params=params)
        )

    def leaderboard_csv(self, challenge: str, phase: str | None, board: str) -> str:
        """A board of the challenge's phase as CSV text."""
        params = {"format": "csv", **({"phase": phase} if phase else {})}
        path = f"/challenges/{challenge}/leaderboards/{board}"
        return str(self._call("GET", path, params=params, as_text=True))

    def rescore(
        self, challenge: str, phase: str | None, *, preview: bool = False
    ) -> dict[str, Any]:
        """Rescore a phase (the last when None) with the installed scorer (organizers).

        ``preview``: only compute and show the diff (kept as a preview to apply or cancel).
        """
        where = f"/phases/{phase}" if phase else ""
        path = f"/challenges/{challenge}{where}/rescore" + ("/preview" if preview else "")
        # the server scores every job of the phase before it answers: no read timeout
        timeout = httpx.Timeout(self._http.timeout.connect, read=None)
        return dict(self._call("POST", path, timeout=timeout))

    def rescore_apply(self, challenge: str, preview: str) -> dict[str, Any]:
        """Apply a rescore preview (organizers; refused when it no longer holds)."""
        return dict(self._call("POST", f"/challenges/{challenge}/rescores/{preview}/apply"))

    def rescore_cancel(self, challenge: str, preview: str) -> dict[str, Any]:
        """Drop a rescore preview without applying it (organizers)."""
        return dict(self._call("DELETE", f"/challenges/{challenge}/rescores/{preview}"))

    def submissions(self, challenge: str, filters: Mapping[str, Any]) -> dict[str, Any]:
        """One page of the challenge's submissions (organizers); ``filters``: query fields."""
        params = {key: value for key, value in filters.items() if value is not None}
        return dict(self._call("GET", f"/challenges/{challenge}/submissions", params=params))

    def logs(self, submission: str) -> dict[str, Any]:
        """The organizer's logs of each task of the submission."""
        return dict(self._call("GET", f"/submissions/{submission}/logs"))

    def record(self, submission: str) -> dict[str, Any]:
        """Everything stored of the submission, the hidden diagnostics too (organizers)."""
        return dict(self._call("GET", f"/submissions/{submission}/record"))

    def entry(self, submission: str, dest: Path) -> int:
        """Write the submission's entry archive to ``dest`` as uploaded; the bytes written."""
        try:
            with self._http.stream("GET", f"/submissions/{submission}/entry") as response:
                if not response.is_success:
                    response.read()
                    raise _error_of(response)
                written = 0
                with dest.open("wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
                        written += len(chunk)
        except httpx.TransportError as err:
            raise ServerUnreachableError(
                f"cannot reach the Proctor server at {self.server} ({err})"
            ) from None
        return written

    def phase_times(self, challenge: str, phase: str, body: dict[str, Any]) -> dict[str, Any]:
        """Change a phase's ``opens``/``closes`` (organizers)."""
        return dict(self._call("PATCH", f"/challenges/{challenge}/phases/{phase}", json=body))

    def users(self) -> dict[str, Any]:
        """Every user and team (organizers)."""
        return dict(self._call("GET", "/users"))

    def disable_user(self, user: str) -> dict[str, Any]:
        """Disable ``user``: their tokens are refused (organizers)."""
        return dict(self._call("POST", f"/users/{user}/disable"))

    def move_member(self, user: str, team: str) -> dict[str, Any]:
        """Move participant ``user`` into ``team`` (organizers)."""
        return dict(self._call("POST", f"/teams/{team}/members", json={"user": user}))

    def team_quota(self, team: str, limits: dict[str, Any]) -> dict[str, Any]:
        """Set ``team``'s quota override (organizers); every limit None removes it."""
        return dict(self._call("PUT", f"/teams/{team}/quota", json=limits))


def _error_of(response: httpx.Response) -> ProctorError:
    try:
        error = response.json()["error"]
        kind, message = str(error["kind"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        detail = response.text[:500]
        if response.status_code == 422:
            return UsageError(f"the server refused the request as malformed: {detail}")
        return PlatformError(f"the server answered {response.status_code}: {detail}")
    return ERROR_KINDS.get(kind, PlatformError)(message)
