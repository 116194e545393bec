"""The answers of the REST routes as typed models: what ``/openapi.json`` documents.

Routes still build plain mappings in the services; FastAPI validates each answer against its
model here, so the schema, schemathesis' response checks and the answers cannot drift apart.
Models allow extra keys (a newer server may add fields; clients ignore what they do not
know). Nested parts whose shape belongs to another layer (a submission's report, a rescore's
per-job changes) are documented as objects.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    """Every answer: extra keys pass through unchanged."""

    model_config = ConfigDict(extra="allow")


class TokenInfo(Answer):
    """One API token (never its value): times in ISO 8601, UTC."""

    id: int
    created: str
    expires: str = Field(description="PROCTOR_TOKEN_DAYS after it was issued")
    last_used: str | None = Field(description="recorded to the minute; null if never used")
    revoked: bool
    expired: bool
    current: bool = Field(description="the token this request was made with")


class Me(Answer):
    user: str
    role: str = Field(description="organizer or participant")
    team: str | None
    token: TokenInfo | None = Field(default=None, description="the token of this request")


class TokenList(Answer):
    user: str
    tokens: list[TokenInfo]


class Revoked(Answer):
    user: str
    revoked: int = Field(description="how many tokens this revoked")


class IssuedToken(Answer):
    user: str
    token: str = Field(description="shown once; stored only as its sha256")
    expires: str


class ChallengeList(Answer):
    challenges: list[str]


class Installed(Answer):
    challenge: str
    version: int = Field(description="1 for the first install; +1 for each changed bundle.")
    sha256: str
    phases: list[str]
    changed: bool = Field(description="False when the same bundle was installed already.")


class Receipt(Answer):
    submission: str
    team: str | None
    phase: str
    status: Literal["queued"]
    queue_position: int | None


class LiveCases(Answer):
    done: int
    total: int


class SubmissionStatus(Answer):
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


class TaskLogs(Answer):
    task: str
    state: str
    status: str | None = Field(description="scored, dry_run or failed; null while it runs")
    logs: dict[str, str] = Field(
        description="score-error.txt, scoring-TASK.log, platform-error.txt: name → text"
    )


class SubmissionLogs(Answer):
    submission: str
    challenge: str
    phase: str
    tasks: list[TaskLogs]


class Publication(Answer):
    submission: str
    task: str
    part: str | None
    published: bool


class FinalChoice(Answer):
    submission: str
    final: bool
    replaced: str | None = Field(description="The choice this one replaced (the oldest).")


class Interval(Answer):
    scores: dict[str, dict[str, list[int | float]]]
    rank: list[int | float] | None


class BoardRow(Answer):
    rank: int | float
    team: str | None
    submission: str
    submitted_at: str
    scores: dict[str, dict[str, int | float | None]]
    ci95: Interval | None
    mean_rank: int | float | None
    sources: dict[str, str]


class Leaderboard(Answer):
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
    rows: list[BoardRow]


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
    jobs: list[dict[str, Any]] = Field(
        description='[{"submission", "team", "task", "changes": {METRIC: {"old", "new"}}, "error"}]'
    )
    rank_changes: list[dict[str, Any]] = Field(
        description='[{"team", "old", "new"}]: each {"submission", "rank"} or null'
    )


class RescoreCancelled(Answer):
    challenge: str
    phase: str
    preview: str
    cancelled: bool


class Invitation(Answer):
    team: str
    code: str
    expires: str


class Joined(Answer):
    user: str
    team: str


class Flagged(Answer):
    submission: str
    team: str | None
    challenge: str
    phase: str
    flagged: bool
    refunded: bool


class FlaggedList(Answer):
    flagged: list[Flagged]


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
    scores: dict[str, dict[str, float | None]] = Field(description="task → metric → value")


class SubmissionList(Answer):
    challenge: str
    total: int = Field(description="every submission matching the filters")
    page: int
    per_page: int
    submissions: list[ListedSubmission]


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


class SubmissionRecord(Answer):
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


class PhaseTimes(Answer):
    challenge: str
    phase: str
    opens: str | None
    closes: str | None
    overridden: bool


class TeamQuotaLimits(Answer):
    per_day: int | None = None
    every_days: float | None = None
    total: int | None = None
    concurrent: int | None = None


class UserRow(Answer):
    user: str
    role: str
    team: str | None
    disabled: bool
    created: str


class TeamRow(Answer):
    team: str
    members: list[str]
    quota: TeamQuotaLimits | None = Field(description="the team's override; null: the phase's")


class UsersAndTeams(Answer):
    users: list[UserRow]
    teams: list[TeamRow]


class NewUserAnswer(Answer):
    user: str
    team: str | None
    token: str = Field(description="shown once: stored only as its sha256")


class Disabled(Answer):
    user: str
    disabled: bool


class Moved(Answer):
    user: str
    team: str
    previous: str | None


class TeamQuotaAnswer(Answer):
    team: str
    quota: TeamQuotaLimits | None
