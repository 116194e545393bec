"""Database fixtures: every store test runs on SQLite and on PostgreSQL (127.0.0.1:5432, db test).

PostgreSQL tests get a fresh schema each, dropped afterwards; they are skipped, saying why, only
when the server is unreachable.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _pg_reachable() -> str | None:
    try:
        engine = create_engine(PG_URL, connect_args={"connect_timeout": 2})
        with engine.connect() as connection:
            connection.execute(text("select 1"))
        engine.dispose()
    except Exception as err:
        return f"PostgreSQL at 127.0.0.1:5432 (database test, user postgres) unreachable: {err}"
    return None


@pytest.fixture(scope="session")
def pg_unreachable() -> str | None:
    return _pg_reachable()


@contextmanager
def fresh_schema_url() -> Iterator[str]:
    """A PostgreSQL URL whose default schema is fresh (dropped when the block ends)."""
    schema = f"t_{secrets.token_hex(6)}"
    admin = create_engine(PG_URL)
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture
def pg_schema_url(pg_unreachable: str | None) -> Iterator[str]:
    """A PostgreSQL URL whose default schema is fresh (dropped at the end of the test)."""
    if pg_unreachable:
        pytest.skip(pg_unreachable)
    with fresh_schema_url() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database: SQLite in ``tmp_path``, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'proctor.sqlite3'}"
    return str(request.getfixturevalue("pg_schema_url"))
