"""Rescore previews: a rescore computed and shown before an organizer applies it.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rescore_previews",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("challenge", sa.String(64), nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("challenge_version", sa.Integer(), nullable=False),
        sa.Column("jobs", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rescore_previews")),
    )
    op.create_index(
        op.f("ix_rescore_previews_challenge"), "rescore_previews", ["challenge"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_rescore_previews_challenge"), table_name="rescore_previews")
    op.drop_table("rescore_previews")
