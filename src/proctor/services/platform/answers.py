"""The answers of the platform's services: frozen pydantic models, the one shape on the wire.

A service returns one; the REST layer sends it as it is (the route's ``response_model``, so
``/openapi.json`` documents it) and the HTTP client (``services.platform.client``) reads the
server's JSON back into the same type. Keys a newer server adds are ignored by the client.
This module imports no store, so a client command starts without the server's modules.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    """An answer of a platform service: frozen, JSON as it goes over the wire."""

    model_config = ConfigDict(frozen=True)


class NewUser(Answer):
    """``user add``'s answer: the token is shown once and stored only as a hash."""

    user: str
    team: str | None
    token: str = Field(description="shown once: stored only as its sha256")


class IssuedToken(Answer):
    """A new token (shown once) and when it expires (ISO 8601, UTC)."""

    user: str
    token: str = Field(description="shown once; stored only as its sha256")
    expires: str


class TokenInfo(Answer):
    """One API token (never its value): times in ISO 8601, UTC."""

    id: int
    created: str
    expires: str = Field(description="PROCTOR_TOKEN_DAYS after it was issued")
    last_used: str | None = Field(description="recorded to the minute; null if never used")
    revoked: bool
    expired: bool
    current: bool = Field(description="the token this request was made with")


class TokenList(Answer):
    """A user's tokens, oldest first."""

    user: str
    tokens: list[TokenInfo]


class Revoked(Answer):
    """How many tokens of the user a revocation took."""

    user: str
    revoked: int = Field(description="how many tokens this revoked")


class Invitation(Answer):
    """A new invitation: the team, the code (shown once) and when it expires (ISO 8601, UTC)."""

    team: str
    code: str
    expires: str


class Joined(Answer):
    """The user who joined and the team they joined."""

    user: str
    team: str


class TeamQuotaLimits(Answer):
    """A team's quota override: each limit, or None for the phase's."""

    per_day: int | None = None
    every_days: float | None = None
    total: int | None = None
    concurrent: int | None = None


class UserRow(Answer):
    """A user as the organizer's list shows them."""

    user: str
    role: str
    team: str | None
    disabled: bool
    created: str
    email: str | None = Field(default=None, description="set for an account made on the web")
    state: str = Field(
        default="active",
        description="active | disabled | unconfirmed (email not confirmed) | pending (approval)",
    )


class TeamRow(Answer):
    """A team, its members and its quota override."""

    team: str
    members: list[str]
    quota: TeamQuotaLimits | None = Field(description="the team's override; null: the phase's")


class UsersAndTeams(Answer):
    """Every user and every team."""

    users: list[UserRow]
    teams: list[TeamRow]


class Disabled(Answer):
    """A user disabled."""

    user: str
    disabled: bool


class Moved(Answer):
    """A participant moved into a team, and the team they left."""

    user: str
    team: str
    previous: str | None


class TeamQuotaAnswer(Answer):
    """A team's quota override as set (None: removed)."""

    team: str
    quota: TeamQuotaLimits | None


class Flagged(Answer):
    """A submission, whether it is flagged and whether it was refunded."""

    submission: str
    team: str | None
    challenge: str
    phase: str
    flagged: bool
    refunded: bool


class FlaggedList(Answer):
    """The flagged submissions, oldest first."""

    flagged: list[Flagged]


class Publication(Answer):
    """A submission's result on a task (or one part of it): published or withdrawn."""

    submission: str
    task: str
    part: str | None
    published: bool


class FinalChoice(Answer):
    """A submission chosen as a final entry of its team."""

    submission: str
    final: bool
    replaced: str | None = Field(description="The choice this one replaced (the oldest).")


class Shown(Answer):
    """Whether a task (``part`` None) or one part of it is published."""

    task: str
    part: str | None
    published: bool


class Choices(Answer):
    """What a submission's team chose for it: final or not, and what it published."""

    final: bool
    final_entries: int
    publications: list[Shown]


class Receipt(Answer):
    """``submit --no-wait --json``: the stored submission, queued."""

    submission: str
    team: str | None
    phase: str
    status: Literal["queued"] = "queued"
    queue_position: int | None


class LiveCases(Answer):
    """The cases of the running stage: ended and in all."""

    done: int
    total: int


class SubmissionStatus(Answer):
    """``status --json``: a submission's status, stage, queue position and disclosed report."""

    submission: str
    team: str | None
    challenge: str
    phase: str
    status: str = Field(description="queued, running, scored, dry_run, failed or cancelled")
    failure: str | None = Field(description="entry, platform, scorer or infrastructure")
    stage: str | None = Field(
        description="The running stage (TASK:stage with several tasks); ``hidden`` while the "
        "entry is evaluated on hidden data whose timing the exam's disclosure hides"
    )
    queue_position: int | None
    cases: LiveCases | None = Field(
        default=None,
        description="Cases ended of the running stage's; null without cases or when hidden",
    )
    report: dict[str, Any] | None = Field(
        description="The ``proctor run --json`` object as disclosed; null until finished and "
        "for a cancelled submission."
    )
    fields: dict[str, str] = Field(
        default_factory=dict,
        description="The values of the challenge's submission_fields given with the entry",
    )


class MetricChange(Answer):
    """A metric's value before and after (None: not a finite number)."""

    old: int | float | None
    new: int | float | None


class BoardPlace(Answer):
    """A team's row on the default board: the submission shown and its rank."""

    submission: str
    rank: int | float


class RankChange(Answer):
    """A team whose row on the default board moved (None: not ranked)."""

    team: str | None
    old: BoardPlace | None = Field(description="the row before; null: not ranked")
    new: BoardPlace | None = Field(description="the row after; null: not ranked")


class RescoredJob(Answer):
    """A job of the phase scored again: each metric that changed, or why it was not."""

    submission: str
    team: str | None
    task: str
    changes: dict[str, MetricChange] = Field(description="METRIC: {old, new}")
    error: str | None = Field(description="why the job was not rescored; null: it was")


class Rescored(Answer):
    """A rescore's diff: each job's metrics ``{"old", "new"}`` and the default board's moves.

    ``applied`` false: a preview, nothing changed yet (apply or cancel it by its id).
    """

    preview: str = Field(description="the preview's id (apply or cancel it while not applied)")
    applied: bool
    created: str = Field(description="when the preview was computed (ISO 8601, UTC)")
    challenge: str
    phase: str
    challenge_version: int
    rescored: int
    changed: int
    jobs: list[RescoredJob]
    rank_changes: list[RankChange]


class RescoreCancelled(Answer):
    """A preview dropped without being applied."""

    challenge: str
    phase: str
    preview: str
    cancelled: bool


class FailureReason(Answer):
    """Why a task failed, as the organizer reads it first: whose fault, and the last lines."""

    failure: str | None = Field(description="entry, platform, scorer or infrastructure")
    owner: str = Field(description="whose fault, in words")
    stage: str | None = Field(description="the stage that failed, where one did")
    source: str = Field(description="the log the lines come from (score-error.txt, ...)")
    anchor: str = Field(description="the full log's id on the console's record page")
    lines: list[str] = Field(description="the reason's last lines, the last one included")
    more: bool = Field(description="the log holds more lines than these")


class EntryImageFacts(Answer):
    """The entry's own image a task ran in, as read back from it (``entry-image.json``).

    Read from the tree before any of the entry's code ran; no stage writes it.
    """

    digest: str = Field(description="the image's config digest, sha256:…")
    base: str | None = Field(description="the image it was built from, when known")
    tree_bytes: int | None = Field(description="bytes of its unpacked tree; null: unknown")
    files: int | None = Field(description="files of its unpacked tree; null: unknown")
    debian: dict[str, str] = Field(description="Debian package → version (dpkg-query -W)")
    python: dict[str, str] = Field(description="Python distribution → version (pip list)")

    def line(self) -> str:
        """One line: ``entry image sha256:… on BASE · 1.2 GiB · 98 Debian, 12 Python packages``."""
        parts = [f"entry image {self.digest}" + (f" on {self.base}" if self.base else "")]
        if self.tree_bytes is not None:
            parts.append(size_words(self.tree_bytes))
        parts.append(f"{len(self.debian)} Debian, {len(self.python)} Python packages")
        return " · ".join(parts)


def size_words(size: int) -> str:
    """``size`` bytes in words a person reads at a glance: ``812 B``, ``3.4 MiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


class TaskLogs(Answer):
    """A task's state, result status, organizer logs and failing cases' diagnostics."""

    task: str
    state: str
    status: str | None = Field(description="scored, dry_run or failed; null while it runs")
    reason: FailureReason | None = Field(default=None, description="why it failed")
    logs: dict[str, str] = Field(
        description="score-error.txt, scoring-TASK.log, platform-error.txt: name → text"
    )
    diagnostics: dict[str, str] = Field(
        default_factory=dict,
        description="the setup output, failed stages' and failing cases' output tails: "
        "name (`prep stdout`, `exam case te01 stderr`) → text",
    )
    cap: str = Field(default="", description="what the logs and diagnostics keep, in words")
    image: EntryImageFacts | None = Field(
        default=None, description="the entry's own image it ran in; null: a declared one"
    )


class SubmissionLogs(Answer):
    """The organizer's logs of each task of a submission."""

    submission: str
    challenge: str
    phase: str
    tasks: list[TaskLogs]


class TaskRecord(Answer):
    """A task's job with everything stored of it, the organizer's diagnostics included."""

    task: str
    state: str
    stage: str | None
    failure: str | None
    attempt: int
    status: str | None
    report: dict[str, Any] | None = Field(description="the stored (undisclosed) report")
    scores: dict[str, float | None]
    stages: list[dict[str, Any]] = Field(description="cases.jsonl's stage lines (log tails)")
    cases: list[dict[str, Any]] = Field(description="cases.jsonl's case lines (log tails)")
    cases_total: int
    efficiency: dict[str, Any] | None = Field(description="efficiency.json")
    dashboard: dict[str, Any] | None = Field(
        description="the scorer's whole dashboard (VISCERAL: metric → organ → statistic)"
    )
    pages: list[str] = Field(
        description="the scorer's pages kept (detailed_results.html): GET "
        "/submissions/{id}/detailed/{task} on the pages' side"
    )
    logs: dict[str, str] = Field(description="score-error.txt, scoring-TASK.log, ...")
    reason: FailureReason | None = Field(default=None, description="why it failed")
    image: EntryImageFacts | None = Field(
        default=None, description="the entry's own image it ran in; null: a declared one"
    )
    image_files: list[str] = Field(
        default_factory=list,
        description="files of the entry's image kept with the run (entry-image.json, "
        "Dockerfile, build.log): GET /submissions/{id}/tasks/{task}/image/{name}",
    )


class TaskImage(Answer):
    """The entry's own image one task ran in."""

    task: str
    image: EntryImageFacts


class SubmissionImages(Answer):
    """The entry's own images of a submission, for its team (the tasks that ran in one)."""

    submission: str
    tasks: list[TaskImage]


class SubmissionRecord(Answer):
    """Everything stored of a submission, for the organizer."""

    submission: str
    team: str | None
    challenge: str
    phase: str
    created: str
    status: str | None
    failure: str | None
    flagged: bool
    refunded: bool
    cancelled: bool
    entry_sha256: str = Field(description="sha256 of the entry archive as uploaded")
    tasks: list[TaskRecord]


class ListedSubmission(Answer):
    """One submission in the organizer's list of a challenge's submissions."""

    submission: str
    team: str | None
    phase: str
    created: str
    status: str = Field(description="queued, running, scored, failed or cancelled")
    failure: str | None = Field(description="entry, platform, scorer or infrastructure")
    flagged: bool
    refunded: bool
    scores: dict[str, dict[str, int | float | None]] = Field(
        description="task → metric → value (a count an integer)"
    )
    fields: dict[str, str] = Field(
        default_factory=dict, description="Every submission_fields value (public or not)"
    )


class SubmissionList(Answer):
    """One page of a challenge's submissions, newest first."""

    challenge: str
    total: int = Field(description="every submission matching the filters")
    page: int
    per_page: int
    submissions: list[ListedSubmission]


class PhaseTimes(Answer):
    """A phase's effective times (ISO 8601, UTC; None: no bound)."""

    challenge: str
    phase: str
    opens: str | None
    closes: str | None
    overridden: bool


class Interval(Answer):
    """A row's 95% bootstrap intervals: per task and metric, and of its rank."""

    scores: dict[str, dict[str, tuple[int | float, int | float]]]
    rank: tuple[int | float, int | float] | None
    cases: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="task → metric → the number of cases behind that score interval",
    )


class BoardRow(Answer):
    """A row of a board: its rank, team, submission, scores and intervals."""

    rank: int | float
    team: str
    submission: str
    submitted_at: str
    scores: dict[str, dict[str, int | float | None]]
    ci95: Interval | None
    mean_rank: int | float | None
    sources: dict[str, str]
    fields: dict[str, str] = Field(
        default_factory=dict, description="The submission's public submission_fields values"
    )


class Leaderboard(Answer):
    """A board of a phase as the caller may read it."""

    challenge: str
    phase: str
    board: str
    title: str
    tasks: list[str]
    metrics: list[str]
    aggregation: str
    per: str
    public: bool
    ladder: dict[str, int | float] | None
    field_labels: dict[str, str] = Field(
        default_factory=dict,
        description="The challenge's public submission_fields: name → label, in form order",
    )
    rows: list[BoardRow]


class Installed(Answer):
    """A challenge version as installed (``installs.Installed.to_json``)."""

    challenge: str
    version: int = Field(description="1 for the first install; +1 for each changed bundle.")
    sha256: str
    phases: list[str]
    changed: bool = Field(description="False when the same bundle was installed already.")
