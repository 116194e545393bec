"""Registrations per challenge: who registered (terms accepted), approved or denied; invitations.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "registrations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("challenge", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("terms_version", sa.String(64), nullable=False),
        sa.Column("registered", sa.Float(), nullable=False),
        sa.Column("decided", sa.Float(), nullable=True),
        sa.Column("decided_by", sa.String(64), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_registrations_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registrations")),
        sa.UniqueConstraint(
            "challenge", "user_id", name=op.f("uq_registrations_challenge_user_id")
        ),
    )
    op.create_index(
        op.f("ix_registrations_challenge"), "registrations", ["challenge"], unique=False
    )
    op.create_table(
        "challenge_invites",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("challenge", sa.String(64), nullable=False),
        sa.Column("invitee", sa.String(255), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenge_invites")),
        sa.UniqueConstraint(
            "challenge", "invitee", name=op.f("uq_challenge_invites_challenge_invitee")
        ),
    )


def downgrade() -> None:
    op.drop_table("challenge_invites")
    op.drop_index(op.f("ix_registrations_challenge"), table_name="registrations")
    op.drop_table("registrations")
