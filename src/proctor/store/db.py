"""Open the service's database: an engine for its URL, migrated to the newest schema.

SQLite (the embedded default) runs in WAL mode with a busy timeout so the server's threads and
worker processes share it; PostgreSQL is used as is. Migrations (``store/migrations``) run on
open, so a data folder or a database of an older version is brought up to date in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
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
    """An engine for ``url``; a SQLite file's folder is created, WAL and busy timeout set."""
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
    return create_engine(url, pool_pre_ping=True)


def alembic_config() -> Config:
    """Alembic's configuration for the migrations inside the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: Engine) -> None:
    """Bring the database at ``engine`` to the newest schema (idempotent)."""
    config = alembic_config()
    with engine.begin() as connection:
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
