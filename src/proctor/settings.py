"""The one reader of the environment: everything else receives a ``Settings`` object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import unquote, urlsplit

from proctor.errors import UsageError

SandboxBackend = Literal["bwrap", "process"]
SANDBOX_BACKENDS: tuple[SandboxBackend, ...] = get_args(SandboxBackend)


def running_as_root() -> bool:
    """True when this process has the effective uid 0 (asked once, by ``Settings``)."""
    return os.geteuid() == 0


@dataclass(frozen=True, slots=True)
class Settings:
    """Host-level configuration of Proctor.

    ``work_root``: where run folders are created. ``sandbox_backend``: ``bwrap`` (default),
    ``process`` (trusted code only; needs ``allow_unsandboxed``). ``slot_uid_base``: first uid of
    the unprivileged uids given to concurrent sandbox slots when running as root. ``is_root``:
    whether this worker runs as root, which decides slot uids, cgroups and tmpfs workspaces;
    read from the process once, and set explicitly in tests that play the other case.
    ``env_root``: the store of built environments.
    """

    work_root: Path
    sandbox_backend: SandboxBackend = "bwrap"
    allow_unsandboxed: bool = False
    slot_uid_base: int = 61000
    cgroup_root: Path = Path("/sys/fs/cgroup")
    slot_lock_dir: Path | None = None
    is_root: bool = field(default_factory=running_as_root)
    env_root: Path | None = None

    @property
    def environments(self) -> Path:
        """Where built environments are stored (``PROCTOR_ENV_ROOT``)."""
        return self.env_root or default_env_root(os.environ, self.is_root)

    @property
    def slot_locks(self) -> Path:
        """Where sandbox slots are claimed.

        One folder for the whole host, whatever the work root, so two evaluations never run as
        the same slot uid at once.
        """
        return self.slot_lock_dir or default_slot_locks(self.is_root)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read ``PROCTOR_*`` variables; unset ones take the defaults.

        Raises ``UsageError`` for a value that cannot be used, naming the variable.
        """
        env = os.environ if environ is None else environ
        is_root = running_as_root()
        return cls(
            work_root=Path(env.get("PROCTOR_WORK_ROOT", str(default_work_root(env, is_root)))),
            sandbox_backend=sandbox_backend(env.get("PROCTOR_SANDBOX", "bwrap")),
            allow_unsandboxed=env.get("PROCTOR_ALLOW_UNSANDBOXED", "") == "1",
            slot_uid_base=int(env.get("PROCTOR_SLOT_UID_BASE", "61000")),
            cgroup_root=Path(env.get("PROCTOR_CGROUP_ROOT", "/sys/fs/cgroup")),
            slot_lock_dir=Path(env.get("PROCTOR_SLOT_LOCKS", str(default_slot_locks(is_root)))),
            is_root=is_root,
            env_root=Path(env.get("PROCTOR_ENV_ROOT", str(default_env_root(env, is_root)))),
        )


def sandbox_backend(name: str) -> SandboxBackend:
    """``name`` as a backend choice, or a UsageError naming ``PROCTOR_SANDBOX`` and the choices."""
    for choice in SANDBOX_BACKENDS:
        if name == choice:
            return choice
    raise UsageError(
        f"PROCTOR_SANDBOX={name!r} is not a sandbox backend; "
        f"choose one of {', '.join(SANDBOX_BACKENDS)}"
    )


def default_slot_locks(is_root: bool) -> Path:
    """The default slot-lock folder.

    As root, ``/run/lock/proctor`` (host-wide, emptied at boot); else a per-user folder, since
    without root every run uses the caller's own uid anyway.
    """
    if is_root and Path("/run/lock").is_dir():
        return Path("/run/lock/proctor")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / f"proctor-slots-{os.getuid()}"
    return Path.home() / ".cache" / "proctor" / "slots"


def default_work_root(env: Mapping[str, str], is_root: bool) -> Path:
    """Where run folders go by default.

    As root, ``/var/lib/proctor/runs``: sandbox slots (other uids) must be able to traverse every
    folder above a mount, root's home is private, and a fixed name in a world-writable folder
    (``/var/tmp``) could be planted by another local user. Otherwise the user's cache folder.
    """
    if is_root:
        return Path("/var/lib/proctor/runs")
    return Path(env.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "proctor" / "runs"


def default_env_root(env: Mapping[str, str], is_root: bool) -> Path:
    """Where built environments go by default.

    As root, ``/var/lib/proctor/envs`` (shared by every worker of the host); otherwise the
    user's cache folder.
    """
    if is_root:
        return Path("/var/lib/proctor/envs")
    return Path(env.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "proctor" / "envs"


DEFAULT_DATA = Path("proctor-data")
DEFAULT_UPLOAD_BYTES = 256 * 1024**2
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
DEFAULT_TOKEN_DAYS = 90.0
SignupMode = Literal["open", "approval", "closed"]
SIGNUP_MODES: tuple[SignupMode, ...] = get_args(SignupMode)
SMTP_SCHEMES = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}


@dataclass(frozen=True, slots=True)
class SmtpServer:
    """Where mail is sent (``PROCTOR_SMTP_URL``).

    ``scheme``: ``smtp``, ``smtp+starttls`` or ``smtps``; the host, port and optional login.
    """

    scheme: str
    host: str
    port: int
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> SmtpServer:
        """``smtp://HOST:PORT``, ``smtp+starttls://USER:PASS@HOST:587``, ``smtps://...``.

        Raises ``UsageError`` naming ``PROCTOR_SMTP_URL`` and the forms it takes.
        """
        forms = "smtp://HOST:PORT, smtp+starttls://USER:PASS@HOST:587 or smtps://USER:PASS@HOST"
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in SMTP_SCHEMES or not parts.hostname or port == -1:
            raise UsageError(
                f"PROCTOR_SMTP_URL={_hidden(url)!r} is not a mail server: write {forms}"
            )
        return cls(
            scheme=parts.scheme,
            host=parts.hostname,
            port=port or SMTP_SCHEMES[parts.scheme],
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


def _hidden(url: str) -> str:
    """``url`` without its password (for messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """Configuration of the platform service (``proctor serve``, workers, ``user add``).

    ``data``: the data folder (``PROCTOR_DATA``, default ``./proctor-data``), holding the
    embedded SQLite database, the installed challenge bundles and, by default, the artifacts.
    ``database_url``: ``PROCTOR_DATABASE_URL`` (a SQLAlchemy URL; wins over the data folder).
    ``artifacts``: the content-addressed store workers share (``PROCTOR_ARTIFACTS``, default
    ``DATA/artifacts``). Intervals in seconds: a lease lasts ``lease_s`` and is renewed every
    ``heartbeat_s``; the reaper and sweeper look every ``reaper_s``. ``max_attempts``: runs of a
    job before it ends ``failed: infrastructure``. ``upload_bytes``: the largest upload taken.
    ``allow_host_environment``: serve challenges with ``environment: host`` (the host's ``/usr``
    shown to entries; ``PROCTOR_ALLOW_HOST_ENVIRONMENT=1``, off by default).
    ``broker_url``: the Celery broker of the ``celery`` executor (``PROCTOR_BROKER_URL``, e.g.
    ``redis://127.0.0.1:6379/0`` or ``amqp://guest@127.0.0.1:5672//``); ``queue``: the broker
    queue jobs are sent to and ``proctor worker`` takes from (``PROCTOR_QUEUE``);
    ``queue_routes``: challenges whose jobs go to a queue of their own
    (``PROCTOR_QUEUE_ROUTES=CHALLENGE:QUEUE,...``, e.g. a challenge for big-memory machines).
    ``token_days``: an API token is refused this many days after it was issued
    (``PROCTOR_TOKEN_DAYS``, default 90; ``proctor token new`` issues the next).
    ``trust_proxy``: the server sits behind a TLS proxy on this host whose
    ``X-Forwarded-Proto`` (and client address) it believes (``PROCTOR_TRUST_PROXY=1``; off by
    default): the session cookie is then ``Secure`` when the proxy says ``https``.
    Accounts: ``signup`` is who may make an account on the web (``PROCTOR_SIGNUP``:
    ``closed``, the default, only organizers make them; ``open``, anyone with a verified email;
    ``approval``, those an organizer approves too). ``smtp``: the mail server
    (``PROCTOR_SMTP_URL``), ``mail_from``: the sender (``PROCTOR_MAIL_FROM``), ``public_url``:
    the base of every link in a mail (``PROCTOR_PUBLIC_URL``, e.g. ``https://proctor.example``);
    ``public_url_set``: whether the operator set it (then links on pages use it too:
    ``link_base``).
    ``team_jobs``: jobs one team may run at once over every worker (``PROCTOR_TEAM_JOBS``,
    0 = no cap); teams take turns for free workers either way.
    Uploads: ``upload_unpacks`` are unpacked and checked at once (``PROCTOR_UPLOAD_UNPACKS``);
    another waits up to ``upload_wait_s`` (``PROCTOR_UPLOAD_WAIT_S``), then gets 503 with
    ``Retry-After``; a body bringing less than ``upload_min_bytes`` in any ``upload_window_s``
    seconds is cut off with 408 (``PROCTOR_UPLOAD_MIN_BYTES``, ``PROCTOR_UPLOAD_WINDOW_S``).
    ``orphan_grace_s``: an artifact no row refers to is removed once this old
    (``PROCTOR_ORPHAN_GRACE_S``; what a crash between storing and recording left).
    """

    data: Path = DEFAULT_DATA
    database_url: str | None = None
    artifacts_dir: Path | None = None
    lease_s: float = 30.0
    heartbeat_s: float = 10.0
    reaper_s: float = 5.0
    max_attempts: int = 3
    upload_bytes: int = DEFAULT_UPLOAD_BYTES
    allow_host_environment: bool = False
    server: str = "http://127.0.0.1:8000"
    token: str | None = None
    team_size: int = 5
    broker_url: str = DEFAULT_BROKER
    queue: str = "proctor"
    queue_routes: tuple[tuple[str, str], ...] = ()
    token_days: float = DEFAULT_TOKEN_DAYS
    trust_proxy: bool = False
    team_jobs: int = 2
    upload_unpacks: int = 2
    upload_wait_s: float = 30.0
    upload_min_bytes: int = 1024
    upload_window_s: float = 30.0
    orphan_grace_s: float = 3600.0
    signup: SignupMode = "closed"
    smtp: SmtpServer | None = None
    mail_from: str = "proctor@localhost"
    public_url: str = "http://127.0.0.1:8000"
    public_url_set: bool = False

    def link_base(self, fallback: str) -> str:
        """The base of an address a page shows people (an invitation link, ``--server``).

        ``PROCTOR_PUBLIC_URL`` when the operator set it, else ``fallback`` (the address the
        browser used).
        """
        return self.public_url if self.public_url_set else fallback.rstrip("/")

    @property
    def url(self) -> str:
        """The database URL: ``database_url``, else SQLite in the data folder."""
        return self.database_url or f"sqlite:///{(self.data / 'proctor.sqlite3').resolve()}"

    @property
    def store_words(self) -> str:
        """Where accounts and tokens are kept, in words, a database password left out.

        ``the data folder /srv/proctor-data``, or ``the database postgresql://u:***@db/p``
        when ``PROCTOR_DATABASE_URL`` is set.
        """
        if not self.database_url:
            return f"the data folder {self.data.resolve()}"
        parts = urlsplit(self.database_url)
        shown = self.database_url
        if parts.password is not None:
            user = f"{parts.username}:***" if parts.username else ":***"
            host = parts.netloc.rpartition("@")[2]
            shown = parts._replace(netloc=f"{user}@{host}").geturl()
        return f"the database {shown}"

    @property
    def artifacts(self) -> Path:
        """The artifact store's folder."""
        return self.artifacts_dir or self.data / "artifacts"

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, data: Path | None = None
    ) -> ServiceSettings:
        """Read ``PROCTOR_*`` service variables; ``data`` (``--data``) wins over ``PROCTOR_DATA``.

        Raises ``UsageError`` naming the variable whose value cannot be used.
        """
        env = os.environ if environ is None else environ
        return cls(
            data=data or Path(env.get("PROCTOR_DATA", str(DEFAULT_DATA))),
            database_url=env.get("PROCTOR_DATABASE_URL") or None,
            artifacts_dir=Path(env["PROCTOR_ARTIFACTS"]) if env.get("PROCTOR_ARTIFACTS") else None,
            lease_s=_positive(env, "PROCTOR_LEASE_S", 30.0),
            heartbeat_s=_positive(env, "PROCTOR_HEARTBEAT_S", 10.0),
            reaper_s=_positive(env, "PROCTOR_REAPER_S", 5.0),
            upload_bytes=int(_positive(env, "PROCTOR_UPLOAD_BYTES", DEFAULT_UPLOAD_BYTES)),
            allow_host_environment=env.get("PROCTOR_ALLOW_HOST_ENVIRONMENT", "") == "1",
            server=env.get("PROCTOR_SERVER", "http://127.0.0.1:8000"),
            token=env.get("PROCTOR_TOKEN") or None,
            broker_url=env.get("PROCTOR_BROKER_URL") or DEFAULT_BROKER,
            queue=env.get("PROCTOR_QUEUE") or "proctor",
            queue_routes=_routes(env.get("PROCTOR_QUEUE_ROUTES", "")),
            token_days=_positive(env, "PROCTOR_TOKEN_DAYS", DEFAULT_TOKEN_DAYS, "days"),
            trust_proxy=env.get("PROCTOR_TRUST_PROXY", "") == "1",
            team_jobs=_count(env, "PROCTOR_TEAM_JOBS", 2),
            upload_unpacks=max(1, _count(env, "PROCTOR_UPLOAD_UNPACKS", 2)),
            upload_wait_s=_positive(env, "PROCTOR_UPLOAD_WAIT_S", 30.0),
            upload_min_bytes=_count(env, "PROCTOR_UPLOAD_MIN_BYTES", 1024),
            upload_window_s=_positive(env, "PROCTOR_UPLOAD_WINDOW_S", 30.0),
            orphan_grace_s=_positive(env, "PROCTOR_ORPHAN_GRACE_S", 3600.0),
            signup=_signup(env),
            smtp=SmtpServer.parse(env["PROCTOR_SMTP_URL"]) if env.get("PROCTOR_SMTP_URL") else None,
            mail_from=env.get("PROCTOR_MAIL_FROM") or "proctor@localhost",
            public_url=_public_url(env.get("PROCTOR_PUBLIC_URL") or "http://127.0.0.1:8000"),
            public_url_set=bool(env.get("PROCTOR_PUBLIC_URL")),
        )

    def queue_of(self, challenge: str) -> str:
        """The broker queue of ``challenge``'s jobs: its route, else ``queue``."""
        return dict(self.queue_routes).get(challenge, self.queue)


def _signup(env: Mapping[str, str]) -> SignupMode:
    """``PROCTOR_SIGNUP`` as a mode; sign-up other than ``closed`` needs a mail server."""
    text = env.get("PROCTOR_SIGNUP") or "closed"
    for mode in SIGNUP_MODES:
        if text == mode:
            if mode != "closed" and not env.get("PROCTOR_SMTP_URL"):
                raise UsageError(
                    f"PROCTOR_SIGNUP={mode} needs a mail server to verify addresses: "
                    "set PROCTOR_SMTP_URL (and PROCTOR_MAIL_FROM, PROCTOR_PUBLIC_URL)"
                )
            return mode
    raise UsageError(f"PROCTOR_SIGNUP={text!r}: choose one of {', '.join(SIGNUP_MODES)}")


def _public_url(text: str) -> str:
    """``PROCTOR_PUBLIC_URL`` without a trailing slash; a UsageError unless http(s)://HOST."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        raise UsageError(
            f"PROCTOR_PUBLIC_URL={text!r} is not a web address: write it as "
            "https://proctor.example (the base of every link in a mail)"
        )
    return text.rstrip("/")


def _routes(text: str) -> tuple[tuple[str, str], ...]:
    """``CHALLENGE:QUEUE,...`` as pairs; a UsageError naming ``PROCTOR_QUEUE_ROUTES`` if bad."""
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        challenge, _, queue = item.partition(":")
        if not challenge.strip() or not queue.strip():
            raise UsageError(
                f"PROCTOR_QUEUE_ROUTES: {item!r} is not CHALLENGE:QUEUE "
                "(e.g. PROCTOR_QUEUE_ROUTES=autowsl:bigmem,visceral-anatomy3:bigmem)"
            )
        pairs.append((challenge.strip(), queue.strip()))
    return tuple(pairs)


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """The whole number ≥ 0 in variable ``name``, else ``default``; a UsageError if invalid."""
    text = env.get(name)
    if not text:
        return default
    if not text.strip().isdigit():
        raise UsageError(f"{name}={text!r} is not a whole number (0 or more)")
    return int(text)


def _positive(
    env: Mapping[str, str], name: str, default: float, unit: str = "seconds or bytes"
) -> float:
    """The positive number in variable ``name``, else ``default``; a UsageError if invalid."""
    text = env.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UsageError(f"{name}={text!r} is not a positive number of {unit}")
    return value
