"""The ``python_model`` protocol (AutoWSL / CodaLab AutoML): a harness drives ``model.py``.

Each case is one dataset folder, shown read-only at ``/data``; the entry's home is ``/entry``
(its working folder) and the harness (``harness/model_harness.py``, copied into the run folder
like the entry) is shown read-only at ``/proctor``. Per dataset, two sandboxed processes run
``python3 -I`` on the harness:

1. ``train``: load the data (within ``load_s``), start the clock, ``Model(info)``,
   ``train(X, y)``, ``save(dir)``, all within the dataset's training budget;
2. ``predict``, a fresh process: load the test data, start the clock, ``Model(info)``,
   ``load(dir)``, ``predict(X)``, the CSV written, within the prediction budget.

The clock is the sandbox's (``Limits.start_s``): the harness writes one byte on a pipe the
host watches once the data is loaded and before it imports the entry, and the host kills the
process tree when the budget runs out. Both runs are cases of the session
(``SandboxSession.run_case``): with the bwrap backend as root they are fresh processes forked
by the session's case server for the dataset's mounts, each with its own clock pipe, budget and
cgroup kill, which saves a sandbox launch per run; the import check at prep is a sandbox of its
own. The saved model and the prediction live in the home
(``.proctor-model-DATASET/``) and are removed after the case; the prediction leaves the home
through ``collect_output_to``. Test labels are hidden references: never mounted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from proctor.entries import Manifest
from proctor.errors import PlatformError
from proctor.protocols.base import CaseRun, DriverWithoutAnswers, Preparation
from proctor.protocols.harness import HARNESS_DIR, HARNESS_FILE
from proctor.protocols.model_runs import (
    DATA_STATUS,
    INFO,
    PROBLEM_STATUS,
    combined,
    cores,
    harness_problem,
    read_budgets,
    test_rows,
)
from proctor.protocols.outputs import check_record_template, collect_output_to
from proctor.protocols.scripts import duration
from proctor.sandbox.base import Limits, Mount, Outcome, RunSpec
from proctor.spec.protocols import ProtocolSettings
from proctor.trees import remove_tree_quietly


class PythonModelProtocol(ProtocolSettings):
    """AutoML-style (AutoWSL): a harness drives the entry's ``model.py`` on each dataset.

    A case is one dataset folder (``info.json``, ``train.data``, ``train.solution``,
    ``test.data``). ``Model(info)`` trains and saves in one process, loads and predicts in a
    fresh one; each process first loads the data within ``load_s`` seconds, then its clock
    starts: the dataset's ``time_budget`` (training) or ``pred_time_budget`` (prediction) from
    its ``info.json``, else ``time_budget_s`` / ``pred_time_budget_s``. ``max_budget_s`` caps
    any budget a dataset declares; ``prep_s`` is the import check of ``model.py``, ``stage_s``
    a whole quiz or exam. ``output`` names the stored prediction (CSV, header ``label``).
    """

    kind: Literal["python_model"]
    module: str = "model.py"
    output: str = "{record}.predict"
    load_s: float = Field(default=300.0, gt=0, strict=True)
    prep_s: float = Field(default=60.0, gt=0, strict=True)
    time_budget_s: float = Field(default=1200.0, gt=0, strict=True)
    pred_time_budget_s: float = Field(default=600.0, gt=0, strict=True)
    max_budget_s: float = Field(default=3600.0, gt=0, strict=True)
    stage_s: float = Field(default=7200.0, gt=0, strict=True)

    @field_validator("module")
    @classmethod
    def _plain_module(cls, module: str) -> str:
        if "/" in module or not module.endswith(".py") or module.startswith("."):
            raise ValueError(f"{module!r} must be a .py file at the top of the entry")
        return module

    @field_validator("output")
    @classmethod
    def _one_file_per_dataset(cls, template: str) -> str:
        return check_record_template(template)


HOME = "/entry"
DATA = "/data"
HARNESS = "/proctor/" + HARNESS_FILE
PYTHON = "python3"
SANDBOX_TMP = "/tmp"  # noqa: S108 - the sandbox's own private tmpfs


def _settings(settings: ProtocolSettings) -> PythonModelProtocol:
    if not isinstance(settings, PythonModelProtocol):
        raise TypeError(f"the python_model driver cannot run a {settings.kind!r} protocol")
    return settings


def list_datasets(folder: Path) -> list[str]:
    """The dataset folders of a split (sub-folders holding an ``info.json``), sorted."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and (p / INFO).is_file())


def state_folder(case: str) -> str:
    """The home's folder (relative) holding one dataset's saved model and prediction."""
    return f".proctor-model-{case}"


class PythonModelDriver(DriverWithoutAnswers):
    """Runs an entry's ``Model`` on each dataset in the job's sandbox session."""

    kind = "python_model"
    settings_model = PythonModelProtocol
    summary = "AutoML: a harness drives the entry's model.py (train, save, load, predict)"
    case_noun = "dataset"
    failed_case_fails_task = True
    support_files = (HARNESS_DIR / HARNESS_FILE,)

    @property
    def protocol(self) -> PythonModelProtocol:
        """The challenge's python_model settings."""
        return _settings(self.context.settings)

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The datasets of ``folder`` (one sub-folder each, with ``info.json``)."""
        return list_datasets(folder)

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The stored prediction of each dataset, e.g. ``{record}.predict``."""
        return _settings(settings).output

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """The entry must hold its model module (``model.py``)."""
        return Manifest(required=(_settings(settings).module,))

    @property
    def case_s(self) -> float:
        """A dataset is bounded by its own budgets; the stage clock bounds them all."""
        return self.protocol.stage_s

    @property
    def stage_s(self) -> float:
        """Seconds a whole quiz or exam may take."""
        return self.protocol.stage_s

    def _limits(self, budget_s: float) -> Limits:
        """One harness run: ``load_s`` unclocked, then ``budget_s`` on the clock."""
        limits = self.context.limits
        start_s = self.protocol.load_s
        cpus = limits.cpus_per_case or cores()
        return Limits(
            wall_s=budget_s,
            start_s=start_s,
            cpu_s=(start_s + budget_s) * cpus,
            memory_bytes=limits.memory_bytes,
            processes=limits.processes,
            uid_processes=limits.processes * max(1, self.context.parallel_runs),
            file_size_bytes=limits.home_bytes,
            tmp_bytes=limits.tmp_bytes,
            log_bytes=limits.log_bytes,
            cpus=limits.cpus_per_case,
        )

    @property
    def _harness(self) -> Path:
        """The run folder's copy of the harness (never the install path's)."""
        if self.context.support is None:
            raise PlatformError("the python_model driver was given no copy of its harness")
        return self.context.support / HARNESS_FILE

    def _run(self, mode: str, home: Path, data: Path, budget_s: float, case: str) -> Outcome:
        """One harness run; the training and prediction runs of datasets go to ``run_case``."""
        state = f"{HOME}/{state_folder(case)}"
        argv = [PYTHON, "-I", HARNESS, mode, "--entry", HOME, "--module", self.protocol.module,
                "--data", DATA, "--state", f"{state}/model",
                "--output", f"{state}/prediction"]  # fmt: skip
        own = {"HOME": HOME, "TMPDIR": SANDBOX_TMP, "LANG": "C.UTF-8", "PROCTOR_DATA": DATA}
        env = {**self.context.variables, **own}
        session = self.context.session
        return (session.run if mode == "check" else session.run_case)(
            RunSpec(
                argv,
                mounts=[
                    Mount(home, HOME, writable=True),
                    Mount(data, DATA),
                    Mount(self._harness, HARNESS),
                    *self.context.extra_mounts,
                ],
                limits=self._limits(budget_s),
                env=env,
                cwd=HOME,
            )
        )

    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        """Import ``model.py`` in the harness and check ``Model`` and its four methods."""
        limit = self.protocol.prep_s
        outcome = self._run("check", home, public_inputs, limit, "check")
        what = f"the import check of {self.protocol.module}"
        if outcome.succeeded:
            return Preparation(what, limit, outcome)
        return Preparation(what, limit, outcome, self._problem(outcome, "the import", limit))

    def _problem(self, outcome: Outcome, part: str, budget_s: float) -> str:
        """Why a harness run failed, in the participant's words (or a platform fault)."""
        if outcome.exit_status == DATA_STATUS and outcome.clock_started_s is None:
            # before the clock only the harness ran: the data is the organizers' to fix; after
            # it the entry's code ran on the dataset and may exit with this status itself
            raise PlatformError(f"the harness could not load a dataset: {outcome.stderr[-500:]}")
        if outcome.timed_out and outcome.clock_started_s is None:
            raise PlatformError(
                f"the harness did not load the dataset within {duration(self.protocol.load_s)}"
            )
        if outcome.timed_out:
            return f"{part} ran out of its budget of {duration(budget_s)} and was stopped"
        if outcome.exit_status == PROBLEM_STATUS:
            return f"{part}: {harness_problem(outcome) or 'failed'}"
        return f"{part} {outcome.describe()}"

    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """Train and save, then load and predict in a fresh process; store the prediction."""
        dataset = inputs / case
        budgets = read_budgets(dataset, self.protocol)
        self._clear(home, case)
        try:
            train_s = min(budgets.train_s, wall_s)
            trained = self._run("train", home, dataset, train_s, case)
            if not trained.succeeded:
                problem = self._problem(trained, "training (train + save)", train_s)
                return CaseRun(case, combined(trained, None), None, problem)
            predict_s = min(budgets.predict_s, wall_s)
            predicted = self._run("predict", home, dataset, predict_s, case)
            outcome = combined(trained, predicted)
            if not predicted.succeeded:
                problem = self._problem(predicted, "prediction (load + predict)", predict_s)
                return CaseRun(case, outcome, None, problem)
            return self._collect(home, dataset, case, outcome, store)
        finally:
            self._clear(home, case)

    def _collect(
        self, home: Path, dataset: Path, case: str, outcome: Outcome, store: Path
    ) -> CaseRun:
        """Take the prediction out of the home and check it (format, one row per test row)."""
        name = f"{state_folder(case)}/prediction"
        refused = collect_output_to(home, name, store, max_bytes=self.context.limits.output_bytes)
        if refused is not None:
            return CaseRun(case, outcome, None, refused)
        problem = self.validate_output(store)
        if problem is None:
            rows, expected = _data_rows(store), test_rows(dataset)
            if rows != expected:
                problem = f"{rows} predictions for {expected} test rows"
        if problem is not None:
            store.unlink()
            return CaseRun(case, outcome, None, f"the prediction: {problem}")
        return CaseRun(case, outcome, store)

    @staticmethod
    def _clear(home: Path, case: str) -> None:
        """Remove a dataset's saved model and prediction from the home (links not followed)."""
        path = home / state_folder(case)
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            remove_tree_quietly(path)


def _data_rows(csv: Path) -> int:
    """Non-empty lines after the header of a stored prediction."""
    with csv.open("rb") as handle:
        return max(sum(1 for line in handle if line.strip()) - 1, 0)
