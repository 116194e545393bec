"""A submission's full record for the organizer, and its entry archive byte for byte.

First, why each failed task failed (the failure, its owner, the reason's last lines and a link
to the full log, ``services.platform.diagnostics``); then each task's stages with their full
diagnostics (what the participant never sees: the hidden
cases' log tails, the setup output, ``cases.jsonl`` as a table, ``efficiency.json``, the
scoring program's log), the scorer's whole dashboard as a heat map (VISCERAL's organ ×
metric, whatever the participant is shown) and its detailed results page (framed from
``scorer_page``); for an entry that ran in its own image, the image's digest, base, size and
packages, with its ``Dockerfile`` and build log to download. Organizers only
(``pages.common``, role ``organizer``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from proctor.services.platform import answers, diagnostics, image_facts, installs, records
from proctor.services.platform.answers import size_words
from proctor.web.deps import PlatformDep
from proctor.web.downloads import attachment
from proctor.web.pages.charts import Chart, dashboard_charts
from proctor.web.pages.common import Organizer, PageRoute, render
from proctor.web.pages.figures import Numbers, case_summary

router = APIRouter(include_in_schema=False, route_class=PageRoute)

CASE_COLUMNS = (
    "stage",
    "record",
    "ok",
    "problem",
    "exit_status",
    "timed_out",
    "wall_s",
    "cpu_s",
    "peak_memory_bytes",
)
"""The columns of ``cases.jsonl``'s table (the log tails follow each row)."""
SHOWN_PACKAGES = 12
"""A package list longer than this is collapsed (a ``<details>`` with its count)."""


@router.get("/console/submissions/{sid}", response_class=HTMLResponse)
def record_page(sid: str, request: Request, platform: PlatformDep, me: Organizer) -> Response:
    """A submission's full record: each stage's diagnostics, its cases, the entry to download."""
    record = records.submission_record(platform, me, sid)
    _, challenge = installs.current(platform, record.challenge)
    return render(
        request,
        "console/record.html",
        me,
        r=record,
        case_columns=CASE_COLUMNS,
        charts=_dashboards(record, Numbers(challenge)),
        case_summary=case_summary,
        anchor=diagnostics.anchor,
        size_words=size_words,
        shown_packages=SHOWN_PACKAGES,
    )


def _dashboards(record: answers.SubmissionRecord, numbers: Numbers) -> dict[str, list[Chart]]:
    """Each task's whole dashboard as a heat map (VISCERAL: organ × metric), undisclosed."""
    return {
        task.task: dashboard_charts({"dashboard": {task.task: task.dashboard}}, numbers)
        for task in record.tasks
        if task.dashboard
    }


@router.get("/console/submissions/{sid}/entry")
def entry_download(sid: str, platform: PlatformDep, me: Organizer) -> Response:
    """The submission's entry archive, byte for byte as uploaded."""
    path, filename = records.entry_archive(platform, me, sid)
    return FileResponse(path, media_type="application/octet-stream", filename=filename)


@router.get("/console/submissions/{sid}/tasks/{task}/image/{name}")
def image_file_download(
    sid: str, task: str, name: str, platform: PlatformDep, me: Organizer
) -> Response:
    """A kept file of the entry's own image: ``Dockerfile``, ``build.log``, ``entry-image.json``."""
    return attachment(image_facts.image_file(platform, me, sid, task, name))


__all__ = ["router"]
