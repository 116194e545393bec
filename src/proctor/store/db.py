"""Open the service's database: an engine for its URL, migrated to the newest schema.

SQLite (the embedded default) runs in WAL mode with a busy timeout so the server's threads and
worker processes share it; PostgreSQL is used as is. Migrations (``store/migrations``) run on
open, so a data folder or a database of an older version is brought up to date in place;
processes that open the same new database at once take turns (:func:`migrate`).
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

from proctor.errors import UsageError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 30_000


def _sqlite_pragmas(connection: Any, _: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_db_engine(url: str) -> Engine:
    """An engine for ``url``.

    SQLite: the file's folder is created, WAL and a busy timeout set. PostgreSQL: a session
    ends a transaction left idle for ``IDLE_IN_TRANSACTION``.
    """
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    engine = create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "postgresql":
        event.listen(engine, "connect", _postgresql_session)
    return engine


IDLE_IN_TRANSACTION = "60s"
"""How long a PostgreSQL session of Proctor may sit in a transaction doing nothing before the
server ends it: a worker frozen or cut off mid-transaction (a paused VM, a partition) would
otherwise hold its row locks, and with them the job queue, until TCP gives up (hours).
Proctor does no slow work inside a transaction (artifacts are staged before and moved in)."""


def _postgresql_session(connection: Any, _record: Any) -> None:
    """Bound idle transactions, unless the server or the URL's ``options`` already do."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW idle_in_transaction_session_timeout")
        (current,) = cursor.fetchone()
        if str(current) in ("0", "0ms"):
            cursor.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'")
    connection.commit()


def alembic_config() -> Config:
    """Alembic's configuration for the migrations inside the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


MIGRATION_LOCK_KEY = 0x50524F43  # "PROC": PostgreSQL's advisory lock of migrations (per schema)
SCHEMA_KEY = "hashtext(current_schema())"
"""The second key of Proctor's advisory locks: deployments sharing one PostgreSQL database,
each in a schema of its own (``search_path``), never hold up each other's migrations or job
claims."""


@contextmanager
def _sqlite_migration_lock(engine: Engine) -> Iterator[None]:
    """Hold an exclusive lock on a file beside the SQLite database (none in memory)."""
    path = engine.url.database
    if not path or path == ":memory:":
        yield
        return
    lock = Path(f"{path}.migrate-lock")
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def migrate(engine: Engine) -> None:
    """Bring the database at ``engine`` to the newest schema (idempotent, one process at once).

    Processes opening a new database at once (two ``user add``, a server and its workers)
    take turns: on SQLite a file lock beside the database, on PostgreSQL an advisory lock held
    until the migration's transaction ends. The next process then finds the schema current.
    """
    config = alembic_config()
    if engine.dialect.name == "sqlite":
        with _sqlite_migration_lock(engine), engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
        return
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(
                text(f"SELECT pg_advisory_xact_lock(:key, {SCHEMA_KEY})"),
                {"key": MIGRATION_LOCK_KEY},
            )
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def open_database(url: str) -> sessionmaker[Session]:
    """A session factory on the migrated database at ``url``.

    Raises ``UsageError`` naming the URL when it cannot be reached or migrated.
    """
    engine = create_db_engine(url)
    try:
        migrate(engine)
    except Exception as err:
        shown = engine.url.render_as_string(hide_password=True)
        raise UsageError(
            f"cannot open the database {shown}: {err}; check PROCTOR_DATABASE_URL or --data"
        ) from err
    return sessionmaker(engine, expire_on_commit=False)


def dispose(db: sessionmaker[Session]) -> None:
    """Close every pooled connection of ``db`` (a server stopping, a test ending)."""
    bind = db.kw.get("bind")
    if isinstance(bind, Engine):
        bind.dispose()
