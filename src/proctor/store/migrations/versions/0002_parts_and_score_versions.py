"""Publication per part of a task (a VISCERAL organ) and kept score versions (rescoring).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("part", sa.String(length=64), nullable=False, server_default="")
        )
        batch_op.drop_constraint("uq_publications_submission_id_task", type_="unique")
        batch_op.create_unique_constraint(
            "uq_publications_submission_id_task_part", ["submission_id", "task", "part"]
        )
    op.create_table(
        "score_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("challenge_version", sa.Integer(), nullable=False),
        sa.Column("scores", sa.Text(), nullable=False),
        sa.Column("cases", sa.Text(), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_score_versions_job_id_jobs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_score_versions")),
        sa.UniqueConstraint("job_id", "version", name=op.f("uq_score_versions_job_id_version")),
    )
    with op.batch_alter_table("score_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_score_versions_job_id"), ["job_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("score_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_score_versions_job_id"))
    op.drop_table("score_versions")
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.drop_constraint("uq_publications_submission_id_task_part", type_="unique")
        batch_op.create_unique_constraint(
            "uq_publications_submission_id_task", ["submission_id", "task"]
        )
        batch_op.drop_column("part")
