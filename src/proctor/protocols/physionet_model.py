"""The ``physionet_model`` protocol (PhysioNet/CinC 2020–2026): the challenge runs ``team_code.py``.

An entry is laid out as the organizers' ``python-example-20xx`` repositories: the team edits
``team_code.py`` (``train_model(data_folder, model_folder, verbose)``, ``load_model(model_folder,
verbose)``, ``run_model(model, record, data_folder, verbose)``) and ships a ``Dockerfile`` and a
``requirements.txt`` beside it. The challenge's own scripts (``train_model.py``,
``run_model.py``, ``helper_code.py`` and any file beside them, from the ``scripts`` folder)
replace the entry's copies in its home before anything runs; the entry's own are never run.
The home is ``/challenge`` (the example Dockerfile's ``WORKDIR``), the working folder of every
run; a data folder is shown read-only at ``/data``.

- ``prep``: the build (the entry's wheels from ``requirements.txt``, where the environment
  allows them, installed by the pipeline before this driver's preparation), then training:
  ``python3 train_model.py -d /data -m model -v`` on the public ``training`` folder within
  ``train_s``. Afterwards the home is put back as uploaded (with the challenge's scripts) and
  only ``model/`` is kept: the model is the only state carried forward.
- ``quiz``: ``run_model.py`` on each other public data folder (none: nothing to check).
- ``exam``: ``python3 run_model.py -d /data -m model -o OUT -v -f`` on each hidden data folder,
  ``model/`` read-only. With ``-f`` (``allow_failures``) a record on which ``run_model`` fails
  gets an empty output (NaN) in the table, not a failed exam.
- ``score``: the table ``run_model.py`` wrote (``demographics.csv`` with the model's columns) is
  the case's output, scored by the challenge's scoring program (its ``evaluate_model.py``).

Where the challenge allows entry images, the entry's ``Dockerfile`` is built at prep (its
``FROM`` one of ``environment.entry_images.bases``) and every stage runs in that image. Where it
does not, the ``Dockerfile`` is kept as a file, unbuilt: the entry runs in the challenge's
declared environment, and prep's message says so.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import replace
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from proctor import trees
from proctor.entries import Manifest
from proctor.errors import PlatformError
from proctor.protocols.base import CaseRun, DriverWithoutAnswers, Preparation, run_limits
from proctor.protocols.outputs import check_record_template, collect_output_to
from proctor.protocols.scripts import duration
from proctor.sandbox.base import Mount, Outcome, RunSpec
from proctor.spec.protocols import LocatedError, ProtocolSettings

TRAIN_SCRIPT = "train_model.py"
RUN_SCRIPT = "run_model.py"
REQUIRED_SCRIPTS = (TRAIN_SCRIPT, RUN_SCRIPT)
HOME = "/challenge"
DATA = "/data"
MODEL = "model"
PYTHON = "python3"
SANDBOX_TMP = "/tmp"  # noqa: S108 - the sandbox's own private tmpfs
KEPT_MODEL = ".proctor-trained-model"


class PhysioNetModelProtocol(ProtocolSettings):
    """PhysioNet 2020–2026: the challenge's own scripts drive the entry's ``team_code.py``.

    ``scripts``: the challenge's folder of scripts that replace the entry's (``train_model.py``,
    ``run_model.py``, ``helper_code.py``, ...). ``module``: the file the team edits. A data
    folder (a case) is a sub-folder of a split holding ``table`` (``demographics.csv``);
    ``training`` names the public one the model is trained on. ``train_s`` bounds training (a
    long wall limit: PhysioNet gives 72 hours), ``case_s`` one run of ``run_model.py`` on a data
    folder, ``stage_s`` a whole quiz or exam. ``allow_failures``: run with ``-f``, so a record
    that fails gets no output rather than failing the run.
    """

    kind: Literal["physionet_model"]
    scripts: Path
    module: str = "team_code.py"
    training: str = "training"
    table: str = "demographics.csv"
    output: str = "{record}.csv"
    allow_failures: bool = True
    train_s: float = Field(default=72 * 3600.0, gt=0, strict=True)
    case_s: float = Field(default=24 * 3600.0, gt=0, strict=True)
    stage_s: float = Field(default=48 * 3600.0, gt=0, strict=True)

    @field_validator("module", "table", "training")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"{name!r} must be a plain name at the top of its folder")
        return name

    @field_validator("output")
    @classmethod
    def _one_file_per_case(cls, template: str) -> str:
        return check_record_template(template)

    def resolved(self, root: Path) -> PhysioNetModelProtocol:
        """The block with ``scripts`` absolute: a folder of the challenge holding both scripts."""
        folder = (root / self.scripts).resolve()
        if not folder.is_relative_to(root.resolve()) or not folder.is_dir():
            raise LocatedError(f"{folder} is not a folder inside the challenge folder", "scripts")
        missing = [name for name in REQUIRED_SCRIPTS if not (folder / name).is_file()]
        if missing:
            raise LocatedError(f"{folder} has no {', '.join(missing)}: add it", "scripts")
        return self.model_copy(update={"scripts": folder})


def _settings(settings: ProtocolSettings) -> PhysioNetModelProtocol:
    if not isinstance(settings, PhysioNetModelProtocol):
        raise TypeError(f"the physionet_model driver cannot run a {settings.kind!r} protocol")
    return settings


def list_data_folders(folder: Path, table: str) -> list[str]:
    """The data folders of a split (sub-folders holding the ``table`` file), sorted."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and (p / table).is_file())


def outputs_folder(case: str) -> str:
    """The home's folder (relative) where ``run_model.py`` writes one data folder's table."""
    return f".proctor-outputs-{case}"


def _remove(path: Path) -> None:
    """Remove whatever ``path`` is (a link as a link, never followed)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        trees.remove_tree(path)
    elif path.exists():
        path.unlink()


def _real_folder(path: Path) -> bool:
    """True when ``path`` is a folder itself (not a link to one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


class PhysioNetModelDriver(DriverWithoutAnswers):
    """Trains the entry once at prep, then runs ``run_model.py`` on each data folder."""

    kind = "physionet_model"
    ships_dockerfile = True
    settings_model = PhysioNetModelProtocol
    summary = "PhysioNet 2020-2026: the challenge's train_model.py and run_model.py run team_code"
    case_noun = "data folder"

    @property
    def protocol(self) -> PhysioNetModelProtocol:
        """The challenge's physionet_model settings."""
        return _settings(self.context.settings)

    @classmethod
    def support(cls, settings: ProtocolSettings, task: str) -> tuple[Path, ...]:
        """The challenge's scripts folder, copied where the slot may read it."""
        return (_settings(settings).scripts,)

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The data folders of ``folder`` (one sub-folder each, with ``demographics.csv``)."""
        return list_data_folders(folder, _settings(settings).table)

    @classmethod
    def quiz_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The public data folders but the training one (it is what the model learnt from)."""
        training = _settings(settings).training
        return [case for case in cls.list_cases(settings, folder) if case != training]

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The stored table of each data folder, e.g. ``{record}.csv``."""
        return _settings(settings).output

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """The entry must hold the file the team edits (``team_code.py``)."""
        return Manifest(required=(_settings(settings).module,))

    @property
    def case_s(self) -> float:
        """Seconds one run of ``run_model.py`` on a data folder may take."""
        return self.protocol.case_s

    @property
    def stage_s(self) -> float:
        """Seconds a whole quiz or exam may take."""
        return self.protocol.stage_s

    @property
    def _scripts(self) -> Path:
        """The run folder's copy of the challenge's scripts (never the challenge's own)."""
        if self.context.support is None:
            raise PlatformError("the physionet_model driver was given no copy of its scripts")
        return self.context.support / self.protocol.scripts.name

    def _overlay_scripts(self, home: Path) -> None:
        """Put the challenge's scripts in the home, in place of whatever the entry named so."""
        for script in sorted(self._scripts.iterdir()):
            if not script.is_file() or script.is_symlink():
                continue
            target = home / script.name
            _remove(target)
            shutil.copyfile(script, target, follow_symlinks=False)
            target.chmod(0o644)

    def _run(self, argv: list[str], mounts: list[Mount], wall_s: float) -> Outcome:
        """One run of a challenge script in the home, with the environment's variables."""
        own = {"HOME": HOME, "TMPDIR": SANDBOX_TMP, "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
        env = {**self.context.variables, **own}
        limits = run_limits(self.context.limits, self.context.parallel_runs, wall_s)
        mounts = [*mounts, *self.context.extra_mounts]
        return self.context.session.run(
            RunSpec(argv, mounts=mounts, limits=limits, env=env, cwd=HOME)
        )

    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        """Train on the public training folder; keep only ``model/`` in the home afterwards."""
        protocol = self.protocol
        what = f"training ({TRAIN_SCRIPT} calling train_model of {protocol.module})"
        training = public_inputs / protocol.training
        if not (training / protocol.table).is_file():
            raise PlatformError(f"the public inputs have no {protocol.training}/{protocol.table}")
        self._overlay_scripts(home)
        _remove(home / MODEL)
        argv = [PYTHON, TRAIN_SCRIPT, "-d", DATA, "-m", MODEL, "-v"]
        mounts = [Mount(home, HOME, writable=True), Mount(training, DATA)]
        outcome = self._run(argv, mounts, protocol.train_s)
        if not outcome.succeeded:
            problem = None
            if outcome.timed_out:
                problem = f"{what}: ran out of its {duration(protocol.train_s)} and was stopped"
            return Preparation(what, protocol.train_s, outcome, problem)
        if not _real_folder(home / MODEL):
            problem = f"{what}: left no {MODEL}/ folder (train_model must save the model there)"
            # the run exited 0, but the stage fails: the entry's, with the run's usage and logs
            return Preparation(what, protocol.train_s, replace(outcome, exit_status=1), problem)
        self._keep_only_model(home)
        return Preparation(what, protocol.train_s, outcome)

    def _keep_only_model(self, home: Path) -> None:
        """Put the home back as uploaded, with the challenge's scripts and the trained model."""
        entry = self.context.entry
        if entry is None:
            raise PlatformError("the physionet_model driver was given no copy of the entry")
        kept = home / KEPT_MODEL
        _remove(kept)
        (home / MODEL).rename(kept)
        for child in list(home.iterdir()):
            if child.name != KEPT_MODEL:
                _remove(child)
        trees.copy_tree(entry, home, top_meta=False)
        _remove(home / MODEL)
        kept.rename(home / MODEL)
        self._overlay_scripts(home)
        self.context.session.give(home)  # as the pipeline gives a home it filled

    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """Run ``run_model.py`` on one data folder, the model read-only; store its table."""
        protocol = self.protocol
        out = outputs_folder(case)
        _remove(home / out)
        try:
            if not _real_folder(home / MODEL):
                raise PlatformError(f"the home has no trained {MODEL}/ folder")
            argv = [PYTHON, RUN_SCRIPT, "-d", DATA, "-m", MODEL, "-o", f"{HOME}/{out}", "-v"]
            if protocol.allow_failures:
                argv.append("-f")
            mounts = [
                Mount(home, HOME, writable=True),
                Mount(home / MODEL, f"{HOME}/{MODEL}"),
                Mount(inputs / case, DATA),
            ]
            outcome = self._run(argv, mounts, wall_s)
            if not outcome.succeeded:
                problem = (
                    f"{RUN_SCRIPT} ran out of its {duration(wall_s)} and was stopped"
                    if outcome.timed_out
                    else f"{RUN_SCRIPT} {outcome.describe()}"
                )
                return CaseRun(case, outcome, None, problem)
            name = f"{out}/{protocol.table}"
            limit = self.context.limits.output_bytes
            refused = collect_output_to(home, name, store, max_bytes=limit)
            if refused is not None:
                return CaseRun(case, outcome, None, refused)
            invalid = self.validate_output(store)
            if invalid is not None:
                store.unlink()
                return CaseRun(case, outcome, None, f"the output table: {invalid}")
            return CaseRun(case, outcome, store)
        finally:
            _remove(home / out)
