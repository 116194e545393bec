"""The leaderboards of a phase as the service shows them, to whom, and as much as allowed.

Every board a phase has (``spec.leaderboards.phase_boards``: the implicit ``default`` and
``all`` and the declared ones) is computed by ``leaderboard.compute_board`` from the stored
scored submissions (``services.board_entries``); the organizers' test submissions
(``services.organizer_team``) are ranked on ``all`` only. Who may read a board:

* a ``public`` board, in a phase whose score stage discloses scores: anyone, without a token;
* any other board (``all``; ``default`` beside a Ladder or ``best_published`` board; a board
  declared ``public: false``; every board of a phase that shows no score, such as AutoWSL's
  check phase): organizers only (403 / exit 5 for a participant or an anonymous caller).

A board asked for without a phase shows the open phase, else the last one that closed
(``phase_times.board_phase``), never a phase that has not opened while another ran.

What a non-organizer reads is cut to the phase's disclosure: no bootstrap interval unless the
score stage is ``full`` with per-case values disclosed (they summarise hidden per-case
values), and none of the counts of cases scored as zeros when the exam shows nothing.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime

from sqlalchemy import select

from proctor.errors import ForbiddenError, NotFoundError
from proctor.leaderboard import Board, board_to_csv, board_to_dict, compute_board
from proctor.pipeline.runner import disclosure_level
from proctor.pipeline.score import ZERO_FILLED
from proctor.services.platform import submission_fields
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import Leaderboard
from proctor.services.platform.board_entries import StoredEntry, stored_entries
from proctor.services.platform.installs import current
from proctor.services.platform.phase_times import board_phase
from proctor.services.platform.resources import Platform
from proctor.spec import Challenge, Phase
from proctor.spec.leaderboards import ALL_BOARD, BoardSpec, find_board, metric_directions
from proctor.store.models import SubmissionRow
from proctor.types import Disclosure, Stage


def phase_of(challenge: Challenge, name: str | None) -> Phase:
    """Phase ``name`` (the last when None); ``NotFoundError`` naming the phases otherwise."""
    try:
        return challenge.phase(name)
    except KeyError as err:
        raise NotFoundError(str(err.args[0])) from None


def _board(challenge: Challenge, phase: Phase, name: str) -> BoardSpec:
    try:
        return find_board(challenge, phase.name, name)
    except KeyError as err:
        raise NotFoundError(str(err.args[0])) from None


def scores_disclosed(challenge: Challenge, phase: Phase) -> bool:
    """True when the phase's score stage shows participants any score at all."""
    policy = challenge.disclosure_for(phase)
    return disclosure_level(policy, Stage.SCORE) is not Disclosure.NONE


def may_read(challenge: Challenge, phase: Phase, board: BoardSpec) -> bool:
    """True when anyone may read ``board`` (no token): public, in a phase showing scores."""
    return board.public and scores_disclosed(challenge, phase)


def _cut(challenge: Challenge, phase: Phase, board: BoardSpec) -> tuple[BoardSpec, bool]:
    """The board as a non-organizer sees it, and whether intervals may show."""
    policy = challenge.disclosure_for(phase)
    intervals = (
        disclosure_level(policy, Stage.SCORE) is Disclosure.FULL and policy.per_record != "none"
    )
    if disclosure_level(policy, Stage.EXAM) is Disclosure.NONE:
        kept = tuple(m for m in board.metrics if m not in ZERO_FILLED)
        board = board.model_copy(update={"metrics": kept})
    return board, intervals


def compute(
    challenge: Challenge,
    phase: Phase,
    board: BoardSpec,
    entries: list[StoredEntry],
    *,
    intervals: bool = True,
) -> Board:
    """``board`` of ``phase`` over the stored ``entries`` (the organizer's view by default)."""
    if board.aggregation == "best_published":
        submissions = [entry.published_view(board.rank_metric) for entry in entries]
    else:
        submissions = [entry.scored for entry in entries]
    if not intervals:
        submissions = [dataclasses.replace(s, case_values={}) for s in submissions]
    return compute_board(
        board,
        submissions,
        metric_directions(challenge),
        challenge=challenge.name,
        phase=phase.name,
    )


def _readable(
    platform: Platform,
    principal: Principal | None,
    challenge_name: str,
    phase_name: str | None,
    board_name: str,
) -> tuple[Challenge, Phase, BoardSpec, bool, list[StoredEntry]]:
    """The board as ``principal`` may read it: challenge, phase, cut board, intervals, entries."""
    _, challenge = current(platform, challenge_name)
    phase = phase_of(challenge, phase_name) if phase_name else board_phase(challenge, time.time())
    board = _board(challenge, phase, board_name)
    organizer = principal is not None and principal.organizer
    if not organizer and not may_read(challenge, phase, board):
        why = (
            "its phase shows participants no score"
            if not scores_disclosed(challenge, phase)
            else "it is not public"
        )
        raise ForbiddenError(
            f"board {board.name!r} of phase {phase.name!r} is for organizers only ({why}); "
            "public boards of a phase are listed in its challenge.yaml"
        )
    intervals = True
    if not organizer:
        board, intervals = _cut(challenge, phase, board)
    with platform.db() as session:
        entries = stored_entries(session, challenge, phase, with_hidden=board.name == ALL_BOARD)
    return challenge, phase, board, intervals, entries


def board_for(
    platform: Platform,
    principal: Principal | None,
    challenge_name: str,
    phase_name: str | None,
    board_name: str,
) -> Board:
    """Board ``board_name`` of the phase (the last when None), as ``principal`` may see it.

    Raises ``NotFoundError`` naming the boards for an unknown board or phase and
    ``ForbiddenError`` for a board that is not public to a caller who is not an organizer.
    """
    challenge, phase, board, intervals, entries = _readable(
        platform, principal, challenge_name, phase_name, board_name
    )
    return compute(challenge, phase, board, entries, intervals=intervals)


def board_history(
    platform: Platform,
    principal: Principal | None,
    challenge_name: str,
    phase_name: str | None,
    board_name: str,
) -> list[tuple[datetime, Board]]:
    """The board as it stood after each scored submission (its time), oldest first.

    Each is the board computed over the submissions made until then, under the same reading
    rules and disclosure cut as ``board_for`` (so it shows nothing the board would not).
    """
    challenge, phase, board, _, entries = _readable(
        platform, principal, challenge_name, phase_name, board_name
    )
    ordered = sorted(entries, key=lambda e: e.scored.submitted_at)
    return [
        (
            entry.scored.submitted_at,
            compute(challenge, phase, board, ordered[: n + 1], intervals=False),
        )
        for n, entry in enumerate(ordered)
    ]


def leaderboard(
    platform: Platform,
    principal: Principal | None,
    challenge_name: str,
    phase_name: str | None,
    board: str,
) -> Leaderboard:
    """The board as the caller may read it (the REST board's answer).

    Each row carries its submission's public ``submission_fields`` values (``fields``).
    """
    shown = board_for(platform, principal, challenge_name, phase_name, board)
    answer = Leaderboard.model_validate(board_to_dict(shown))
    _, challenge = current(platform, challenge_name)
    labels = {f.name: f.shown_label for f in challenge.submission_fields if f.public}
    if not labels:
        return answer
    values = _public_fields(platform, challenge, [row.submission for row in answer.rows])
    rows = [
        row.model_copy(update={"fields": values.get(row.submission, {})}) for row in answer.rows
    ]
    return answer.model_copy(update={"rows": rows, "field_labels": labels})


def _public_fields(
    platform: Platform, challenge: Challenge, sids: list[str]
) -> dict[str, dict[str, str]]:
    """Each submission's public ``submission_fields`` values, by submission id."""
    if not any(field.public for field in challenge.submission_fields):
        return {}
    with platform.db() as session:
        found = session.execute(
            select(SubmissionRow.id, SubmissionRow.fields).where(SubmissionRow.id.in_(sids))
        ).all()
    return {
        sid: submission_fields.public(challenge, submission_fields.stored(text))
        for sid, text in found
    }


def leaderboard_csv(
    platform: Platform,
    principal: Principal | None,
    challenge_name: str,
    phase_name: str | None,
    board: str,
) -> str:
    """The board as CSV (``leaderboard.export``'s columns), with the same access rules.

    The challenge's public ``submission_fields`` follow as columns ``field.NAME``.
    """
    shown = board_for(platform, principal, challenge_name, phase_name, board)
    _, challenge = current(platform, challenge_name)
    values = _public_fields(platform, challenge, [row.submission for row in shown.rows])
    extra = {
        f"field.{field.name}": {sid: found.get(field.name, "") for sid, found in values.items()}
        for field in challenge.submission_fields
        if field.public
    }
    return board_to_csv(shown, extra)
