"""The migrations build exactly the schema the models declare, on SQLite and PostgreSQL.

Each branch that adds a table or a column writes a migration and a model; this checks they
agree (Alembic's autogenerate comparison finds nothing to do), and that the chain has one
head and goes down to nothing and up again.
"""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from proctor.store.db import alembic_config, create_db_engine, migrate
from proctor.store.models import Base


def test_the_migrated_schema_is_the_models_schema(database_url: str) -> None:
    engine = create_db_engine(database_url)
    try:
        migrate(engine)
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert differences == []
    finally:
        engine.dispose()


def test_the_migrations_form_one_chain_that_goes_down_and_up(database_url: str) -> None:
    assert len(ScriptDirectory.from_config(alembic_config()).get_heads()) == 1
    engine = create_db_engine(database_url)
    try:
        migrate(engine)
        config = alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "base")
            command.upgrade(config, "head")
    finally:
        engine.dispose()
