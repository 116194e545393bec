"""The service's database: typed SQLAlchemy 2 models (the schema is made by the migrations).

Times are seconds since the epoch (UTC) in floats, the same on SQLite and PostgreSQL, so lease
arithmetic is one comparison. A job (an entry on one task) is the unit of work and its row is
the one source of truth for its state (``proctor.types.JobState``); a result is stored keyed by
``(job, attempt)`` and only the attempt holding the lease may write it.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base of every model; constraint names are fixed so migrations can name them."""

    metadata = MetaData(naming_convention=NAMING)


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))  # organizer | participant
    password_hash: Mapped[str | None] = mapped_column(String(255))
    created: Mapped[float] = mapped_column(Float)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """A disabled user's tokens are refused (``users_admin.disable``)."""
    email: Mapped[str | None] = mapped_column(String(254), unique=True)
    """Set for an account made on the web (``signup``), lower case."""
    email_verified: Mapped[float | None] = mapped_column(Float)
    """When the email was confirmed; an account with an email but no confirmation can't sign in."""
    approval: Mapped[str | None] = mapped_column(String(16))
    """``pending`` | ``approved`` | ``denied`` under ``PROCTOR_SIGNUP=approval``; else None."""
    notify_finished: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    """Email this person when a submission of theirs finishes (switched on the account page)."""


class WebSession(Base):
    """A browser signed in with a password; its cookie's secret is stored as its sha256.

    It ends on sign-out, a password reset, or when the user is disabled
    (``sessions``); it expires ``sessions.SESSION_DAYS`` after it was made.
    """

    __tablename__ = "web_sessions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[float] = mapped_column(Float)
    ended: Mapped[float | None] = mapped_column(Float)


class MailLink(Base):
    """A link sent by mail (``verify`` an email, ``reset`` a password), used at most once.

    ``digest``: the sha256 of the link's nonce; ``used``: when it was used (or replaced).
    """

    __tablename__ = "mail_links"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    purpose: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[float] = mapped_column(Float)
    used: Mapped[float | None] = mapped_column(Float)


class ServerKey(Base):
    """A secret of the server made on first use (the key that signs mail links)."""

    __tablename__ = "server_keys"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created: Mapped[float] = mapped_column(Float)


class ApiToken(Base):
    """A user's API token, stored as its sha256; it expires ``token_days`` after ``created``.

    ``last_used`` is recorded at most once a minute (``accounts.LAST_USE_STEP_S``).
    """

    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the token
    created: Mapped[float] = mapped_column(Float)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    last_used: Mapped[float | None] = mapped_column(Float)


class Team(Base):
    __tablename__ = "teams"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[float] = mapped_column(Float)
    # the organizers' test team: ranked on the organizer-only "all" board alone
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Membership(Base):
    __tablename__ = "memberships"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), unique=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)


class Invite(Base):
    __tablename__ = "invites"
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[float] = mapped_column(Float)
    used_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))


class ChallengeVersion(Base):
    """A versioned copy of a challenge bundle, named by the sha256 of its files."""

    __tablename__ = "challenges"
    __table_args__ = (UniqueConstraint("name", "version"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), index=True)
    version: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    path: Mapped[str] = mapped_column(Text)
    created: Mapped[float] = mapped_column(Float)


class PhaseRow(Base):
    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("challenge_id", "name"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenges.id"))
    name: Mapped[str] = mapped_column(String(64))
    opens: Mapped[float | None] = mapped_column(Float)
    closes: Mapped[float | None] = mapped_column(Float)


class SubmissionRow(Base):
    __tablename__ = "submissions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenges.id"), index=True)
    challenge: Mapped[str] = mapped_column(String(64), index=True)
    phase: Mapped[str] = mapped_column(String(64))
    upload_sha256: Mapped[str] = mapped_column(String(64))
    created: Mapped[float] = mapped_column(Float, index=True)
    cancelled: Mapped[bool] = mapped_column(Boolean, default=False)
    refunded: Mapped[bool] = mapped_column(Boolean, default=False)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (UniqueConstraint("submission_id", "task"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), index=True)
    task: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16), index=True)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    queued_at: Mapped[float] = mapped_column(Float, index=True)
    enqueued: Mapped[bool] = mapped_column(Boolean, default=False)
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_token: Mapped[str | None] = mapped_column(String(64))
    lease_expires: Mapped[float | None] = mapped_column(Float)
    stage: Mapped[str | None] = mapped_column(String(32))
    failure: Mapped[str | None] = mapped_column(String(16))
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    result_attempt: Mapped[int | None] = mapped_column(Integer)
    hidden_started: Mapped[float | None] = mapped_column(Float)
    """When an attempt first started a stage on hidden data (kept across attempts)."""
    cases_done: Mapped[int | None] = mapped_column(Integer)
    cases_total: Mapped[int | None] = mapped_column(Integer)
    """Cases ended and to run in the current stage (None: a stage without cases)."""


class QueueTurn(Base):
    """When a team's job last left the queue: teams take turns (``store.fair_queue``)."""

    __tablename__ = "queue_turns"
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), primary_key=True)
    last_claim: Mapped[float] = mapped_column(Float)


class Attempt(Base):
    __tablename__ = "attempts"
    __table_args__ = (UniqueConstraint("job_id", "attempt"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    attempt: Mapped[int] = mapped_column(Integer)
    worker: Mapped[str] = mapped_column(String(128))
    started: Mapped[float] = mapped_column(Float)
    ended: Mapped[float | None] = mapped_column(Float)
    outcome: Mapped[str | None] = mapped_column(String(32))


class Result(Base):
    """The committed result of a job: the participant's report (JSON), once per job."""

    __tablename__ = "results"
    __table_args__ = (UniqueConstraint("job_id", "attempt"), UniqueConstraint("job_id"))
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    report: Mapped[str] = mapped_column(Text)
    run_artifact: Mapped[str | None] = mapped_column(String(64))
    created: Mapped[float] = mapped_column(Float)


class Score(Base):
    __tablename__ = "scores"
    __table_args__ = (UniqueConstraint("job_id", "metric"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    metric: Mapped[str] = mapped_column(String(64))
    value: Mapped[float | None] = mapped_column(Float)


class CaseResult(Base):
    __tablename__ = "case_results"
    __table_args__ = (UniqueConstraint("job_id", "case", "metric"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    case: Mapped[str] = mapped_column(String(255))
    metric: Mapped[str] = mapped_column(String(64))
    value: Mapped[float | None] = mapped_column(Float)


class Publication(Base):
    """A team's choice to show (or withdraw) a task's result, or one part of it (an organ).

    ``part`` is "" for the whole task, else a part name: the metrics ``*_PART`` of the task.
    """

    __tablename__ = "publications"
    __table_args__ = (UniqueConstraint("submission_id", "task", "part"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"))
    task: Mapped[str] = mapped_column(String(64))
    part: Mapped[str] = mapped_column(String(64), default="", server_default="")
    published: Mapped[bool] = mapped_column(Boolean)
    changed: Mapped[float] = mapped_column(Float)


class ScoreVersion(Base):
    """A job's scores as one scorer version computed them (kept when a rescore replaces them).

    ``scores`` and ``cases`` are JSON (summary; case → metric → value; NaN as null);
    ``challenge_version`` is the installed bundle version whose scorer produced them.
    """

    __tablename__ = "score_versions"
    __table_args__ = (UniqueConstraint("job_id", "version"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    challenge_version: Mapped[int] = mapped_column(Integer)
    scores: Mapped[str] = mapped_column(Text)
    cases: Mapped[str] = mapped_column(Text)
    created: Mapped[float] = mapped_column(Float)


class FinalChoice(Base):
    __tablename__ = "final_choices"
    __table_args__ = (UniqueConstraint("submission_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"))
    chosen: Mapped[float] = mapped_column(Float)


class AuditEvent(Base):
    __tablename__ = "audit_events"
    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[float] = mapped_column(Float, index=True)
    actor: Mapped[str] = mapped_column(String(128))
    action: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str] = mapped_column(String(255))
    detail: Mapped[str] = mapped_column(Text, default="")


class PhaseOverride(Base):
    """An organizer's ``opens``/``closes`` of a phase replacing the bundle's (no reinstall).

    Both times are the phase's effective ones (None: no bound); kept across reinstalls of
    the challenge, keyed by its name. Each change is in the audit trail too.
    """

    __tablename__ = "phase_overrides"
    __table_args__ = (UniqueConstraint("challenge", "phase"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    challenge: Mapped[str] = mapped_column(String(64))
    phase: Mapped[str] = mapped_column(String(64))
    opens: Mapped[float | None] = mapped_column(Float)
    closes: Mapped[float | None] = mapped_column(Float)
    changed: Mapped[float] = mapped_column(Float)
    changed_by: Mapped[str] = mapped_column(String(64))


class TeamQuota(Base):
    """A team's quota override: each limit set replaces the phase's for this team."""

    __tablename__ = "team_quotas"
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), primary_key=True)
    per_day: Mapped[int | None] = mapped_column(Integer)
    every_days: Mapped[float | None] = mapped_column(Float)
    total: Mapped[int | None] = mapped_column(Integer)
    concurrent: Mapped[int | None] = mapped_column(Integer)
    changed: Mapped[float] = mapped_column(Float)
    changed_by: Mapped[str] = mapped_column(String(64))


class RescorePreview(Base):
    """A rescore computed and shown to an organizer, not applied (nothing else changed).

    ``jobs`` is JSON: job id → ``{"state", "summary", "per_record", "error"}``, the new scores
    of each job and the digest of what the rescore read of it (``rescore_jobs.job_states``);
    applying refuses once any differs. ``answer`` is the diff shown (JSON). One per phase: a
    new preview replaces the last.
    """

    __tablename__ = "rescore_previews"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    challenge: Mapped[str] = mapped_column(String(64), index=True)
    phase: Mapped[str] = mapped_column(String(64))
    challenge_version: Mapped[int] = mapped_column(Integer)
    jobs: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    created: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str] = mapped_column(String(64))


class Registration(Base):
    """A person's registration to a challenge (by name): the terms accepted, and its state.

    ``state``: ``pending`` (waiting for an organizer, ``approval`` mode), ``approved`` or
    ``denied``; ``terms_version`` is the sha256 of the terms file accepted ("" for none).
    """

    __tablename__ = "registrations"
    __table_args__ = (UniqueConstraint("challenge", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    challenge: Mapped[str] = mapped_column(String(64), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    state: Mapped[str] = mapped_column(String(16))
    terms_version: Mapped[str] = mapped_column(String(64))
    registered: Mapped[float] = mapped_column(Float)
    decided: Mapped[float | None] = mapped_column(Float)
    decided_by: Mapped[str | None] = mapped_column(String(64))


class ChallengeInvite(Base):
    """A person an organizer invited to an ``invite``-mode challenge: a user name or an email."""

    __tablename__ = "challenge_invites"
    __table_args__ = (UniqueConstraint("challenge", "invitee"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    challenge: Mapped[str] = mapped_column(String(64))
    invitee: Mapped[str] = mapped_column(String(255))
    created: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str] = mapped_column(String(64))
