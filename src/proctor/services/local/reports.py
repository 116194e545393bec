"""What the faces display of an evaluation: its report, its progress events, a leaderboard.

These types are built below the services (``proctor.pipeline`` reports and progress,
``proctor.leaderboard`` standings) and re-exported here, so that a face (the CLI, the web API)
reaches them through the services, as everything else it calls:

- :class:`EvaluationReport`, what ``services.evaluate.run_entry`` returns, with one
  :class:`StageReport` per stage (already redacted for the participant);
- :class:`ProgressListener`, the protocol a face implements to follow an evaluation live, whose
  events name a stage by its :class:`StageKey`;
- :class:`Standing`, one row of a leaderboard (``services.demo.demo_leaderboard``).
"""

from __future__ import annotations

from proctor.leaderboard import Standing
from proctor.pipeline.progress import ProgressListener, StageKey
from proctor.pipeline.report import EvaluationReport, StageReport

__all__ = ["EvaluationReport", "ProgressListener", "StageKey", "StageReport", "Standing"]
