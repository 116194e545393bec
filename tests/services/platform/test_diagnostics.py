"""A failed task's reason and diagnostics from what a run artifact keeps (``cases.jsonl``'s
lines, ``score-error.txt``): the reason keeps its log's last line, the scorer's log wins over
the cases, and at most 20 failing cases are listed with the cap said."""

from __future__ import annotations

from proctor.services.platform import diagnostics

TRACEBACK = "\n".join(
    ["Traceback (most recent call last):"]
    + [f'  File "/app/program/score.py", line {n}, in step{n}' for n in range(40)]
    + ["KeyError: 'Total'"]
)


def _case(record: str, ok: bool) -> dict[str, object]:
    return {"stage": "exam", "record": record, "ok": ok, "problem": "" if ok else "exit 1",
            "stderr_tail": f"boom {record}\n", "stdout_tail": ""}  # fmt: skip


def test_a_scorer_failure_leads_with_its_traceback_last_line() -> None:
    lines = [{"stage": "exam", "record": None, "ok": True}, _case("te01", ok=False)]
    why = diagnostics.reason("t", "scorer", "score", {"score-error.txt": TRACEBACK}, lines)
    assert why.source == "score-error.txt" and why.anchor == "log-t-score_error_txt"
    assert why.lines[-1] == "KeyError: 'Total'"
    assert len(why.lines) == diagnostics.REASON_LINES and why.more
    assert why.owner.startswith("the organizer's scorer")


def test_a_failing_setup_is_the_reason_and_its_output_is_listed() -> None:
    prep = {"stage": "prep", "record": None, "ok": False, "problem": "setup.sh exited with 2",
            "stdout_tail": "installing\n", "stderr_tail": "pip: no such file\n"}  # fmt: skip
    why = diagnostics.reason("t", "entry", None, {}, [prep])
    assert why.stage == "prep" and why.lines == ["setup.sh exited with 2", "pip: no such file"]
    shown, failing = diagnostics.diagnostics([prep])
    assert shown == {
        "prep problem": "setup.sh exited with 2",
        "prep stderr": "pip: no such file\n",
        "prep stdout": "installing\n",
    }
    assert failing == 0


def test_at_most_20_failing_cases_are_listed_and_the_cap_is_said() -> None:
    lines = [_case(f"te{n:02d}", ok=n % 2 == 0) for n in range(60)]
    shown, failing = diagnostics.diagnostics(lines)
    assert failing == 30
    assert len({name.split()[2] for name in shown}) == diagnostics.MAX_FAILING_CASES
    assert "exam case te01 stderr" in shown and "exam case te00 stderr" not in shown
    assert "20 of 30 failing cases listed (at most 20)" in diagnostics.cap_words(failing)
