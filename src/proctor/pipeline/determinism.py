"""The determinism check: run some exam cases again and compare their outputs byte for byte.

PhysioNet's organizers could not tell whether an entry gave the same answer twice. A phase may
ask for ``determinism_cases``: after the exam, that many cases that produced an output are run
again in the same home and their new outputs compared with the stored ones. Only counts are
reported (the cases are hidden), and the evaluation goes on whatever the result.
"""

from __future__ import annotations

from proctor.pipeline.context import TaskContext
from proctor.pipeline.report import CaseCounts, StageReport, StageStatus, Usage
from proctor.protocols.records import list_records


def rerun_cases(ctx: TaskContext, count: int) -> tuple[StageReport, dict[str, float]]:
    """Rerun up to ``count`` exam cases; return the stage report and ``{rerun, identical}``."""
    name = ctx.stage_name("rerun")
    inputs = ctx.task.hidden_inputs
    assert inputs is not None
    template = ctx.driver.protocol.output
    records = [
        r for r in list_records(inputs) if (ctx.outputs / template.format(record=r)).is_file()
    ]
    chosen = records[:count]
    ctx.progress.stage_started(name, len(chosen))
    identical = timed_out = 0
    outcomes = []
    for record in chosen:
        stored = (ctx.outputs / template.format(record=record)).read_bytes()
        run = ctx.driver.run_case(ctx.home, inputs, record, wall_s=ctx.challenge.limits.case_s)
        same = run.ok and run.output == stored
        identical += same
        timed_out += run.timed_out
        outcomes.append(run.outcome)
        ctx.log_case("rerun", run)
        ctx.progress.case_finished(name, same)
    usage = Usage.total(outcomes)
    total = len(chosen)
    verdict = "deterministic" if identical == total else "NOT deterministic"
    message = f"{identical} of {total} rerun cases gave identical output: {verdict}"
    counts = CaseCounts(total, identical, total - identical, timed_out)
    if ctx.challenge.disclosure.exam == "none":
        message, counts = "rerun completed", CaseCounts(total)
    report = StageReport(name, StageStatus.PASSED, message, usage.wall_s, counts, usage)
    ctx.progress.stage_finished(report)
    return report, {"rerun": float(total), "identical": float(identical)}
