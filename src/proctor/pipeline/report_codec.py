"""A task report to and from plain JSON data, so a worker can store it and the service rebuild it.

The stored form holds only what the participant's report holds (disclosure was applied when the
stage reports were made); ``from_data(to_data(r)) == r``.
"""

from __future__ import annotations

from typing import Any

from proctor.pipeline.report import (
    CaseCounts,
    EnvironmentInfo,
    StageReport,
    TaskReport,
    Usage,
)
from proctor.types import Failure, RunStatus, Stage, StageStatus


def _stage_to_data(stage: StageReport) -> dict[str, Any]:
    return {
        "stage": str(stage.stage),
        "status": str(stage.status),
        "message": stage.message,
        "wall_s": stage.wall_s,
        "cases": stage.cases.to_json(),
        "usage": {
            "wall_s": stage.usage.wall_s,
            "cpu_s": stage.usage.cpu_s,
            "peak_memory_bytes": stage.usage.peak_memory_bytes,
        },
        "task": stage.task,
        "figures_hidden": stage.figures_hidden,
    }


def _stage_from_data(data: dict[str, Any]) -> StageReport:
    return StageReport(
        Stage(data["stage"]),
        StageStatus(data["status"]),
        data["message"],
        data["wall_s"],
        CaseCounts(**data["cases"]),
        Usage(**data["usage"]),
        data["task"],
        figures_hidden=bool(data.get("figures_hidden", False)),  # absent in older reports
    )


def to_data(report: TaskReport) -> dict[str, Any]:
    """``report`` as JSON-ready data (NaN kept as NaN: store it with ``allow_nan``)."""
    return {
        "task": report.task,
        "status": str(report.status),
        "stages": [_stage_to_data(stage) for stage in report.stages],
        "failure": str(report.failure) if report.failure else None,
        "failed_stage": str(report.failed_stage) if report.failed_stage else None,
        "scores": report.scores,
        "per_record": report.per_record,
        "efficiency": report.efficiency,
        "determinism": report.determinism,
        "environment": report.environment.to_json(),
        "count_metrics": sorted(report.count_metrics),
        "dashboard": report.dashboard,
    }


def from_data(data: dict[str, Any]) -> TaskReport:
    """The task report ``to_data`` made."""
    return TaskReport(
        task=data["task"],
        status=RunStatus(data["status"]),
        stages=tuple(_stage_from_data(stage) for stage in data["stages"]),
        failure=Failure(data["failure"]) if data["failure"] else None,
        failed_stage=Stage(data["failed_stage"]) if data["failed_stage"] else None,
        scores=data["scores"],
        per_record=data["per_record"],
        efficiency=data["efficiency"],
        determinism=data["determinism"],
        environment=EnvironmentInfo(**data["environment"]),
        count_metrics=frozenset(data["count_metrics"]),
        dashboard=data.get("dashboard"),  # reports stored before it was kept have none
    )
