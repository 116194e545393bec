import threading
import time
from pathlib import Path

from proctor.pipeline.cases import run_cases
from proctor.protocols.base import CaseRun
from proctor.sandbox.base import Outcome


def case(record: str, ok: bool = True, timed_out: bool = False) -> CaseRun:
    outcome = Outcome(exit_status=0 if ok else 1, timed_out=timed_out)
    return CaseRun(record, outcome, Path("x") if ok else None, "" if ok else "failed")


def test_results_come_back_in_record_order_whatever_the_finishing_order() -> None:
    def run(record: str, wall_s: float) -> CaseRun:
        time.sleep(0.02 * (5 - int(record)))
        return case(record)

    result = run_cases(
        [str(i) for i in range(5)], run, jobs=5, case_s=1, stage_s=10, stop_on_failure=False
    )
    assert [r.case for r in result.runs] == ["0", "1", "2", "3", "4"]
    assert not result.stage_timed_out


def test_quiz_mode_starts_no_new_case_after_a_failure() -> None:
    def run(record: str, wall_s: float) -> CaseRun:
        return case(record, ok=record != "1")

    result = run_cases(
        [str(i) for i in range(6)], run, jobs=1, case_s=1, stage_s=10, stop_on_failure=True
    )
    assert [r.case for r in result.runs] == ["0", "1"]
    assert result.not_started == ("2", "3", "4", "5")


def test_exam_mode_runs_every_case_despite_failures() -> None:
    def run(record: str, wall_s: float) -> CaseRun:
        return case(record, ok=int(record) % 2 == 0)

    result = run_cases(
        [str(i) for i in range(6)], run, jobs=2, case_s=1, stage_s=10, stop_on_failure=False
    )
    assert len(result.runs) == 6


def test_each_case_gets_at_most_what_is_left_of_the_stage_clock() -> None:
    given: list[float] = []

    def run(record: str, wall_s: float) -> CaseRun:
        given.append(wall_s)
        time.sleep(0.15)
        return case(record)

    result = run_cases(["a", "b", "c"], run, jobs=1, case_s=5, stage_s=0.25, stop_on_failure=False)
    assert given[0] <= 0.25
    assert given[1] < 0.15
    assert result.not_started == ("c",)
    assert result.stage_timed_out


def test_cases_really_run_in_parallel() -> None:
    barrier = threading.Barrier(3, timeout=2)

    def run(record: str, wall_s: float) -> CaseRun:
        barrier.wait()
        return case(record)

    result = run_cases(["a", "b", "c"], run, jobs=3, case_s=5, stage_s=5, stop_on_failure=False)
    assert len(result.runs) == 3


def test_a_case_launched_while_the_stage_is_being_cancelled_is_cancelled_too() -> None:
    blocked: list[threading.Event] = []
    lock = threading.Lock()

    def cancel() -> None:  # like Sandbox.cancel_all: ends only the runs under way right now
        with lock:
            for event in blocked:
                event.set()

    def run(record: str, wall_s: float) -> CaseRun:
        if record == "crash":
            raise RuntimeError("worker fault")
        time.sleep(0.2)  # still launching when the first cancel() comes
        released = threading.Event()
        with lock:
            blocked.append(released)
        assert released.wait(timeout=10), "never cancelled"
        return case(record, ok=False)

    started = time.monotonic()
    try:
        run_cases(
            ["late", "crash"], run, jobs=2, case_s=30, stage_s=60, stop_on_failure=False,
            cancel=cancel,
        )  # fmt: skip
    except RuntimeError:
        pass
    else:
        raise AssertionError("the crash must propagate")
    assert time.monotonic() - started < 5
    assert len(blocked) == 1 and blocked[0].is_set()


class InterruptedListing:
    """Records whose listing is interrupted (Ctrl-C) after the first has been handed out."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield "a"
        time.sleep(0.1)  # the first case is running by now
        raise KeyboardInterrupt

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> str:
        return "ab"[index]


def test_a_ctrl_c_while_cases_are_submitted_kills_the_running_ones() -> None:
    killed = threading.Event()

    def run(record: str, wall_s: float) -> CaseRun:
        killed.wait(30)  # a case that runs until it is killed
        return case(record, ok=False)

    started = time.monotonic()
    try:
        run_cases(InterruptedListing(), run, jobs=2, case_s=30, stage_s=30,  # type: ignore[arg-type]
                  stop_on_failure=False, cancel=killed.set)  # fmt: skip
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert killed.is_set() and time.monotonic() - started < 5
