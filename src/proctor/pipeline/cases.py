"""Run the cases of a stage in parallel under a per-case and a whole-stage time limit."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass

from proctor.protocols.base import CaseRun


@dataclass(frozen=True, slots=True)
class StageRun:
    """The cases a stage ran, in record order, and whether the stage clock ran out."""

    runs: tuple[CaseRun, ...]
    not_started: tuple[str, ...]
    stage_timed_out: bool
    wall_s: float


RunCase = Callable[[str, float], CaseRun]


def run_cases(
    records: Sequence[str],
    run_case: RunCase,
    *,
    jobs: int,
    case_s: float,
    stage_s: float,
    stop_on_failure: bool,
    on_case: Callable[[CaseRun], None] | None = None,
    cancel: Callable[[], None] | None = None,
) -> StageRun:
    """Run ``run_case(record, wall_s)`` for each record, ``jobs`` at a time.

    Each case gets ``case_s`` seconds, or what is left of ``stage_s`` if less. With
    ``stop_on_failure`` (quiz) no new case starts after one fails; otherwise (exam) every case
    runs. Cases that could not start before the stage clock ran out are listed in
    ``not_started``. The worker threads live for the whole stage, so each sandbox is launched
    from a thread that outlives it. On a crash or Ctrl-C, ``cancel`` kills the running cases
    so the stage ends at once.
    """
    started = time.monotonic()
    deadline = started + stage_s
    stop = threading.Event()
    results: dict[str, CaseRun] = {}
    skipped: list[str] = []

    def task(record: str) -> CaseRun | None:
        remaining = deadline - time.monotonic()
        if stop.is_set() or remaining <= 0:
            return None
        run = run_case(record, min(case_s, remaining))
        if stop_on_failure and not run.ok:
            stop.set()
        if on_case is not None:
            on_case(run)
        return run

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="case") as pool:
        futures: dict[Future[CaseRun | None], str] = {}
        try:  # a Ctrl-C while cases are being submitted must abandon those already running
            for record in records:
                futures[pool.submit(task, record)] = record
            _collect(futures, results, skipped)
        except BaseException:
            stop.set()
            _abandon(pool, futures, cancel)
            raise
    ordered = tuple(results[r] for r in records if r in results)
    not_started = tuple(r for r in records if r in skipped)
    timed_out = time.monotonic() >= deadline
    return StageRun(ordered, not_started, timed_out, time.monotonic() - started)


def _abandon(
    pool: ThreadPoolExecutor,
    futures: dict[Future[CaseRun | None], str],
    cancel: Callable[[], None] | None,
) -> None:
    """After a crash (or Ctrl-C): start no new case, kill the running ones, wait only for them.

    ``cancel`` is called again and again: a case may have been launching during the last call.
    """
    pool.shutdown(wait=False, cancel_futures=True)
    while cancel is not None and not all(f.done() for f in futures):
        cancel()
        wait(futures, timeout=0.05)


def _collect(
    futures: dict[Future[CaseRun | None], str],
    results: dict[str, CaseRun],
    skipped: list[str],
) -> None:
    """Wait for every case, sorting finished runs and unstarted cases.

    Finished runs go into ``results``, cases that never started into ``skipped``; the first
    exception a case raised is raised again. ``as_completed`` waits on every future once (a
    ``wait(FIRST_COMPLETED)`` per case re-registers on all pending ones: quadratic in cases).
    """
    for future in as_completed(futures):
        run = future.result()
        if run is None:
            skipped.append(futures[future])
        else:
            results[futures[future]] = run
