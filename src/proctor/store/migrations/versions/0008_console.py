"""Organizer console: disabled users, phase time overrides, team quota overrides.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "phase_overrides",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("challenge", sa.String(64), nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("opens", sa.Float(), nullable=True),
        sa.Column("closes", sa.Float(), nullable=True),
        sa.Column("changed", sa.Float(), nullable=False),
        sa.Column("changed_by", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phase_overrides")),
        sa.UniqueConstraint("challenge", "phase", name=op.f("uq_phase_overrides_challenge_phase")),
    )
    op.create_table(
        "team_quotas",
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("per_day", sa.Integer(), nullable=True),
        sa.Column("every_days", sa.Float(), nullable=True),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("concurrent", sa.Integer(), nullable=True),
        sa.Column("changed", sa.Float(), nullable=False),
        sa.Column("changed_by", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_team_quotas_team_id_teams")
        ),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_team_quotas")),
    )


def downgrade() -> None:
    op.drop_table("team_quotas")
    op.drop_table("phase_overrides")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("disabled")
