"""Row locks that make a rule's read-then-write one step, on SQLite and on PostgreSQL.

A rule such as a team's quota, its size or its final entries is checked by reading rows and
then writing one; two requests at once would both read the old state and both write. The
service takes :func:`lock_row` on the row the rule belongs to (the team) as the first
statement of its transaction, so the rule's reads see every earlier writer and the next
writer waits until this transaction ends.

PostgreSQL locks the one row (``SELECT ... FOR UPDATE``): other teams are not held up.
SQLite has one writer at a time: a write (a no-op ``UPDATE`` of the row) takes the
database's write lock, waiting for it under the busy timeout, before anything is read.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session


def lock_row(session: Session, model: Any, row_id: int) -> None:
    """Hold the write lock on ``model``'s row ``row_id`` until ``session``'s transaction ends.

    Call it first in a ``db.begin()`` block, before the rule's reads.
    """
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(model.id).where(model.id == row_id).with_for_update())
    else:
        no_op = update(model).where(model.id == row_id).values(id=model.id)
        session.execute(no_op.execution_options(synchronize_session=False))
