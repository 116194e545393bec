"""Fair queue: when each team's job last left the queue (round robin between teams).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "queue_turns",
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("last_claim", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_queue_turns_team_id_teams")
        ),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_queue_turns")),
    )


def downgrade() -> None:
    op.drop_table("queue_turns")
