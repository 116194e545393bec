"""The HTTP client of the REST API (``/api/v1``), for the CLI: one method per route.

Errors come back as the service raised them: the server's ``{"error": {"kind", "message"}}``
is turned into the exception type ``kind`` names (``proctor.errors.error_type``); a server
that cannot be reached is ``ServerUnreachableError``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from proctor.entries.pack import pack_folder
from proctor.errors import (
    PlatformError,
    ProctorError,
    ServerUnreachableError,
    UsageError,
    error_type,
)
from proctor.services.platform.answers import (
    Disabled,
    FinalChoice,
    Flagged,
    FlaggedList,
    Installed,
    Invitation,
    Joined,
    Leaderboard,
    Moved,
    PhaseTimes,
    Publication,
    Receipt,
    RescoreCancelled,
    Rescored,
    Revoked,
    SubmissionList,
    SubmissionLogs,
    SubmissionRecord,
    SubmissionStatus,
    TeamQuotaAnswer,
    TokenList,
    UsersAndTeams,
)
from proctor.services.platform.file_answers import FileListing
from proctor.services.platform.registration_answers import (
    Decision,
    Invited,
    RegistrationList,
    RegistrationStatus,
)
from proctor.store.artifacts import ArtifactTooLargeError

REMOTE_ERRORS = (ArtifactTooLargeError,)
"""Errors a server may name that ``proctor.errors`` does not define: loaded for ``error_type``."""


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

    def install(self, source: str) -> Installed:
        """Install challenge ``source`` (a folder on the server, or a bundled name)."""
        path = Path(source)
        if path.is_file():
            with path.open("rb") as stream:
                files = {"bundle": (path.name, stream)}
                return Installed.model_validate(
                    self._call("POST", "/challenges/archive", files=files)
                )
        return Installed.model_validate(self._call("POST", "/challenges", json={"source": source}))

    def submit(
        self,
        entry: Path,
        challenge: str,
        phase: str | None,
        fields: Mapping[str, str] | None = None,
    ) -> Receipt:
        """Upload ``entry`` to ``challenge``'s ``phase``: an archive, a bare file, or a folder.

        A folder is packed into a ``.tar.gz`` in a temporary folder first (its files at the
        archive's top, as ``proctor run FOLDER`` reads it) and streamed from there.
        ``fields``: values of the challenge's submission fields, by name.
        """
        if not entry.exists():
            raise UsageError(f"entry {entry} does not exist: pass an archive or a folder")
        data = {f"field.{name}": value for name, value in (fields or {}).items()}
        if phase:
            data["phase"] = phase
        if not entry.is_dir():
            return self._upload(entry, entry.name, challenge, data)
        with tempfile.TemporaryDirectory(prefix="proctor-upload-") as scratch:
            name = f"{entry.resolve().name or 'entry'}.tar.gz"
            packed = pack_folder(entry, Path(scratch) / name)
            return self._upload(packed, name, challenge, data)

    def _upload(self, path: Path, name: str, challenge: str, data: dict[str, str]) -> Receipt:
        """Stream the file at ``path`` as the multipart upload ``name`` with text ``data``."""
        with path.open("rb") as stream:
            answer = self._call(
                "POST",
                f"/challenges/{challenge}/submissions",
                data=data,
                files={"entry": (name, stream)},
            )
        return Receipt.model_validate(answer)

    def status(self, submission: str) -> SubmissionStatus:
        """The submission's status (and report when finished)."""
        return SubmissionStatus.model_validate(self._call("GET", f"/submissions/{submission}"))

    def cancel(self, submission: str) -> SubmissionStatus:
        """Cancel the submission: its status after."""
        answer = self._call("POST", f"/submissions/{submission}/cancel", json={})
        return SubmissionStatus.model_validate(answer)

    def publish(self, submission: str, task: str, part: str | None, published: bool) -> Publication:
        """Publish (or withdraw) the submission's result on ``task`` (or one ``part`` of it)."""
        body = {"task": task, "part": part, "published": published}
        answer = self._call("POST", f"/submissions/{submission}/publish", json=body)
        return Publication.model_validate(answer)

    def final(self, submission: str) -> FinalChoice:
        """Choose the submission as one of its team's final entries."""
        answer = self._call("POST", f"/submissions/{submission}/final", json={})
        return FinalChoice.model_validate(answer)

    def refund(self, submission: str) -> Flagged:
        """Refund a flagged submission (organizers)."""
        answer = self._call("POST", f"/submissions/{submission}/refund", json={})
        return Flagged.model_validate(answer)

    def invite(self, team: str | None) -> Invitation:
        """A one-use code to join ``team`` (a participant's own team when None)."""
        return Invitation.model_validate(self._call("POST", "/teams/invites", json={"team": team}))

    def join(self, code: str) -> Joined:
        """Join the team invitation ``code`` names."""
        return Joined.model_validate(self._call("POST", "/teams/join", json={"code": code}))

    def create_team(self, name: str) -> Joined:
        """Create team ``name`` with the caller in it."""
        return Joined.model_validate(self._call("POST", "/teams", json={"name": name}))

    def leave_team(self) -> Joined:
        """Leave the caller's team (while it has no submission)."""
        return Joined.model_validate(self._call("POST", "/teams/leave", json={}))

    def registration(self, challenge: str) -> RegistrationStatus:
        """The caller's registration to ``challenge``."""
        answer = self._call("GET", f"/challenges/{challenge}/registration")
        return RegistrationStatus.model_validate(answer)

    def register(self, challenge: str, terms_version: str) -> RegistrationStatus:
        """Register to ``challenge``, accepting the terms of ``terms_version``."""
        body = {"accept_terms": True, "terms_version": terms_version}
        answer = self._call("POST", f"/challenges/{challenge}/registration", json=body)
        return RegistrationStatus.model_validate(answer)

    def registrations(self, challenge: str) -> RegistrationList:
        """The challenge's registrations (organizers)."""
        answer = self._call("GET", f"/challenges/{challenge}/registrations")
        return RegistrationList.model_validate(answer)

    def participants_csv(self, challenge: str) -> str:
        """The challenge's participants as CSV text (organizers)."""
        path = f"/challenges/{challenge}/registrations.csv"
        return str(self._call("GET", path, as_text=True))

    def decide(self, challenge: str, user: str, decision: str) -> Decision:
        """Approve or deny ``user``'s registration (organizers)."""
        path = f"/challenges/{challenge}/registrations/{user}/{decision}"
        return Decision.model_validate(self._call("POST", path, json={}))

    def invite_people(self, challenge: str, people: list[str]) -> Invited:
        """Invite user names to an ``invite``-mode challenge (organizers)."""
        path = f"/challenges/{challenge}/invitations"
        return Invited.model_validate(self._call("POST", path, json={"people": people}))

    def tokens(self, user: str | None) -> TokenList:
        """The tokens of ``user`` (the caller's own when None)."""
        params = {"user": user} if user else {}
        return TokenList.model_validate(self._call("GET", "/tokens", params=params))

    def revoke_tokens(self, user: str | None) -> Revoked:
        """Revoke every token of ``user`` (the caller's own when None)."""
        return Revoked.model_validate(self._call("POST", "/tokens/revoke", json={"user": user}))

    def flagged(self) -> FlaggedList:
        """The submissions flagged as infrastructure failures (organizers)."""
        return FlaggedList.model_validate(self._call("GET", "/flagged"))

    def leaderboard(self, challenge: str, phase: str | None, board: str) -> Leaderboard:
        """A board of the challenge's phase."""
        params = {"phase": phase} if phase else {}
        path = f"/challenges/{challenge}/leaderboards/{board}"
        return Leaderboard.model_validate(self._call("GET", path, params=params))

    def leaderboard_csv(self, challenge: str, phase: str | None, board: str) -> str:
        """A board of the challenge's phase as CSV text."""
        params = {"format": "csv", **({"phase": phase} if phase else {})}
        path = f"/challenges/{challenge}/leaderboards/{board}"
        return str(self._call("GET", path, params=params, as_text=True))

    def rescore(self, challenge: str, phase: str | None, *, preview: bool = False) -> Rescored:
        """Rescore a phase (the last when None) with the installed scorer (organizers).

        ``preview``: only compute and show the diff (kept as a preview to apply or cancel).
        """
        where = f"/phases/{phase}" if phase else ""
        path = f"/challenges/{challenge}{where}/rescore" + ("/preview" if preview else "")
        # the server scores every job of the phase before it answers: no read timeout
        timeout = httpx.Timeout(self._http.timeout.connect, read=None)
        return Rescored.model_validate(self._call("POST", path, timeout=timeout))

    def rescore_apply(self, challenge: str, preview: str) -> Rescored:
        """Apply a rescore preview (organizers; refused when it no longer holds)."""
        path = f"/challenges/{challenge}/rescores/{preview}/apply"
        return Rescored.model_validate(self._call("POST", path))

    def rescore_cancel(self, challenge: str, preview: str) -> RescoreCancelled:
        """Drop a rescore preview without applying it (organizers)."""
        path = f"/challenges/{challenge}/rescores/{preview}"
        return RescoreCancelled.model_validate(self._call("DELETE", path))

    def submissions(self, challenge: str, filters: Mapping[str, Any]) -> SubmissionList:
        """One page of the challenge's submissions (organizers); ``filters``: query fields."""
        params = {key: value for key, value in filters.items() if value is not None}
        answer = self._call("GET", f"/challenges/{challenge}/submissions", params=params)
        return SubmissionList.model_validate(answer)

    def logs(self, submission: str) -> SubmissionLogs:
        """The organizer's logs of each task of the submission."""
        return SubmissionLogs.model_validate(self._call("GET", f"/submissions/{submission}/logs"))

    def record(self, submission: str) -> SubmissionRecord:
        """Everything stored of the submission, the hidden diagnostics too (organizers)."""
        answer = self._call("GET", f"/submissions/{submission}/record")
        return SubmissionRecord.model_validate(answer)

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

    def files(self, challenge: str) -> FileListing:
        """The challenge's files: name, phase, kind, size, sha256 and url of each."""
        return FileListing.model_validate(self._call("GET", f"/challenges/{challenge}/files"))

    def download(self, url: str, dest: Path) -> int:
        """Fetch the file at ``url`` (a listing's) into ``dest``; the bytes it now holds.

        A partial ``dest`` is resumed with ``Range`` (from its size); a server answering the
        whole file instead rewrites it.
        """
        have = dest.stat().st_size if dest.is_file() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        try:
            with self._http.stream("GET", f"{self.server}{url}", headers=headers) as response:
                if response.status_code == 416 and have:
                    return have  # complete already
                if not response.is_success:
                    response.read()
                    raise _error_of(response)
                resumed = response.status_code == 206
                with dest.open("ab" if resumed else "wb") as out:
                    for chunk in response.iter_bytes(1 << 20):
                        out.write(chunk)
        except httpx.TransportError as err:
            raise ServerUnreachableError(
                f"cannot reach the Proctor server at {self.server} ({err}): run the command "
                "again to resume the download"
            ) from None
        return dest.stat().st_size

    def phase_times(self, challenge: str, phase: str, body: dict[str, Any]) -> PhaseTimes:
        """Change a phase's ``opens``/``closes`` (organizers)."""
        answer = self._call("PATCH", f"/challenges/{challenge}/phases/{phase}", json=body)
        return PhaseTimes.model_validate(answer)

    def users(self) -> UsersAndTeams:
        """Every user and team (organizers)."""
        return UsersAndTeams.model_validate(self._call("GET", "/users"))

    def disable_user(self, user: str) -> Disabled:
        """Disable ``user``: their tokens are refused (organizers)."""
        return Disabled.model_validate(self._call("POST", f"/users/{user}/disable"))

    def move_member(self, user: str, team: str) -> Moved:
        """Move participant ``user`` into ``team`` (organizers)."""
        answer = self._call("POST", f"/teams/{team}/members", json={"user": user})
        return Moved.model_validate(answer)

    def team_quota(self, team: str, limits: dict[str, Any]) -> TeamQuotaAnswer:
        """Set ``team``'s quota override (organizers); every limit None removes it."""
        answer = self._call("PUT", f"/teams/{team}/quota", json=limits)
        return TeamQuotaAnswer.model_validate(answer)


def _error_of(response: httpx.Response) -> ProctorError:
    try:
        error = response.json()["error"]
        kind, message = str(error["kind"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        detail = response.text[:500]
        if response.status_code == 422:
            return UsageError(f"the server refused the request as malformed: {detail}")
        return PlatformError(f"the server answered {response.status_code}: {detail}")
    found = error_type(kind)
    return (
        found(message)
        if found is not None and found is not ProctorError
        else PlatformError(message)
    )
