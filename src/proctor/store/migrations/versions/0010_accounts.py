"""Accounts people make themselves: email, approval, web sessions, mail links, server keys.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("email", sa.String(254), nullable=True))
        batch.add_column(sa.Column("email_verified", sa.Float(), nullable=True))
        batch.add_column(sa.Column("approval", sa.String(16), nullable=True))
        batch.add_column(
            sa.Column("notify_finished", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch.create_unique_constraint(op.f("uq_users_email"), ["email"])
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("ended", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_web_sessions_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sessions")),
        sa.UniqueConstraint("digest", name=op.f("uq_web_sessions_digest")),
    )
    op.create_index(op.f("ix_web_sessions_user_id"), "web_sessions", ["user_id"], unique=False)
    op.create_table(
        "mail_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(16), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("used", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_mail_links_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_links")),
        sa.UniqueConstraint("digest", name=op.f("uq_mail_links_digest")),
    )
    op.create_index(op.f("ix_mail_links_user_id"), "mail_links", ["user_id"], unique=False)
    op.create_table(
        "server_keys",
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("value", sa.String(128), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_server_keys")),
    )


def downgrade() -> None:
    op.drop_table("server_keys")
    op.drop_index(op.f("ix_mail_links_user_id"), table_name="mail_links")
    op.drop_table("mail_links")
    op.drop_index(op.f("ix_web_sessions_user_id"), table_name="web_sessions")
    op.drop_table("web_sessions")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint(op.f("uq_users_email"), type_="unique")
        batch.drop_column("notify_finished")
        batch.drop_column("approval")
        batch.drop_column("email_verified")
        batch.drop_column("email")
