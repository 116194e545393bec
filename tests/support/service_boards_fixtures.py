"""An in-process service (SQLite or PostgreSQL) with the toy challenge and stored results.

Results are written to the store as a worker commits them (job done, result, scores), without
running an entry: the boards, publication and rescoring read only what is stored.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from sqlalchemy import select
from toy_challenge import HIDDEN, LENGTH, make_challenge

from proctor.formats.arousal_mat import write_arousal_reference
from proctor.pipeline.report import TaskReport
from proctor.pipeline.report_codec import to_data
from proctor.services.platform.accounts import Principal, add_user, authenticate
from proctor.services.platform.installs import install
from proctor.services.platform.resources import Platform, open_platform
from proctor.settings import ServiceSettings
from proctor.store.models import (
    ChallengeVersion,
    Job,
    Membership,
    Result,
    Score,
    SubmissionRow,
    Team,
)
from proctor.types import JobState, RunStatus
from proctor.web.app import create_app

with warnings.catch_warnings():  # starlette asks for httpx2, which this environment lacks
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

PHASES = [
    {
        "name": "check",
        "tasks": ["arousal"],
        "disclosure": {"prep": "none", "quiz": "none", "exam": "none", "score": "none"},
    },
    {"name": "plain", "tasks": ["arousal"]},
    {
        "name": "blind",
        "tasks": ["arousal"],
        "disclosure": {"exam": "none"},
        "leaderboards": [{"name": "zeros", "metrics": ["auprc", "records_zero_filled"]}],
    },
    {
        "name": "open",
        "tasks": ["arousal"],
        "final_entries": 1,
        "leaderboards": [
            {"name": "provisional", "metrics": ["auprc"], "ladder": {"step": 0.01}},
            {"name": "published", "metrics": ["auprc"], "aggregation": "best_published"},
            {"name": "finalists", "metrics": ["auprc", "auroc"], "only_final": True},
            {"name": "secret", "metrics": ["auprc"], "public": False},
        ],
    },
]


@dataclass
class Svc:
    """The platform, its app client, users' tokens and principals."""

    platform: Platform
    client: TestClient
    bundle: Path
    tokens: dict[str, str] = field(default_factory=dict)
    clock: float = 1_700_000_000.0

    def principal(self, user: str) -> Principal:
        return authenticate(self.platform, self.tokens[user])

    def get(self, path: str, user: str | None = None, **params: str) -> tuple[int, object]:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        response = self.client.get(f"/api/v1{path}", headers=headers, params=params)
        kind = response.headers.get("content-type", "")
        return response.status_code, (response.json() if "json" in kind else response.text)

    def post(self, path: str, user: str, body: dict[str, object] | None = None) -> tuple[int, dict]:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        response = self.client.post(f"/api/v1{path}", headers=headers, json=body or {})
        return response.status_code, response.json()

    def scored(
        self,
        sid: str,
        team: str,
        phase: str,
        scores: dict[str, float],
        *,
        run_artifact: str | None = None,
    ) -> str:
        """Store toy submission ``sid`` of ``team`` in ``phase`` as scored with ``scores``."""
        return self.scored_tasks(sid, team, phase, "toy", {"arousal": scores}, run_artifact)

    def scored_tasks(
        self,
        sid: str,
        team: str,
        phase: str,
        challenge: str,
        results: dict[str, dict[str, float]],
        run_artifact: str | None = None,
    ) -> str:
        """Store submission ``sid`` as scored: task → its scores."""
        self.clock += 60
        with self.platform.db.begin() as session:
            team_id = session.scalar(select(Team.id).where(Team.name == team))
            user_id = session.scalar(
                select(Membership.user_id).where(Membership.team_id == team_id)
            )
            bundle = session.scalar(
                select(ChallengeVersion)
                .where(ChallengeVersion.name == challenge)
                .order_by(ChallengeVersion.version.desc())
            )
            assert team_id is not None and user_id is not None and bundle is not None
            session.add(
                SubmissionRow(
                    id=sid,
                    team_id=team_id,
                    user_id=user_id,
                    challenge_id=bundle.id,
                    challenge=challenge,
                    phase=phase,
                    upload_sha256="0" * 64,
                    created=self.clock,
                )
            )
            session.flush()
            for task, scores in results.items():
                job = Job(submission_id=sid, task=task, state=JobState.DONE,
                          queued_at=self.clock, result_attempt=1)  # fmt: skip
                session.add(job)
                session.flush()
                report = to_data(TaskReport(task, RunStatus.SCORED, (), scores=dict(scores)))
                session.add(Result(job_id=job.id, attempt=1, status="scored",
                                   report=json.dumps(report), run_artifact=run_artifact,
                                   created=self.clock))  # fmt: skip
                session.add_all(Score(job_id=job.id, metric=m, value=v) for m, v in scores.items())
        return sid

    def install_flipped(self, root: Path) -> int:
        """Install the bundle again with its reference labels flipped (the same outputs score
        the other way); the new version."""
        updated = root / "flipped"
        shutil.copytree(self.bundle, updated)
        labels = np.ones(LENGTH)
        labels[LENGTH // 2 :] = 0
        for record in HIDDEN:
            write_arousal_reference(updated / "refs" / f"{record}-arousal.mat", labels)
        return install(self.platform, self.principal("olga"), str(updated)).version

    def keep_outputs(self, files: dict[str, str]) -> str:
        """A run artifact holding ``files`` as the exam's outputs; its digest."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for name, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(f"outputs/exam/{name}")
                info.size, info.mtime = len(data), int(time.time())
                tar.addfile(info, io.BytesIO(data))
        buffer.seek(0)
        return self.platform.artifacts.put_stream(buffer)


def toy_bundle(root: Path) -> Path:
    """The toy challenge with the phases and boards of ``PHASES``."""
    folder = make_challenge(root)
    path = folder / "challenge.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["phases"] = PHASES
    path.write_text(yaml.safe_dump(spec))
    return folder


def start(database_url: str, tmp: Path) -> Svc:
    """A platform on ``database_url`` with olga (organizer), bob (blue), carol (red), the toy."""
    settings = ServiceSettings(data=tmp / "data", database_url=database_url,
                               allow_host_environment=True)  # fmt: skip
    platform = open_platform(settings)
    svc = Svc(platform, TestClient(create_app(platform)), toy_bundle(tmp / "toy"))
    for name, organizer, team in (("olga", True, None), ("bob", False, "blue"),
                                  ("carol", False, "red")):  # fmt: skip
        svc.tokens[name] = add_user(platform, name, organizer=organizer, team=team).token
    install(platform, svc.principal("olga"), str(svc.bundle))
    return svc
