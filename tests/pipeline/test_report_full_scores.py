"""The unredacted scores travel in the task report for the service, never in its stored form."""

from __future__ import annotations

import json

from proctor.pipeline.report import FullScores, TaskReport
from proctor.pipeline.report_codec import from_data, to_data
from proctor.types import RunStatus

FULL = FullScores({"auprc": 0.4242, "records": 3.0}, {"r1": {"auprc": 0.123456}})


def test_the_stored_report_leaves_the_unredacted_scores_out() -> None:
    report = TaskReport("t", RunStatus.SCORED, (), scores={"auprc": 0.42}, full=FULL)
    stored = json.dumps(to_data(report))
    assert "0.4242" not in stored and "0.123456" not in stored and "full" not in stored
    assert from_data(json.loads(stored)) == report  # ``full`` takes no part in equality
    assert from_data(json.loads(stored)).full is None


def test_a_worker_commits_the_unredacted_scores_from_the_report() -> None:
    from proctor.executor.run import _outcome

    scored = TaskReport("t", RunStatus.SCORED, (), scores={"auprc": 0.42}, full=FULL)
    outcome = _outcome(scored)
    assert outcome.scores == FULL.summary and outcome.cases == FULL.per_record
    assert "0.4242" not in outcome.report
    failed = TaskReport("t", RunStatus.FAILED, (), full=FULL)
    assert _outcome(failed).scores == {} and _outcome(failed).cases == {}
